#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --mem=4G
source $HOME/venv_py2.7/bin/activate
python analyse.py
