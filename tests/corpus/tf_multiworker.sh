#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --nodes=2
#SBATCH --gres=gpu:v100:2
#SBATCH --ntasks-per-node=2
#SBATCH --time=02:00:00
module load python/3.10 cuda
source ~/tf/bin/activate
export TF_CONFIG=$(python make_tf_config.py)
srun python tf_multiworker_mnist.py
