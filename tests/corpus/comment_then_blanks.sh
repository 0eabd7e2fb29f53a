#!/bin/bash
# cluster: narval
#SBATCH --account=def-x --time=1:00:00
python train.py --cuda # --count --level=debug #--report   
