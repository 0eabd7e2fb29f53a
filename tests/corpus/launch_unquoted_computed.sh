#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --mem=2G
#SBATCH --array=1-4
SAMPLE=$(sed -n "${SLURM_ARRAY_TASK_ID}p" samples.txt)
OPTS="--fast --quiet"
OUT=results
python score.py $SAMPLE $OPTS --out $OUT
