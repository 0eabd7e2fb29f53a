#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --cpus-per-task=2
#SBATCH --mem=8G
module load StdEnv/2020 java/1.8.0_121 nextflow/22.04.3
nextflow run main.nf -resume
