#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --mem=8G
module load python/3.10
virtualenv --no-download $SLURM_TMPDIR/env
source $SLURM_TMPDIR/env/bin/activate
pip install --no-index numpy
pip install progress
python run.py
