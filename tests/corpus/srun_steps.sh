#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --ntasks=32
#SBATCH --mem-per-cpu=1G
#SBATCH --time=05:00:00
srun -n 1 ./prepare mesh.in
srun ./solve mesh.out
srun -n 1 ./postprocess results/
