#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --mem=4G
module load python/3.11
virtualenv --no-download $SLURM_TMPDIR/env
source $SLURM_TMPDIR/env/bin/activate
pip install --no-index torch==2.1.0
pip install --no-index -r requirements.txt
pip install --no-index -r extra-requirements.txt
python train.py
