#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=40
#SBATCH --mem=0
#SBATCH --time=6:00:00
module load StdEnv/2023 openmpi/4.1.5
srun ./solver input.dat
