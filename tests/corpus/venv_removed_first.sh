#!/bin/bash
# cluster: graham
#SBATCH --account=def-x --time=3:00:00 --mem=8G
module load python/3.10
rm -rf $HOME/fresh-env
virtualenv --no-download $HOME/fresh-env
source $HOME/fresh-env/bin/activate
pip install --no-index xarray netCDF4
python build_db.py
