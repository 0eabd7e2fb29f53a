#!/bin/bash
# cluster: narval
#SBATCH --account=def-prof
#SBATCH --time=04:00:00
#SBATCH --gpus-per-node=a100:1
#SBATCH --cpus-per-task=8
#SBATCH --mem=32G
module load StdEnv/2023 python/3.11
source ~/wds/bin/activate
cp ~/scratch/shards/train-000.tar $SLURM_TMPDIR/
python train.py --shards $SLURM_TMPDIR/train-000.tar
