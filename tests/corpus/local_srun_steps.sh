#!/bin/bash
# cluster: local
#SBATCH --account=def-test
#SBATCH --time=00:05:00
#SBATCH --ntasks=2
#SBATCH --mem-per-cpu=200M
srun -n1 --exclusive python show.py --out a &
srun -n1 --exclusive python show.py --out b &
wait
