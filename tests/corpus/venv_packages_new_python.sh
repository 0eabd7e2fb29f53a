#!/bin/bash
# cluster: graham
#SBATCH --account=def-x --time=2:00:00 --mem=8G --cpus-per-task=4
module load python/3.7.4
virtualenv --no-download $SLURM_TMPDIR/env
source $SLURM_TMPDIR/env/bin/activate
pip install --no-index tensorflow_gpu==2.2.0 pandas
python fit.py
