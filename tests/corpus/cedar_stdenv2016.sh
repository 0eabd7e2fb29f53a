#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --ntasks=32
#SBATCH --mem-per-cpu=2G
module load StdEnv/2016.4 nixpkgs/16.09 gcc/5.4.0 openmpi/2.1.1
srun ./solver input.dat
