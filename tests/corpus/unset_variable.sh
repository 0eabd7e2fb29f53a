#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --cpus-per-task=4
mkdir results
python analyse.py --data $DATASET_DIR/train --out results
