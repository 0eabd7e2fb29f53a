#!/bin/bash
# cluster: beluga
#SBATCH --account=def-someprof
#SBATCH --time=03:00:00
#SBATCH --mem=16G
#SBATCH --cpus-per-task=4
analyse() {
    cp $HOME/configs/run.cfg . 
    Rscript analyse.R --threads $SLURM_CPUS_PER_TASK
}
module load r/4.3.1
analyse
