#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=03:00:00
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=4
#SBATCH --mem=16G
mkdir -p $SLURM_TMPDIR/data
tar -xf ~/projects/def-prof/me/imagenet_subset.tar -C $SLURM_TMPDIR/data
mkdir -p $SLURM_TMPDIR/results
python train.py --data $SLURM_TMPDIR/data --out $SLURM_TMPDIR/results
cp -r $SLURM_TMPDIR/results ~/scratch/results
