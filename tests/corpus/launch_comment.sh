#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
module load python/3.10
python train.py --epochs 3   # the run
