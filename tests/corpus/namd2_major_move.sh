#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=03:00:00
#SBATCH --cpus-per-task=8
#SBATCH --mem-per-cpu=1G
module load StdEnv/2020 intel/2020.1.217 namd-multicore/2.14
namd2 +p$SLURM_CPUS_PER_TASK eq.conf > eq.log
