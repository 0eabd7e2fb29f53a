#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=24:00:00
#SBATCH --gres=gpu:v100:4
#SBATCH --cpus-per-task=32
#SBATCH --mem=180G
module load StdEnv/2023 python/3.11 cuda/12.2
source ~/ds-venv/bin/activate
export HF_HUB_OFFLINE=1
deepspeed --num_gpus=4 train.py --deepspeed ds_config.json
