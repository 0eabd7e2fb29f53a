#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=03:00:00
#SBATCH --ntasks=16
#SBATCH --mem-per-cpu=2G
module use $HOME/modulefiles
ml StdEnv/2020 gcc/9.3.0 openmpi/4.0.3
ml mytool/1.0
ml list
srun mytool --input big.in
