# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --time=03:00:00
#SBATCH --cpus-per-task=4
#SBATCH --mem=8G
module load python/3.10
python analyse.py --threads 4
