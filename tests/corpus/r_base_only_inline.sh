#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof --time=1:00:00 --mem=4G
module load StdEnv/2020 r/4.1.2
Rscript -e 'x <- rexp(100); saveRDS(x, "x.rds")'
