#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --array=0-9
#SBATCH --time=01:00:00
#SBATCH -o slurm-%A_%a.out
export MODE=fast
python run.py --seed $SLURM_ARRAY_TASK_ID --mode $MODE
