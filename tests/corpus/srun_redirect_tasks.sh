#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --ntasks=8
#SBATCH --mem-per-cpu=2G
#SBATCH --time=03:00:00
module load StdEnv/2020 gcc/9.3.0 openmpi/4.0.3
srun ./app --steps 100 > app.log 2>&1
