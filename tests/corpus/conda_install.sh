#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
conda install -y numpy scipy
conda activate base
python run.py
