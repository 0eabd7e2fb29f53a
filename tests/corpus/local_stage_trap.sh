#!/bin/bash
# cluster: local
#SBATCH --account=def-test
#SBATCH --time=00:05:00
#SBATCH --mem=500M
#SBATCH --signal=B:USR1@60
copy_back() {
    cp -r $SLURM_TMPDIR/results results_back
}
trap copy_back USR1
mkdir -p $SLURM_TMPDIR/data
tar -xf inputs.tar -C $SLURM_TMPDIR/data
mkdir -p $SLURM_TMPDIR/results
python show.py --out $SLURM_TMPDIR/results/seen --data $SLURM_TMPDIR/data
cp -r $SLURM_TMPDIR/results results_back
