#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=04:00:00
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-task=4
#SBATCH --cpus-per-task=16
source ~/venvs/train/bin/activate
torchrun --standalone --nproc_per_node gpu train.py --epochs 10
