#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=06:00:00
#SBATCH --cpus-per-task=16
#SBATCH --mem=32G
module load gnu-parallel
parallel --jobs slots.txt ./evaluate --case {} ::: small medium large huge
