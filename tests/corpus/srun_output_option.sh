#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --ntasks=4
srun -o run_%t.out ./app --steps 10
