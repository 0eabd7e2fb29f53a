#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --cpus-per-task=32
export OMP_NUM_THREADS=8
./mc_solver --walkers 4
