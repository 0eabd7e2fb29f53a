#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --cpus-per-task=4
#SBATCH --mem=8G
module load StdEnv/2020 gurobi/9.1.0
export LD_PRELOAD=/cvmfs/soft.computecanada.ca/easybuild/software/2020/avx2/Compiler/gcc9/openmpi/4.0.3/lib/libmpi.so
cp /cvmfs/restricted.computecanada.ca/easybuild/software/2020/Core/gurobi/9.1.0/setup.py .
python solve.py
