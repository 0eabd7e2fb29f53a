#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --cpus-per-task=8
#SBATCH --mem=16G
#SBATCH --time=10:00:00
module load matlab/2020a
matlab -nodisplay -singleCompThread -r "run('analysis.m'); exit"
