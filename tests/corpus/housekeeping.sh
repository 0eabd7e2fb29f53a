#!/bin/bash
# cluster: niagara
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=40
#SBATCH --time=00:20:00
set -x
module purge
module load NiaEnv/2019b gcc/8.3.0 openmpi/4.0.1
cd $SLURM_SUBMIT_DIR
echo "Starting on $(hostname) at $(date)"
date
srun ./heat2d 4000
echo "Done"
date
