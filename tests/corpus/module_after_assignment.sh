#!/bin/bash
# cluster: niagara
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=40
#SBATCH --time=01:00:00
THREADS=40
export RUN=fast
module load NiaEnv/2019b gcc/8.3.0
./solver -t $THREADS
