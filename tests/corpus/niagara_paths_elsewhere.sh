#!/bin/bash
# cluster: cedar
#SBATCH --account=def-x --time=1:00:00 --gpus-per-node=1
#SBATCH --output=/scratch/g/grp/me/logs/out_%j.txt
cd /scratch/g/grp/me
python train.py --data /gpfs/fs0/project/g/grp/me/data
