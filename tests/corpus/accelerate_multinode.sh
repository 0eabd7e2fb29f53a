#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:v100l:4
#SBATCH --cpus-per-task=24
#SBATCH --mem=0
#SBATCH --time=0-08:00
module load python/3.11
source ~/envs/hf/bin/activate
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=29500
srun accelerate launch --multi_gpu --num_processes $((SLURM_NNODES * 4)) --num_machines $SLURM_NNODES \
    --machine_rank $SLURM_NODEID --main_process_ip $MASTER_ADDR --main_process_port $MASTER_PORT \
    --mixed-precision=fp16 --dynamo_backend no --config_file accelerate.yaml \
    train.py --model bert-base-uncased --epochs 3
