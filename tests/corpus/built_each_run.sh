#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --cpus-per-task=8
module load gcc/9.3.0
make clean
make -j 8
./rotor --blades 2
