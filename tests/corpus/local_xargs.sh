#!/bin/bash
# cluster: local
#SBATCH --account=def-test
#SBATCH --nodes=1
#SBATCH --ntasks=2
#SBATCH --time=00:05:00
#SBATCH --mem-per-cpu=200M
printf 'a\nb\nc\n' | xargs -P $SLURM_NTASKS -I{} python show.py --out x-{}
