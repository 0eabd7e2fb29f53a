#!/bin/bash
# cluster: local
#SBATCH --account=def-test
#SBATCH --array=1-3
#SBATCH --time=00:05:00
#SBATCH --mem=300M
#SBATCH --output=logs/%x_%A_%a.out
FILE=$(sed -n "${SLURM_ARRAY_TASK_ID}p" list.txt)
python show.py --out task-$SLURM_ARRAY_TASK_ID --file "$FILE"
