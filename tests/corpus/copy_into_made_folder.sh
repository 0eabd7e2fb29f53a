#!/bin/bash
# cluster: cedar
#SBATCH --account=def-x --time=3:00:00 --mem=16G --gres=gpu:v100l:1
set -e
mkdir $SLURM_TMPDIR/inputs
unzip -q ~/projects/def-x/me/images.zip -d $SLURM_TMPDIR/inputs
cp ~/projects/def-x/me/labels.json $SLURM_TMPDIR/inputs/
cp ~/projects/def-x/me/config.yaml $SLURM_TMPDIR/inputs
python train.py --data $SLURM_TMPDIR/inputs
