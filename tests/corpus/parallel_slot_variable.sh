#!/bin/bash
# cluster: cedar
#SBATCH --account=def-someprof
#SBATCH --time=02:00:00
#SBATCH --cpus-per-task=4
#SBATCH --mem=8G
# One worker per slot: each task learns its slot number from GNU Parallel.
module load python/3.11
parallel -j 4 WORKER_SLOT={%} python -u score.py --shard {} ::: 0 1 2 3 4 5 6 7
