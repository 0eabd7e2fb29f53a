#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
save() { run=$(ls -d $SLURM_TMPDIR/run*); cp -r $run $HOME/results/; }
trap save EXIT
python train.py --out $SLURM_TMPDIR/run1
