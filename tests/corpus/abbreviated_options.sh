#!/bin/bash
# cluster: graham
#SBATCH --accou=def-x --time=1:00:00
#SBATCH --out=/home/me/logs/run-%A_%a.out --arr=1-4 --mem-per-c=2G
python step.py --part "$SLURM_ARRAY_TASK_ID"
