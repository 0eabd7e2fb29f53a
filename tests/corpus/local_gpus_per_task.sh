#!/bin/bash
# cluster: local
#SBATCH --account=def-test
#SBATCH --time=00:05:00
#SBATCH --nodes=1
#SBATCH --ntasks=2
#SBATCH --gpus-per-task=1
#SBATCH --mem=200M
srun python3 -c 'import os; print(os.environ["SLURM_PROCID"], os.environ["CUDA_VISIBLE_DEVICES"])' > gpus.log
