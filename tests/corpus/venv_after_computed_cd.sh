#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=03:00:00
#SBATCH --mem=4G
WORK=$(cat workdir.txt)
cd $WORK
source env/bin/activate
pip install tqdm
python run_sim.py
