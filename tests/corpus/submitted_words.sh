#!/bin/bash
# cluster: narval
#SBATCH --account=def-prof
#SBATCH --time=1:00:00
# scheme and algo come from `sbatch --export=ALL,scheme="--beam 8",algo=astar job.sh`
python main.py ${scheme} -a $algo --data $DATA/train
