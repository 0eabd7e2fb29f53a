#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --mem=4G
module load python/3.10
OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1 python train.py --epochs 10
