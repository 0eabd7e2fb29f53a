#!/bin/bash
# cluster: narval
#SBATCH --account=def-prof
#SBATCH --time=1:00:00
deactivate
module load python/3.11
source $HOME/envs/proj/bin/activate
python train.py
