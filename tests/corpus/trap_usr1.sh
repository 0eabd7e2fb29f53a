#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=24:00:00
#SBATCH --cpus-per-task=8
#SBATCH --mem=32G
#SBATCH --signal=B:USR1@300
copy_back() {
    cp -r $SLURM_TMPDIR/output ~/scratch/run42
}
trap copy_back USR1
cp input.dat $SLURM_TMPDIR/
cd $SLURM_TMPDIR
./long_simulation input.dat output
