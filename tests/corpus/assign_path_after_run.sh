#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --ntasks=8
srun ./app
DEST=/project/def-prof/out
mkdir -p $DEST
