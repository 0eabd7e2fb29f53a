#!/bin/bash
# cluster: graham
# usage: ./submit.sh SEED
SEED=$1
TAG=seed-$SEED
sbatch <<EOT
#!/bin/bash
#SBATCH --account=def-someprof
#SBATCH --time=06:00:00
#SBATCH --gres=gpu:t4:1
#SBATCH --cpus-per-task=4
#SBATCH --mem=16G
#SBATCH --job-name=$TAG
module load python/3.10 cuda
source \$HOME/envs/rl/bin/activate
python train.py --seed $SEED --out runs/$TAG
EOT
