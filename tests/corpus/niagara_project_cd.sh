#!/bin/bash
# cluster: niagara
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=40
#SBATCH --time=01:00:00
cd /project/g/grp/someone/run1
./model > out.log
cp -r results /gpfs/fs0/scratch/g/grp/someone/keep/
