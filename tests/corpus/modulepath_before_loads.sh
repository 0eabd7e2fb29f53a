#!/bin/bash
# cluster: graham
#SBATCH --account=def-x --time=1:00:00
export MODULEPATH=$HOME/modules:$MODULEPATH
module load mytool/1.0
mytool run --in data.txt
