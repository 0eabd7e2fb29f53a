#!/bin/bash
# cluster: graham
#SBATCH --account=def-someprof
#SBATCH --time=24:00:00
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=32
#SBATCH --mem-per-cpu=2G
module load gromacs/4.6.7
srun mdrun_mpi -s topol.tpr -deffnm prod -maxh 23.5
