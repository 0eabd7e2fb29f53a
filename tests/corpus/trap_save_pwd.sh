#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --signal=B:USR1@300
RESULTS=$(pwd)/results
mkdir -p $RESULTS
finish() { cp -r $SLURM_TMPDIR/run $RESULTS; }
trap finish USR1
python simulate.py --out $SLURM_TMPDIR/run
