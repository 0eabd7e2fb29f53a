#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=03:00:00
#SBATCH --mem=4G
cd $HOME/projects/sim
source .venv/bin/activate
python run_sim.py
