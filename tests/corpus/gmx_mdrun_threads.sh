#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --cpus-per-task=8
module load StdEnv/2020 gcc/9.3.0 gromacs/2021.4
gmx mdrun -ntomp $SLURM_CPUS_PER_TASK -deffnm md
