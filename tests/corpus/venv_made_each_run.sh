#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=03:00:00
#SBATCH --mem=8G
module load python/3.6
virtualenv --no-download ~/ENV
source ~/ENV/bin/activate
pip install --no-index numpy scipy
python main.py
