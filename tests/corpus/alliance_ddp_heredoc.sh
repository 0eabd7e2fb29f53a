#!/bin/bash
# cluster: beluga
#SBATCH --nodes 1
#SBATCH --gres=gpu:2          # Request 2 GPU "generic resources"
#SBATCH --tasks-per-node=2    # Request 1 process per GPU
#SBATCH --mem=8G
#SBATCH --time=0-03:00
#SBATCH --output=%N-%j.out
module load python
srun -N $SLURM_NNODES -n $SLURM_NNODES bash << EOF
virtualenv --no-download $SLURM_TMPDIR/env
source $SLURM_TMPDIR/env/bin/activate
pip install torch torchvision --no-index
EOF
export TORCH_NCCL_ASYNC_HANDLING=1
source $SLURM_TMPDIR/env/bin/activate
srun python pytorch-ddp-test.py --init_method tcp://$MASTER_ADDR:3456 --world_size $SLURM_NTASKS --batch_size 256
