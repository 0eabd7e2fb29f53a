#!/bin/bash
# cluster: cedar
#SBATCH --account=def-x --time=2:00:00 --mem=8G --cpus-per-task=4
module load StdEnv/2020 singularity/3.8
singularity exec --cleanenv -B /project tools.sif ./analyse.sh data/ > singularity.log
