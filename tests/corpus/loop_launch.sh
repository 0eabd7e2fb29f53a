#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=06:00:00
#SBATCH --mem=2G
module load python/3.10
for f in data/*.csv; do
    python process.py "$f" --out results/
done
