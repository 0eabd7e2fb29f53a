#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --gres=gpu:1
#SBATCH --mem=16G
module load python/3.10
virtualenv --no-download $SLURM_TMPDIR/env && source $SLURM_TMPDIR/env/bin/activate
cp ~/proj/requirements.txt $SLURM_TMPDIR/req.txt
pip install --no-index -r $SLURM_TMPDIR/req.txt
python train.py
