#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
#SBATCH --mem=4G
module load StdEnv/2020 intel/2020.1.217 quantumespresso/6.6
pw.x < scf.in > scf.out
