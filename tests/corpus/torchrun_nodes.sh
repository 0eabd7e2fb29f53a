#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=12:00:00
#SBATCH --nodes=2
#SBATCH --gpus-per-node=4
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=40
#SBATCH --mem=0
module load python/3.10
source ~/envs/pt/bin/activate
export MASTER_ADDR=$(hostname)
srun torchrun --nnodes=2 --nproc_per_node=4 --rdzv_id=$SLURM_JOB_ID --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29500 train.py --epochs 90
