#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --cpus-per-task=2
#SBATCH --time=01:00:00
module load python/3.10
cd $SLURM_TMPDIR
virtualenv --no-download .venv
source .venv/bin/activate
pip install --no-index numpy scipy
tar -cf ~/venvs/analysis-venv.tar .venv
