#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=12:00:00
#SBATCH --signal=B:USR1@600
trap 'cp -r $SLURM_TMPDIR/ckpt /home/me/ckpt; exit 0' USR1
python train.py --ckpt $SLURM_TMPDIR/ckpt
