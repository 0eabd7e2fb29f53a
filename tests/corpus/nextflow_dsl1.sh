#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=12:00:00
#SBATCH --cpus-per-task=4
#SBATCH --mem=8G
module load StdEnv/2020 java/13.0.2 nextflow/21.10.3
NXF_DEFAULT_DSL=1 nextflow run align.nf -resume --reads 'data/*.fq'
