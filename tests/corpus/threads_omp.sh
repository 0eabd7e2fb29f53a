#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --cpus-per-task=16
#SBATCH --mem=32G
#SBATCH --time=05:00:00
export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK
./openmp_solver -n 2048
