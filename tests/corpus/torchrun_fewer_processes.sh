#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=06:00:00
#SBATCH --gres=gpu:v100l:4
#SBATCH --cpus-per-task=16
#SBATCH --mem=64G
module load python/3.10
source ~/torch/bin/activate
python -m torch.distributed.launch --nproc_per_node=2 --use_env train.py --config big.yaml
