#!/bin/bash
# cluster: local
#SBATCH --account=def-test
#SBATCH --time=00:05:00
#SBATCH --mem=300M
#SBATCH --mail-type=END,FAIL
python3 - <<END
import os
open("heredoc.txt", "w").write("job " + os.environ["SLURM_JOB_ID"] + "\n")
END
