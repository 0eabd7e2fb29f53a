"""tests/cluster/cluster.sh: idempotent, self-contained, and `down` stops only its own daemons.

A second, throw-away cluster is booted beside the session's one (own folder, own ports), so
its whole life cycle can be checked without disturbing the other tests.
"""

import os
import subprocess
import time

import pytest

from .conftest import CLUSTER_SCRIPT

DAEMONS = ["munged", "mysqld", "slurmdbd", "slurmctld", "slurmd-node1"]


@pytest.fixture
def spare_cluster(tmp_path):
    env = {**os.environ, "SLURMKIT_CLUSTER_DIR": str(tmp_path / "c"), "SLURMKIT_CLUSTER_PORT_BASE": "18800",
           "SLURMKIT_CLUSTER_NODES": "1", "SLURMKIT_CLUSTER_GPUS": "0"}
    env.pop("SLURM_CONF", None)

    def run(*args):
        return subprocess.run(["bash", str(CLUSTER_SCRIPT), *args], env=env, capture_output=True, text=True, timeout=180)

    yield run, tmp_path / "c"
    run("down")


def _pids(base):
    return {d: int((base / "run" / f"{d}.pid").read_text()) for d in DAEMONS if (base / "run" / f"{d}.pid").exists()}


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_cluster_script_is_idempotent_and_down_stops_only_its_own_daemons(cluster, spare_cluster):
    run, base = spare_cluster
    session_pids = _pids(cluster.base)
    assert run("status").returncode != 0

    started = time.monotonic()
    up = run("up")
    cold_up = time.monotonic() - started
    assert up.returncode == 0, up.stderr
    assert up.stdout.strip() == f"export SLURM_CONF={base}/etc/slurm.conf"
    first = _pids(base)
    assert sorted(first) == sorted(DAEMONS) and all(map(_alive, first.values()))
    assert cold_up < 60

    again = run("up")
    assert again.returncode == 0, again.stderr
    assert _pids(base) == first, "a second `up` must not restart running daemons"
    assert run("status").returncode == 0

    assert run("down").returncode == 0
    deadline = time.monotonic() + 30
    while any(map(_alive, first.values())) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(map(_alive, first.values()))
    assert run("status").returncode != 0
    # The session's cluster was not touched.
    assert all(map(_alive, session_pids.values()))
    assert subprocess.run(["scontrol", "ping"], capture_output=True, text=True).returncode == 0
