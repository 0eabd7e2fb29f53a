#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=03:00:00
#SBATCH --cpus-per-task=8
module load gnu-parallel
parallel -j $SLURM_CPUS_PER_TASK ./train --lr {1} --depth {2} ::: 0.1 0.01 ::: 2 4 8
