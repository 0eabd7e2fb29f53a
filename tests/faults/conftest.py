"""The fault tier: the faults a real filesystem or controller throws, injected into the real
local SLURM cluster (tests/cluster/), and what slurmkit promises under each (docs/faults.md).

Every fixture here undoes its fault on the way out, even when the test fails, so that the
tests after it find a healthy cluster: a paused daemon is continued, a stopped one restarted
by ``cluster.sh up``, a small filesystem unmounted.
"""

import contextlib
import os
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.integration.conftest import CLUSTER_SCRIPT, cluster  # noqa: F401  (the fixture)
from tests.integration.slurm import GUARD_S, wait_until


def daemon_pid(cluster, name: str) -> int:
    """The pid of one of the cluster's daemons (slurmctld, slurmdbd, slurmd-node1, ...)."""
    return int((cluster.base / "run" / f"{name}.pid").read_text().strip())


@contextlib.contextmanager
def paused(cluster, name: str):
    """The daemon is SIGSTOPped: it accepts connections (the kernel queues them) but answers
    none, as a controller stuck under load does."""
    pid = daemon_pid(cluster, name)
    os.kill(pid, signal.SIGSTOP)
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGCONT)


def restart_cluster() -> None:
    """``cluster.sh up`` starts whatever daemon is not running (it is idempotent)."""
    subprocess.run(["bash", str(CLUSTER_SCRIPT), "up"], check=True, capture_output=True, text=True, timeout=GUARD_S)


def ended(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@contextlib.contextmanager
def stopped(cluster, name: str):
    """The daemon is stopped (SIGTERM, then waited for: a test that began while it still ran
    would test nothing); started again on the way out."""
    pid = daemon_pid(cluster, name)
    os.kill(pid, signal.SIGTERM)
    try:
        wait_until(lambda: ended(pid), f"the end of {name}", step=0.1)
        yield
    finally:
        restart_cluster()


def node_pids(cluster):
    """The slurmd pid of every node: each runs in a mount namespace of its own."""
    return {path.stem[len("slurmd-"):]: int(path.read_text().strip()) for path in sorted((cluster.base / "run").glob("slurmd-*.pid"))}


def on_node(cluster, node: str, *argv: str) -> subprocess.CompletedProcess:
    """Run ``argv`` in ``node``'s mount namespace (what a job on that node sees)."""
    return subprocess.run(["nsenter", "-t", str(node_pids(cluster)[node]), "-m", "--", *argv], capture_output=True, text=True)


@contextlib.contextmanager
def small_filesystem(cluster, size: str = "256k"):
    """A folder that is a tmpfs of ``size`` bytes on this machine and on every node: writes past
    it fail with ENOSPC ("No space left on device"), as on a full project space.

    Each node's slurmd runs in a mount namespace of its own (private propagation), so the node
    gets a tmpfs of its own at the same path; read what a job left there with ``on_node``.
    """
    folder = Path(tempfile.mkdtemp(prefix="slurmkit-full-"))
    folder.chmod(0o777)
    mounted = []
    try:
        for node in [None, *node_pids(cluster)]:
            argv = ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0777", "tmpfs", str(folder)]
            result = subprocess.run(argv, capture_output=True, text=True) if node is None else on_node(cluster, node, *argv)
            assert result.returncode == 0, result.stderr
            mounted.append(node)
        yield folder
    finally:
        for node in reversed(mounted):
            argv = ["umount", "-l", str(folder)]
            subprocess.run(argv, capture_output=True) if node is None else on_node(cluster, node, *argv)
        folder.rmdir()


@contextlib.contextmanager
def immutable(folder: Path):
    """``chattr +i``: nothing may be created in, removed from or renamed in ``folder``, even by root."""
    subprocess.run(["chattr", "+i", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=False)


@pytest.fixture
def registry(tmp_path, monkeypatch):
    """A registry of the test's own (SLURMKIT_REGISTRY), so that tests never see each other's jobs."""
    path = tmp_path / "state" / "jobs.jsonl"
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(path))
    return path
