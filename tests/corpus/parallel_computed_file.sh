#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --cpus-per-task=8
#SBATCH --array=1-3
module load gnu-parallel
parallel -j 8 ./score {} :::: batch_${SLURM_ARRAY_TASK_ID}.txt
