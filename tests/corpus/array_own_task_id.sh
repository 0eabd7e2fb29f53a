#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=1:00:00
#SBATCH --array=0-3
for i in 0 1 2 3; do
    let task_id=$i
    if [ "$task_id" -eq "$SLURM_ARRAY_TASK_ID" ]; then
        python run.py --case $i
    fi
done
