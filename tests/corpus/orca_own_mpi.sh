#!/bin/bash
# cluster: graham
#SBATCH --account=def-someprof
#SBATCH --ntasks=16
#SBATCH --mem-per-cpu=3G
#SBATCH --time=0-12:00
module load StdEnv/2020 gcc/10.3.0 openmpi/4.1.1 orca/5.0.4
$EBROOTORCA/orca opt_freq.inp > opt_freq.out
