#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=12:00:00
#SBATCH --nodes=3
#SBATCH --gpus-per-node=v100l:2
#SBATCH --ntasks-per-gpu=1
#SBATCH --cpus-per-task=6
srun python federated.py --rounds 50
