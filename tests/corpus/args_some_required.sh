#!/bin/bash
# cluster: graham
#SBATCH --account=def-prof
#SBATCH --time=02:00:00
#SBATCH --mem=4G
INPUT=$1
SEED=${2:-0}
while [ $# -gt 0 ]; do
    case $1 in
        --out) OUT=$2; shift 2 ;;
        *) shift ;;
    esac
done
python run.py --input $INPUT --seed $SEED --out $OUT
