#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --nodes=2
#SBATCH --gres=gpu:v100l:4
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=8
#SBATCH --mem=64G
#SBATCH --time=0-12:00
module load python/3.10
source ~/envs/torch/bin/activate
export MASTER_ADDR=$(hostname)
export NCCL_BLOCKING_WAIT=1
srun python train.py --init_method tcp://$MASTER_ADDR:3456 --world_size $((SLURM_NTASKS_PER_NODE * SLURM_JOB_NUM_NODES)) --batch_size 256
