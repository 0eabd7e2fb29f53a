#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
module load python/3.8
cd $SLURM_TMPDIR
virtualenv --no-download env
source env/bin/activate
pip install --no-index numpy
cd $SLURM_SUBMIT_DIR
python train.py
