#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --gres=gpu:1
#SBATCH --mem-per-cpu=8G
module load python/3.11
python train.py --epochs 10
