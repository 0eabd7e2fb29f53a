#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --array=1-20%5
#SBATCH --time=00:30:00
#SBATCH --mem=1G
#SBATCH --output=logs/%x_%A_%a.out
FILE=$(sed -n "${SLURM_ARRAY_TASK_ID}p" list.txt)
python process.py "$FILE"
