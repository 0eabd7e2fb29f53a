#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=2:00:00
#SBATCH --cpus-per-task=8
module load star/2.7.9a
STAR --runMode alignReads --genomeDir $HOME/index \ # built last week
     --runThreadN 8 --outFileNamePrefix out/
