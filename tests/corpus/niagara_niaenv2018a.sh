#!/bin/bash
# cluster: niagara
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=40
#SBATCH --time=03:00:00
module load NiaEnv/2018a intel/2018.2 openmpi/3.1.0
mpirun ./model config.nml
