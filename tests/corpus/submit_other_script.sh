#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=00:10:00
sbatch run_case.sh input_$1.dat
