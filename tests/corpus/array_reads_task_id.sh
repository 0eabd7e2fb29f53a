#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=2:00:00
#SBATCH --array=1-9:2%2
#SBATCH --mem-per-cpu=4G
module load python/3.10
python simulate.py --config config.yaml
