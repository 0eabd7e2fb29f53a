#!/bin/bash
# cluster: niagara
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=40
#SBATCH --time=01:00:00
module load NiaEnv/2019b gnu-parallel
parallel -j $SLURM_NTASKS_PER_NODE ./process {} ::: inputs/*.dat
