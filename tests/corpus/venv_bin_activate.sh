#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --mem=8G
cd /project/def-prof/someone/model
source bin/activate
python fit.py
