#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=03:00:00
#SBATCH --mem=8G
module load python/3.7.4
rm -rf $HOME/tf-env
virtualenv --no-download $HOME/tf-env
source $HOME/tf-env/bin/activate
pip install --no-index tensorflow_gpu==2.2.0 pandas
python fit.py
