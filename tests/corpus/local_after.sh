#!/bin/bash
# cluster: local
#SBATCH --account=def-test
#SBATCH --time=00:05:00
#SBATCH --mem=300M
python show.py --out main
mv main.0.json renamed-$SLURM_JOB_ID.json
echo "done"
