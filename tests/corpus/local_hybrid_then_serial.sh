#!/bin/bash
# cluster: local
#SBATCH --account=def-test
#SBATCH --time=00:05:00
#SBATCH --ntasks=2
#SBATCH --cpus-per-task=2
#SBATCH --mem-per-cpu=100M
srun python -c 'import os; print(len(os.sched_getaffinity(0)))' > cores.log
sort -u cores.log > cores.txt
