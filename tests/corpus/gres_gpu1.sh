#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --gres=gpu:1
#SBATCH --time=0-01:00
module load cuda/11.4 python/3.9
python infer.py
