#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=1:00:00
#SBATCH --gres=gpu:4
#SBATCH --mem=0
export MASTER_ADDR=127.0.0.1
CUDA_VISIBLE_DEVICES=0 python train.py --steps 100
