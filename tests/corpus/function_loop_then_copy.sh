#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --cpus-per-task=4
#SBATCH --mem=8G
module load apptainer/1.1
run() { apptainer exec ~/images/tool.sif run "$1" > "$SLURM_TMPDIR/out_$1"; }
for x in a b; do run $x; done
cp $SLURM_TMPDIR/out_* ~/scratch/
