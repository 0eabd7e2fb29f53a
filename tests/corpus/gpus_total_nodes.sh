#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --nodes=2
#SBATCH --gpus=8
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=10
#SBATCH --time=12:00:00
module load openmpi cuda
mpirun -np 8 --map-by ppr:4:node ./gpu_solver
