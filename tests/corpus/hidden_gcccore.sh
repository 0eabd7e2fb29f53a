#!/bin/bash
# cluster: niagara
#SBATCH --account=def-prof
#SBATCH --time=1:00:00
#SBATCH --nodes=1
#SBATCH --cpus-per-task=40
module load NiaEnv CCEnv StdEnv gcccore/.8.3.0 gcc/7.3.0
./app
