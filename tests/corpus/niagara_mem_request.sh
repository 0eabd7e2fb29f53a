#!/bin/bash
# cluster: niagara
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=40
#SBATCH --mem=180G
#SBATCH --time=02:00:00
module load NiaEnv/2019b intel/2019u4 intelmpi/2019u4
srun ./solver input.dat
