#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --ntasks=8
#SBATCH --mem-per-cpu=2G
#SBATCH --time=02:00:00
module load StdEnv/2020 gcc/9.3.0 openmpi/4.0.3
RANKS=4
srun -n $RANKS ./solve input.nml
