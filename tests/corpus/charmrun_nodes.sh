#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=40
module load StdEnv/2020 namd-verbs-smp/2.14
charmrun ++p $SLURM_NTASKS namd3 in.namd
