#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=1:00:00
#SBATCH -o logs/run-%A_%a.out
python run.py --seed $SLURM_ARRAY_TASK_ID
