#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --cpus-per-task=2
RUN=$1
SET="$RUN"_v2
tar xf ~/archives/$SET.tar -C $SLURM_TMPDIR/
python fit.py --input $SLURM_TMPDIR/$SET
