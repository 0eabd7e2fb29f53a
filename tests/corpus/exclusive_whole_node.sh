#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=48
#SBATCH --exclusive
#SBATCH --mem=0
#SBATCH --time=12:00:00
module load StdEnv/2020 intel/2020.1.217 intelmpi/2019.7.217
srun ./wrf.exe
