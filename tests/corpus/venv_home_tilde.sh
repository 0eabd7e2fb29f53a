#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=1:00:00
#SBATCH --cpus-per-task=4
#SBATCH --mem-per-cpu=2G
module load python/3.10
source ~/envs/analysis/bin/activate
python fit.py --threads $SLURM_CPUS_PER_TASK
