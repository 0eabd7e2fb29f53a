#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --cpus-per-task=16
#SBATCH --mem-per-cpu=1G
module load gnu-parallel
parallel -j 3 ./render_frame {} ::: 1 2 3 4 5 6
