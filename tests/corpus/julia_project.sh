#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof --time=12:00:00
#SBATCH --cpus-per-task=8 --mem=16G
module load StdEnv/2020 julia/1.5.2
julia --project=$HOME/model -t 8 simulate.jl
