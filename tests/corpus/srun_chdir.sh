#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --ntasks=4
srun -D /scratch/me/case1 --comment sweep ./relax input.dat
