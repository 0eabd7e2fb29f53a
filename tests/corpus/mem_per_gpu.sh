#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=08:00:00
#SBATCH --gpus-per-node=t4:2
#SBATCH --mem-per-gpu=24G
#SBATCH --ntasks-per-node=2
#SBATCH --cpus-per-task=4
module load python/3.10
source ~/venv/bin/activate
srun python train.py
