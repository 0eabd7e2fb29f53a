#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=1:00:00
echo "Running in $PWD on $HOSTNAME"
python run.py
echo "done with exit code $?"
