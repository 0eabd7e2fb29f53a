#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=00:30:00
#SBATCH --cpus-per-task=2
make -j 2 && ./simulate --steps 1000
