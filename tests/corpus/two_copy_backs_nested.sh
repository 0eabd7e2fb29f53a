#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
make
cp $SLURM_TMPDIR/bin/app $SLURM_SUBMIT_DIR/app
rsync -a $SLURM_TMPDIR/build/ $SLURM_SUBMIT_DIR
