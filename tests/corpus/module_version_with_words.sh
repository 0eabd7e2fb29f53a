#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
module load cudnn/cuda12-8.8.0
python train.py
