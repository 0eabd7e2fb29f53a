#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --gres=gpu:1
module load python/3.8
source ~/envs/fit/bin/activate
python3.8 fit.py --epochs 5
