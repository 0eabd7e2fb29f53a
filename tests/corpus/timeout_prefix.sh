#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=24:00:00
#SBATCH --gres=gpu:t4:1
#SBATCH --cpus-per-task=4
module load python/3.10
source ~/envs/ml/bin/activate
timeout 23h python train.py --resume checkpoints/last.pt
