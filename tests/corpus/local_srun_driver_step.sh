#!/bin/bash
# cluster: local
#SBATCH --account=def-test
#SBATCH --time=00:05:00
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --mem-per-cpu=200M
srun -n 1 -N 1 python show.py --out worker &
wpid=$!
srun -n 1 -N 1 python show.py --out driver
wait $wpid
