#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --mem=4G
#SBATCH --mail-type=FAIL
python analyse.py --input data.csv
