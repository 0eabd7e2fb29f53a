#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --cpus-per-task=8
module load StdEnv/2020 namd-multicore/2.14
namd2 +p$SLURM_CPUS_PER_TASK apoa1.namd
