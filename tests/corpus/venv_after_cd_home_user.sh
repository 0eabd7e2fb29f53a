#!/bin/bash
# cluster: graham
#SBATCH --account=def-x --time=1:00:00
module load python/3.8
cd /home/$USER/proj
source .env/bin/activate
python run.py
