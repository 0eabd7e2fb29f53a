#!/bin/bash
# cluster: local
#SBATCH --account=def-test
#SBATCH --ntasks=2
#SBATCH --time=00:05:00
#SBATCH --mem=300M
set -x
python show.py --out first && python show.py --out second --cores $SLURM_NTASKS 2>&1 | tee chain.log
