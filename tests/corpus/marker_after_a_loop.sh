#!/bin/bash
# cluster: cedar
#SBATCH --account=def-someprof
#SBATCH --time=04:00:00
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
module load python/3.11
for chunk in chunks/part-*.csv; do
    python3 clean.py "$chunk"
done
echo "$SLURM_JOB_ID $(date +%s)" >> "$HOME/finished-jobs.txt"
