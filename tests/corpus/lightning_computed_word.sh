#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=03:00:00
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=2
#SBATCH --gres=gpu:2
GPUS=$(nvidia-smi -L | wc -l)
srun python train_lightning.py --devices=${GPUS}
