#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=04:00:00
#SBATCH --array=1-8
./map_reads sample_$SLURM_ARRAY_TASK_ID.fq

# merge step, submitted after the array
#!/bin/bash
#SBATCH --account=def-prof
#SBATCH --time=01:00:00
cat sample_*.out > merged.out
./call_variants merged.out
