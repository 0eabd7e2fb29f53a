#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=32
#SBATCH --mem-per-cpu=3G
#SBATCH --time=10:00:00
module load StdEnv/2020 gcc/9.3.0 openmpi/4.0.3
srun -n 64 --cpu-bind=cores --mpi=pmix -l ./md_run -c config.in
