#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=4:00:00
#SBATCH --cpus-per-task=8
#SBATCH --mem-per-cpu=2G
module load gnu-parallel
parallel -j 4 --joblog runs.log ./process --input {} ::: alpha beta gamma delta
