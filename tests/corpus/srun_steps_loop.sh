#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --ntasks=4
#SBATCH --mem-per-cpu=1G
#SBATCH --time=02:00:00
for i in 0 1 2 3; do
    srun -n 1 --exclusive ./task $i &
done
wait
