#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --nodes=3
#SBATCH --ntasks-per-node=8
hosts=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))
srun --nodes=1 --ntasks=1 -w "${hosts[0]}" ray start --head --port=6379 --block &
sleep 10
for host in "${hosts[@]:1}"; do
    srun --nodes=1 --ntasks=1 -w "$host" ray start --address="${hosts[0]}:6379" --block &
done
python drive.py --workers $SLURM_NTASKS
