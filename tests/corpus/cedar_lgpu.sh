#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=12:00:00
#SBATCH --nodes=1
#SBATCH --gres=gpu:lgpu:4
#SBATCH --cpus-per-task=24
#SBATCH --mem=0
python train.py --gpus 4
