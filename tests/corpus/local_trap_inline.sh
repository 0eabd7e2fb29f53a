#!/bin/bash
# cluster: local
#SBATCH --account=def-test
#SBATCH --time=00:05:00
#SBATCH --mem=300M
#SBATCH --signal=B:USR1@30
trap 'cp -r $SLURM_TMPDIR/ckpt ckpt_back; exit 0' USR1
mkdir -p $SLURM_TMPDIR/ckpt
python show.py --out $SLURM_TMPDIR/ckpt/state
cp -r $SLURM_TMPDIR/ckpt ckpt_back
