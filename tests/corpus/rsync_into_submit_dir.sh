#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --cpus-per-task=4
cd $SLURM_TMPDIR
cmake $SLURM_SUBMIT_DIR/src -B build
make -C build -j 4
rsync -a $SLURM_TMPDIR/build $SLURM_SUBMIT_DIR
