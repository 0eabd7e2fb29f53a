#!/bin/bash
# cluster: niagara
#SBATCH --account=def-x --time=2:00:00
#SBATCH --nodes=1 --cpus-per-task=40
maker -cpus 10 -base run1 &
maker -cpus 10 -base run2 &
wait
