#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --mem=4G
module load gcc/9.3.0
#SBATCH --mem=32G
#SBATCH --gres=gpu:1
./solver input.cfg
