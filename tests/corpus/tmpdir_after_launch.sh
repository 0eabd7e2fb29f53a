#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --ntasks=16
#SBATCH --time=02:00:00
WORK=$SLURM_TMPDIR/run
mkdir -p $WORK
srun ./simulate --out $WORK
grep -h energy $WORK/*.log > energies.txt
sed -i 's/,/ /g' $SLURM_TMPDIR/run/table.csv
cat ${SLURM_TMPDIR}/run/summary
sort results.txt > sorted.txt
