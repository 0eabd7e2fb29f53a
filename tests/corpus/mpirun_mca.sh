#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --nodes=1
#SBATCH --ntasks=4
#SBATCH --gres=gpu:4
#SBATCH --time=04:00:00
module load openmpi/4.0.3 cuda/11.0
mpirun -np 4 -x NCCL_DEBUG=INFO -mca pml ob1 -mca btl ^openib python t.py
