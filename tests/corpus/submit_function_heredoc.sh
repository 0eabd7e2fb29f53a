#!/bin/bash
# cluster: graham
launch_case() {
    sbatch <<EOT
#!/bin/bash
#SBATCH --account=def-prof
#SBATCH --time=06:00:00
#SBATCH --cpus-per-task=8
module load python/3.10
python solve.py --case $1 --out results/\$SLURM_JOB_ID
EOT
}
launch_case cavity
