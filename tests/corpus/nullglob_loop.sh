#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --cpus-per-task=2
#SBATCH --time=01:00:00
module load python/3.10
shopt -s nullglob
for f in inputs/*.dat; do
  python3 analyse.py "$f"
done
