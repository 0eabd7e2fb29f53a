#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
save() { src=$SLURM_TMPDIR/out; cp -r $src $HOME/results/; }
trap save EXIT
python train.py --out $SLURM_TMPDIR/out
