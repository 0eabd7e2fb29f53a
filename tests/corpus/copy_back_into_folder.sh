#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=03:00:00
#SBATCH --cpus-per-task=8
mkdir -p $SLURM_TMPDIR/frames
./render --threads 8 --out $SLURM_TMPDIR/frames --log $SLURM_TMPDIR/render.log
cp -r $SLURM_TMPDIR/frames $HOME/projects/def-prof/renders/
cp $SLURM_TMPDIR/render.log ~/logs/
