#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=03:00:00
#SBATCH --signal=B:USR1@120
save() { cp -r $SLURM_TMPDIR/$SLURM_JOB_NAME/. $HOME/logs/$SLURM_JOB_NAME/; }
trap save USR1 EXIT
python run.py --logdir $SLURM_TMPDIR/$SLURM_JOB_NAME
