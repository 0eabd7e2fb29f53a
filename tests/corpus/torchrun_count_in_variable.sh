#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=03:00:00
#SBATCH --gpus-per-node=v100l:4
#SBATCH --cpus-per-task=16
#SBATCH --mem=64G
N=2
module load StdEnv/2020 python/3.10
source ~/env/bin/activate
torchrun --standalone --nproc_per_node=$N train.py
