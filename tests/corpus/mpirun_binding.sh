#!/bin/bash
# cluster: niagara
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=40
#SBATCH --time=1:00:00
#SBATCH --job-name=lammps
module load NiaEnv/2019b intel/2019u4 intelmpi/2019u4 lammps/29Mar2019
mpirun -np 80 --map-by ppr:40:node --bind-to core -genv I_MPI_DEBUG 4 lmp -in in.lj
