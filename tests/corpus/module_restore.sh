#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof --time=2:00:00 --mem=4G
module restore analysis
python train.py
