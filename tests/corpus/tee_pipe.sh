#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --gres=gpu:p100:1
#SBATCH --cpus-per-task=6
module load python/3.10
python train.py --lr 0.01 2>&1 | tee train.log
