#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=12:00:00
#SBATCH --mem=4G
module load nextflow r/3.4.0
nextflow run pipeline.nf -profile cluster
