#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --signal=B:USR1@120
save() { cp -r $SLURM_TMPDIR/out $HOME/results/; }; trap save USR1
python train.py --out $SLURM_TMPDIR/out
