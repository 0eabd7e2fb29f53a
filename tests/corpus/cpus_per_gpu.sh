#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=12:00:00
#SBATCH --gpus-per-node=v100:2
#SBATCH --ntasks-per-node=2
#SBATCH --cpus-per-gpu=5
#SBATCH --mem-per-gpu=20G
module load StdEnv/2023 python/3.11
source ~/venv/bin/activate
srun python train.py
