#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
# ---- quick test
#SBATCH --time=00:15:00
#SBATCH --mem=2G
##SBATCH --cpus-per-task=40
# ---- full run (these win: sbatch takes the last)
#SBATCH --time=12:00:00
#SBATCH --mem=16G
./simulate params.txt
