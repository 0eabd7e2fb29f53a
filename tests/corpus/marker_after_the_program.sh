#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --cpus-per-task=2
#SBATCH --time=01:00:00
module load python/3.10
python3 fetch_chunk.py --chunk $SLURM_ARRAY_TASK_ID
echo "chunk done"
echo $SLURM_ARRAY_TASK_ID >> "$HOME/fetch/completed_chunks"
