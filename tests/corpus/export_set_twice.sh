#!/bin/bash
# cluster: cedar
#SBATCH --account=def-prof
#SBATCH --cpus-per-task=4
#SBATCH --time=01:00:00
module load metis
export LIB_DIR=$EBROOTMETIS
export DATA_DIR=/project/def-prof/data
cmake -DLIB=$LIB_DIR ..
export LIB_DIR=/project/def-prof/lib
export RUN_TAG=final
./solver --lib $LIB_DIR --data $DATA_DIR
