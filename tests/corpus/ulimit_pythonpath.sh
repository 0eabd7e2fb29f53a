#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --nodes=1
#SBATCH --ntasks=40
#SBATCH --time=08:00:00
ulimit -s unlimited
export PYTHONPATH=$PYTHONPATH:~/lib/python
export OMP_NUM_THREADS=1
srun python -m mpi4py solver.py
