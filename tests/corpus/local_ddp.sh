#!/bin/bash
# cluster: local
#SBATCH --account=def-test
#SBATCH --nodes=2
#SBATCH --gres=gpu:p100:1
#SBATCH --ntasks-per-node=1
#SBATCH --mem=500M
#SBATCH --time=00:05:00
export MASTER_ADDR=$(hostname)
srun python show.py --out ddp --init_method tcp://$MASTER_ADDR:3456 --world_size $((SLURM_NTASKS_PER_NODE * SLURM_JOB_NUM_NODES))
