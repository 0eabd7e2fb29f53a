#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=03:00:00
#SBATCH --cpus-per-task=4
#SBATCH --mem=16G
cd experiments/run1
tar -xzf images.tar.gz -C $SLURM_TMPDIR
cp config.yaml $SLURM_TMPDIR/
cd "$(cat ../current)"
cp extra.csv $SLURM_TMPDIR/
./classify --data $SLURM_TMPDIR/images --config $SLURM_TMPDIR/config.yaml
