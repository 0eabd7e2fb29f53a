#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --mem=4G
niagara=false
if $niagara; then
    module load CCEnv NiaEnv/2019b
    source $HOME/nia_env/bin/activate
else
    module load StdEnv/2023 python/3.11
fi
python main.py
