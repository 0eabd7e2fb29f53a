#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=3:00:00
#SBATCH --ntasks=96
#SBATCH --mem-per-cpu=2G
module load openmpi
srun ./solver input.dat
