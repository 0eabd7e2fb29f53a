#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --mem=4G
python run.py --input "$1" --seed ${10} "$@"
