#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --nodes=1
#SBATCH --gres=gpu:4
#SBATCH --cpus-per-task=40
#SBATCH --mem=180G
#SBATCH --time=12:00:00
module load python/3.10
source ~/envs/pt/bin/activate
torchrun --standalone --nproc_per_node=4 train.py --batch-size 64
