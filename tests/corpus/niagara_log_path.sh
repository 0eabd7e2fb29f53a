#!/bin/bash
# cluster: niagara
#SBATCH --account=def-prof
#SBATCH --time=3:00:00
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=40
#SBATCH --output=/scratch/p/prof/me/logs/%x-%j.out
#SBATCH --err=/project/p/prof/me/logs/%x-%j.err
mpirun ./solver input.dat
