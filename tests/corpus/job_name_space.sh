#!/bin/bash
# cluster: cedar
#SBATCH --job-name="my run #2"
#SBATCH --account=def-prof
#SBATCH --mem=4000
#SBATCH --time=2-00:00
./bin/solver --case 2
