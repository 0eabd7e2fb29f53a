#!/bin/bash
# cluster: local
#SBATCH --account=def-test
#SBATCH --time=00:05:00
#SBATCH --mem=300M
module load python/3.11
for name in one two; do
    python show.py --out loop-$name
done
