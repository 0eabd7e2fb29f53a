# cluster: beluga
# set up once on the login node:
module load python/3.11
virtualenv ~/tools_env
~/tools_env/bin/pip install numpy

#!/bin/bash
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
source ~/tools_env/bin/activate
python fit.py
