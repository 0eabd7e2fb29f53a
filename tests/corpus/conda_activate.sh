#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --mem=8G
module load miniconda3
source activate myenv
python run.py
