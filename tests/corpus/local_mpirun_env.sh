#!/bin/bash
# cluster: local
#SBATCH --account=def-test
#SBATCH --nodes=1
#SBATCH --ntasks=2
#SBATCH --mem-per-cpu=200M
#SBATCH --time=00:05:00
module load openmpi/4.1.5
mpirun -np 2 -x SHOW_FLAG=on -mca pml ob1 -mca btl ^openib python show.py --out rank
