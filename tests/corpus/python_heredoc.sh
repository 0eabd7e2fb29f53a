#!/bin/bash
# cluster: beluga
#SBATCH --account=def-prof
#SBATCH --time=00:15:00
module load python/3.9 scipy-stack
python - <<END
import numpy as np
print(np.ones(3).sum())
END
