#!/bin/bash -l
# cluster: graham
#SBATCH --account=def-someprof
#SBATCH --time=01:00:00
#SBATCH --mem=4G
conda activate analysis
cd $SLURM_SUBMIT_DIR
rsync -a /project/def-someprof/shared/inputs/ inputs/; python run.py inputs > run.log
