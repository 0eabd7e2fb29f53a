#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=04:00:00
#SBATCH --mem=8G
#SBATCH --cpus-per-task=4
module load python/3.10
source $HOME/venvs/proj/bin/activate
pip install --no-index -r requirements.txt
cp -r dataset $SLURM_TMPDIR/
python analyse.py --data $SLURM_TMPDIR/dataset --jobs $SLURM_CPUS_PER_TASK
rm -rf $SLURM_TMPDIR/dataset
deactivate
mv results.csv results-$SLURM_JOB_ID.csv
