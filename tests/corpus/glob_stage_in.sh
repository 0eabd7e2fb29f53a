#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --array=1-4
cp *.json $SLURM_TMPDIR
cp config.yaml $SLURM_TMPDIR
cd $SLURM_TMPDIR
python train.py --configs . --seed $SLURM_ARRAY_TASK_ID
