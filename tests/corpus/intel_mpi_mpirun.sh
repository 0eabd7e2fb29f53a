#!/bin/bash
# cluster: cedar
#SBATCH --account=def-someprof
#SBATCH --ntasks=64
#SBATCH --mem-per-cpu=2G
#SBATCH --time=12:00:00
module load StdEnv/2020 intel/2020.1.217 intelmpi/2019.7.217
mpirun -np 64 ./pw.x -nk 4 -inp scf.in
