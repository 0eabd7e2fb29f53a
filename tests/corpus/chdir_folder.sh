#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --mem=4G
#SBATCH --chdir=/project/def-prof/runs/case7
module load python/3.10
cp inputs.tar $SLURM_TMPDIR/
python postprocess.py > summary.txt
