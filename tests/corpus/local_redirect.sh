#!/bin/bash
# cluster: local
#SBATCH --account=def-test
#SBATCH --time=00:05:00
#SBATCH --mem=500M
#SBATCH --mail-type=FAIL
#SBATCH --output=%x-%j.out
module purge
module load python/3.11
cd $SLURM_SUBMIT_DIR
echo "started on $(hostname) at $(date)"
python show.py --out log --epochs 3 "two words" > log.txt 2>&1
