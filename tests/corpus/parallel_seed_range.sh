#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --cpus-per-task=8
module load gnu-parallel
parallel -j 50% ./simulate --seed {} ::: {1..6}
