#!/bin/bash
# cluster: cedar
#SBATCH --account=def-x --time=2:00:00 --mem=16G --cpus-per-task=4 --gres=gpu:1
module load StdEnv/2020 python/3.8 gurobi/9.1.0
virtualenv --no-download $SLURM_TMPDIR/env
source $SLURM_TMPDIR/env/bin/activate
cd $SLURM_TMPDIR
mkdir gurobipy
cd gurobipy
python setup.py install
module load cuda/11.4 cudnn
cd $SLURM_TMPDIR
mkdir data
cp -r ~/projects/def-x/me/train.zarr data
cd run1
python ~/run.py --data-path $SLURM_TMPDIR/data
cd ..
