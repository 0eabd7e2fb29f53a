#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --cpus-per-task=2
#SBATCH --time=01:00:00
SEEDS=(11 22 33)
OUT=results
for i in 0 1 2; do
    python train.py --seed ${SEEDS[$i]} --out $OUT/run$i
done
