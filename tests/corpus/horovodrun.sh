#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --nodes=1
#SBATCH --gres=gpu:t4:4
#SBATCH --ntasks-per-node=4
#SBATCH --time=03:00:00
module load python/3.9
source ~/hvd/bin/activate
horovodrun -np 4 -H localhost:4 python train.py --epochs 10
