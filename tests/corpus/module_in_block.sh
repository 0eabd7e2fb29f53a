#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
module load StdEnv/2020 gcc/9.3.0
if [ -n "$OLD_STACK" ]; then
    module load StdEnv/2018.3 gcc/7.3.0
fi
./app
