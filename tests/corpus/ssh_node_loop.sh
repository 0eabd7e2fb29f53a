#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --nodes=2
#SBATCH --gres=gpu:v100l:4
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=24
module load StdEnv/2020 python/3.10
source ~/env/bin/activate
HOSTS=$(scontrol show hostnames $SLURM_JOB_NODELIST)
FIRST=$(echo $HOSTS | cut -d' ' -f1)
RANK=0
for NODE in $HOSTS; do
    ssh $NODE "cd $PWD && torchrun --nnodes=2 --node_rank=$RANK --nproc_per_node=4 --master_addr=$FIRST train.py" &
    RANK=$((RANK + 1))
done
wait
