#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --gres=gpu:t4:1
VENV_DIR=~/pytorch_gpu
source $VENV_DIR/bin/activate
SRC=$(pwd)/code
pip install --no-index -r $SRC/requirements.txt
python -m pytest tests/
