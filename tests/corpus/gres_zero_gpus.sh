#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --gres=gpu:k80:0
#SBATCH --cpus-per-task=4
python preprocess.py
