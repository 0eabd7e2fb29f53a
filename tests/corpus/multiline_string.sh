#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --mem=4G
python run.py --comment "first part
second part" --steps 10
