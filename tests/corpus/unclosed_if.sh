#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
module load python/3.10
if [ -f ckpt.pt ]; then
    python train.py --resume ckpt.pt
python train.py
