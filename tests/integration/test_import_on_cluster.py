"""Imported scripts, rendered for the local cluster, are accepted by its controller."""

import re

import pytest

from slurmkit import Job
from slurmkit.porting import import_script

SCRIPTS = [
    "#!/bin/bash\n#SBATCH -A def-test\n#SBATCH --nodes 2 --ntasks-per-node=2 --mem 1G -t 0-00:10\nmodule load StdEnv/2023 openmpi/4.1.5\nsrun ./app\n",
    "#!/bin/bash\n#SBATCH --account=def-test --gres=gpu:p100:2 -c 1 --mem=2000M --time=30\n#SBATCH --output=%N-%j.out\npython train.py\n",
    "#!/bin/bash\n#SBATCH -A def-test -c 2 --mem-per-cpu=500M -t 10 --array=0-9%3\nexport MODE=fast\npython run.py $SLURM_ARRAY_TASK_ID\n",
]


@pytest.mark.parametrize("script", SCRIPTS)
def test_an_imported_script_renders_and_the_controller_accepts_it(cluster, tmp_path, script):
    imported = import_script(script, name="imported", profile="local")
    assert imported.unmapped == ()
    job = Job(**imported.spec)
    answer = job.test_only(folder=tmp_path / "logs")
    assert re.match(r"Job \d+ to start at \S+ using \d+ processors on nodes node", answer), answer
