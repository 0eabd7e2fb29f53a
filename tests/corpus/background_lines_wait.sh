#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --cpus-per-task=4
#SBATCH --time=01:00:00
cd $SLURM_TMPDIR
(solver -cpus 2 -in part1.dat) &
(solver -cpus 2 -in part2.dat) &
solver -cpus 2 -in part3.dat &
wait
