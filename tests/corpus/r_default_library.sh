#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof --time=3:00:00 --mem=8G
module load StdEnv/2020 r/4.0.2
Rscript fit_models.R
