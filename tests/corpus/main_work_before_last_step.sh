#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=06:00:00
#SBATCH --cpus-per-task=4
#SBATCH --mem=16G
module load python/3.10
source ~/venvs/rl/bin/activate
for seed in 1 2 3; do
  python train_agent.py --seed $seed
done
echo "training done"
for seed in 1 2 3; do
  python summarize.py --seed $seed
done
