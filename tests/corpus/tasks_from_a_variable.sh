#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --ntasks=8
#SBATCH --mem-per-cpu=2G
#SBATCH --time=02:00:00
git clone --depth 1 https://example.org/lab/model.git
module load StdEnv/2020 gcc/9.3.0 openmpi/4.0.3
export WORLD_SIZE=8
srun -n ${WORLD_SIZE} ./model/bin/solve input.nml
