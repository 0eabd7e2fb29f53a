#!/bin/bash
# cluster: beluga
#SBATCH -A def-prof -t 30 --mem=2G
module load StdEnv/2020 python/3.8
source $HOME/venvs/py38/bin/activate
python -u main.py
