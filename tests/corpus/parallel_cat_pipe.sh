#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --cpus-per-task=4
module load gnu-parallel
cat samples.txt | parallel -j 0 ./align {}
