#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --cpus-per-task=8
module load gcc/9.3.0
./sim small.in > small.out
./sim large.in > large.out
