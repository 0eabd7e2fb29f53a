#!/bin/bash
# cluster: local
#SBATCH --account=def-test
#SBATCH --time=00:05:00
#SBATCH --ntasks=2
#SBATCH --mem-per-cpu=200M
trap 'echo "trapped $?" > trap.txt' EXIT
srun python show.py --out part > ranks.log && touch DONE.flag
ls part.*.json > parts.txt
