#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --cpus-per-task=2
#SBATCH --time=01:00:00
python a.py & python b.py & wait
