#!/bin/bash
# cluster: narval
#SBATCH --account=def-x --time=1:00:00 --mem=4G
module load StdEnv/2023 r/4.4.0
export R_LIBS=~/R/library
Rscript analyse.R
