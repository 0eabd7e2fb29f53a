#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --nodes=2
#SBATCH --gres=gpu:a100:4
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=32
#SBATCH --time=1-00:00
export MASTER_PORT=29500
export NCCL_DEBUG=WARN
srun python main.py --dist-url tcp://$(hostname):$MASTER_PORT --multiprocessing-distributed
