"""The build cache's shell function under failure: a failed `pip wheel`
caches nothing, and a folder a failed build left in an older script (a key file, no wheel) is
rebuilt rather than blocking every later job. The function runs in bash with a stand-in `pip`
that fails or succeeds as told; `python` is the real interpreter."""

import os
import re
import subprocess
import sys
from pathlib import Path

from slurmkit.api.job import Job
from slurmkit.render.runtime import runtime

FAKE_PIP = """#!/bin/bash
echo "pip $*" >> "$PIP_LOG"
if [ "$1" = wheel ]; then
    [ -e "$PIP_FAILS" ] && exit 1
    while [ "$1" != -w ]; do shift; done
    touch "$2/mpi4py-4.0-cp311-linux_x86_64.whl"
fi
exit 0
"""


def _build_function() -> str:
    """slurmkit_build of the runtime library, which the script calls with its profile and pip's options."""
    script = Job(name="b", kind="mpi", profile="local", account="def-a",
                 resources={"time": "1h", "nodes": 2, "tasks_per_node": 2},
                 environment={"modules": ["openmpi/4.1.5"], "venv": {"packages": ["numpy"]}, "builds": ["mpi4py"]},
                 launch={"command": "python a.py"}).render()
    assert "slurmkit_build local '' 'setuptools wheel cython' mpi4py mpi4py " in script
    return re.search(r"^slurmkit_build\(\) \{.*?^\}\n", runtime().text, re.S | re.M).group(0)


def _run(tmp_path: Path, fails: bool) -> subprocess.CompletedProcess:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "pip").write_text(FAKE_PIP)
    (bin_dir / "pip").chmod(0o755)
    (bin_dir / "python").symlink_to(sys.executable) if not (bin_dir / "python").exists() else None
    marker = tmp_path / "fail"
    marker.touch() if fails else marker.unlink(missing_ok=True)
    body = _build_function() + 'slurmkit_build local "" cython mpi4py mpi4py "" "$CACHE" "pass" MPICC=mpicc\n'
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PIP_LOG": str(tmp_path / "pip.log"),
           "PIP_FAILS": str(marker), "CACHE": str(tmp_path / "cache")}
    return subprocess.run(["bash", "-euo", "pipefail", "-c", body], env=env, capture_output=True, text=True)


def _cached(tmp_path: Path):
    return sorted(p.name for p in (tmp_path / "cache" / "mpi4py").iterdir() if not p.name.endswith(".lock"))


def test_a_failed_build_fails_the_step_and_caches_nothing(tmp_path):
    result = _run(tmp_path, fails=True)
    assert result.returncode != 0
    assert "the build of mpi4py failed: nothing was cached" in result.stderr
    assert _cached(tmp_path) == []


def test_after_a_failed_build_the_next_job_builds_and_uses_the_wheel(tmp_path):
    _run(tmp_path, fails=True)
    result = _run(tmp_path, fails=False)
    assert result.returncode == 0, result.stderr
    [folder] = _cached(tmp_path)
    assert (tmp_path / "cache" / "mpi4py" / folder / "mpi4py-4.0-cp311-linux_x86_64.whl").exists()
    assert "pip install --no-index --no-deps" in (tmp_path / "pip.log").read_text()


def test_a_folder_without_a_wheel_left_by_an_older_script_is_rebuilt(tmp_path):
    assert _run(tmp_path, fails=False).returncode == 0
    [folder] = _cached(tmp_path)
    left = tmp_path / "cache" / "mpi4py" / folder
    for wheel in left.glob("*.whl"):
        wheel.unlink()                      # what a failed build of the old script left: key.txt only
    result = _run(tmp_path, fails=False)
    assert result.returncode == 0, result.stderr
    assert list(left.glob("*.whl")), "rebuilt in place"


def test_pips_own_wheel_cache_is_bypassed(tmp_path):
    """pip keys a cached wheel by its source alone: one built against an earlier toolchain's MPI
    would come back for a new key (seen on the local cluster: a Horovod "build" of 6 seconds)."""
    _run(tmp_path, fails=False)
    (wheel_call,) = [line for line in (tmp_path / "pip.log").read_text().splitlines() if line.startswith("pip wheel")]
    assert "--no-cache-dir" in wheel_call.split()
