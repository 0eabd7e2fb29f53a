#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --cpus-per-task=4
#SBATCH --time=01:00:00
module load python/3.10
python prepare.py --out input.dat
module load gcc/9.3.0 solver/2.1
solver --in input.dat
