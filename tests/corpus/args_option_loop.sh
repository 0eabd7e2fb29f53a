#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=08:00:00
#SBATCH --mem=16G
#SBATCH --cpus-per-task=4
EPOCHS=10
RATE=0.001
while [ "$1" != "" ]; do
    case $1 in
        -e | --epochs ) shift
                        EPOCHS=$1
                        ;;
        -r | --rate )   shift
                        RATE=$1
                        ;;
    esac
    shift
done
python train.py --epochs $EPOCHS --rate $RATE
