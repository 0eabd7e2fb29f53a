#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=03:00:00
#SBATCH --ntasks-per-node=8
#SBATCH --mem-per-cpu=2G
module load nixpkgs/16.09 gcc/7.3.0 openmpi/3.1.2
module load hdf5-mpi petsc eigen swig
srun ./solver -ksp_type cg
