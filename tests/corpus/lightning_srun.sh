#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --nodes=1
#SBATCH --gres=gpu:p100:2
#SBATCH --ntasks-per-node=2
#SBATCH --time=03:00:00
module load python/3.10
source ~/envs/pl/bin/activate
srun python lightning_train.py --devices 2 --num_nodes 1
