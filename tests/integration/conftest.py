"""The integration tier runs against the real local SLURM cluster of tests/cluster/.

The ``cluster`` fixture boots it when it is down (cluster.sh up is idempotent) and fails,
never skips, when it cannot: a test that needs SLURM must not pass without SLURM.
"""

import os
import subprocess
from pathlib import Path

import pytest

from .slurm import LocalCluster

CLUSTER_SCRIPT = Path(__file__).resolve().parent.parent / "cluster" / "cluster.sh"


@pytest.fixture(scope="session")
def cluster():
    env_lines = subprocess.run(["bash", str(CLUSTER_SCRIPT), "env"], check=True, capture_output=True, text=True).stdout
    settings = dict(line.split(" ", 1)[1].split("=", 1) for line in env_lines.splitlines() if line.startswith("export "))
    status = subprocess.run(["bash", str(CLUSTER_SCRIPT), "status"], capture_output=True, text=True)
    if status.returncode != 0:
        up = subprocess.run(["bash", str(CLUSTER_SCRIPT), "up"], capture_output=True, text=True)
        if up.returncode != 0:
            pytest.fail(f"the local SLURM cluster did not come up:\n{up.stderr}", pytrace=False)
    os.environ.update(settings)
    return LocalCluster(base=Path(settings["SLURMKIT_CLUSTER_DIR"]), slurm_conf=Path(settings["SLURM_CONF"]))
