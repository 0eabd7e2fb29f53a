#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --mem=8G
[ -n "$VIRTUAL_ENV" ] || { echo "activate the venv before sbatch"; exit 1; }
python train.py
