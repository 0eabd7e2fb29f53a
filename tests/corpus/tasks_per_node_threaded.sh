#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=2:00:00
#SBATCH --ntasks=8
python simulate.py -n $SLURM_TASKS_PER_NODE --workers ${SLURM_NPROCS}
