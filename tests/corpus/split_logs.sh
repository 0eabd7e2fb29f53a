#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=2:00:00
#SBATCH --array=0-3
#SBATCH -J fold
#SBATCH -o logs/%x.o%A-%a
#SBATCH -e logs/%x.e%A-%a
python fold.py --part $SLURM_ARRAY_TASK_ID
