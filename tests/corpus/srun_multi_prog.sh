#!/bin/bash
# cluster: graham
#SBATCH --account=def-someprof
#SBATCH --time=2:00:00
#SBATCH --ntasks=3
#SBATCH --mem-per-cpu=1G
module load StdEnv/2020
cat > tasks.conf <<'CONF'
0 ./producer
1-2 ./consumer %t
CONF
srun --multi-prog tasks.conf
