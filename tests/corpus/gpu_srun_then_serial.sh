#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=05:00:00
#SBATCH --nodes=1
#SBATCH --gres=gpu:v100:2
#SBATCH --ntasks-per-node=2
#SBATCH --cpus-per-task=4
#SBATCH --mem=32G
module load python/3.10
source ~/env/bin/activate
srun python train.py --epochs 10
python evaluate.py --ckpt best.pt > eval.txt
