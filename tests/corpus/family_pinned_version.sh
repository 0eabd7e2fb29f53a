#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --cpus-per-task=4
module load StdEnv/2020 perl/5.30.2 java/14.0.2 nextflow
nextflow run main.nf -with-trace
