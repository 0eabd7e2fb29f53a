#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=3:00:00
#SBATCH --nodes=1
#SBATCH --gres=gpu:v100l:2
#SBATCH --ntasks-per-node=2
module load python/3.10
source ~/envs/pl/bin/activate
srun python lightning_train.py --devices 2 > train.log
