#!/bin/bash
# cluster: cedar
sbatch <<EOT
#!/bin/bash
#SBATCH --account=def-prof
#SBATCH --time=2:00:00
#SBATCH --cpus-per-task=4
#SBATCH --mem=16G
#SBATCH --array=1-$2
module load python/3.10
source $HOME/venv/bin/activate
python sweep.py --config $1 --task \$SLURM_ARRAY_TASK_ID
EOT
