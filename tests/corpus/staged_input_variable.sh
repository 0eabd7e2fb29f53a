#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
NAME=run1
tar -xf $HOME/data/$NAME.tar -C $SLURM_TMPDIR
./sim $SLURM_TMPDIR/$NAME
