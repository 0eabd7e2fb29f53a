#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --gres=gpu:v100:1
#SBATCH --cpus-per-task=3
#SBATCH --mem=20G
#SBATCH --time=04:00:00
module load apptainer
apptainer exec --nv -B /project/def-prof/data:/data pytorch.sif python /data/train.py --epochs 20
