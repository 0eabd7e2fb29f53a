#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=1:00:00
#SBATCH --cpus-per-task=4
mkdir results
cp config.yaml results/
./model --threads 4 --out results
