#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --cpus-per-task=4
#SBATCH --mem=16G
module load StdEnv/2020 gcc/9.3.0 cmake/3.17.3 rdkit/2021.03.3 metis/5.1.0
cmake -S . -B build && cmake --build build -j 4
./build/score_molecules input.sdf
