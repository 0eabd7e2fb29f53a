#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --nodes=1
#SBATCH --gpus-per-node=4
#SBATCH --time=08:00:00
#SBATCH --mem=0
nvidia-smi
python train_multi.py
