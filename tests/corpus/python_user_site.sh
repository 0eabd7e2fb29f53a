#!/bin/bash
# cluster: cedar
#SBATCH --account=def-x --time=4:00:00 --gres=gpu:v100l:1 --mem=16G
module load python/3.7
python train.py --epochs 10
