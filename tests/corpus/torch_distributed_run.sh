#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=6:00:00
#SBATCH --gres=gpu:v100l:4
#SBATCH --cpus-per-task=32
#SBATCH --mem=120G
module load python/3.10
source ~/envs/pt/bin/activate
python -m torch.distributed.run --nnodes=1 --nproc_per_node=4 --rdzv_backend=c10d --rdzv_endpoint=localhost:29400 train.py --lr 0.1
