#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=1:00:00
#SBATCH --gres=gpu:1
module load python/3.10
virtualenv --no-download $SLURM_TMPDIR/env
source $SLURM_TMPDIR/env/bin/activate
pip install --no-index numpy
pip install --no-index ~/wheels/tool-1.0-py3-none-any.whl
pip install --no-index ~/wheels/tool-1.1-py3-none-any.whl
python train.py
