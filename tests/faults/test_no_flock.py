"""A registry on a filesystem without flock, through the CLI on the real local cluster.

NFS mounted without lockd answers flock(2) with ENOLCK, Lustre mounted without ``-o flock``
with ENOSYS. The fault is real to the process: a preload library, compiled here from the C
below, makes the C library's flock fail with that errno for every file, as such a mount does.
slurmkit then locks the registry with a folder beside it, says so once, and leaves nothing
behind: no lock folder, no script of a submission that never reached sbatch.
"""

import os
import re
import shutil
import subprocess

import pytest

from slurmkit.slurm.registry import all_records

from .conftest import immutable
from .test_submission import recorded, run_cli, write_spec

SHIM = r"""
#include <errno.h>
/* flock(2) as a filesystem without it answers: every call fails with FAILURE. */
int flock(int fd, int operation) { (void)fd; (void)operation; errno = FAILURE; return -1; }
"""


def no_flock_library(folder, errno_name: str) -> str:
    """The preload library, built with the C compiler (gcc, in tests/cluster/cluster.sh's packages)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    assert compiler, "a C compiler (cc) is needed to build the flock shim: apt-get install gcc"
    source, library = folder / "no_flock.c", folder / f"no_flock_{errno_name}.so"
    source.write_text(SHIM)
    subprocess.run([compiler, "-shared", "-fPIC", f"-DFAILURE={errno_name}", "-o", str(library), str(source)], check=True)
    return str(library)


@pytest.fixture(params=["ENOLCK", "ENOSYS"])
def no_flock(request, tmp_path_factory):
    """(environment for a slurmkit whose flock always fails, the errno's name)."""
    library = no_flock_library(tmp_path_factory.mktemp("shim"), request.param)
    return {**os.environ, "LD_PRELOAD": library}, request.param


def said_once(registry, errno_name: str) -> str:
    return (f"slurmkit: the registry's filesystem has no flock ({errno_name}); using a lock folder beside it: "
            f"{registry}.lock\n")


def leftovers(folder):
    """Anything in ``folder`` but the registry (a lock folder, a prepared or broken one)."""
    return sorted(name for name in os.listdir(folder) if name != "jobs.jsonl")


def test_submit_and_status_without_flock_record_the_job_once_and_say_which_lock(cluster, registry, tmp_path, no_flock):
    env, errno_name = no_flock
    submit = run_cli("submit", write_spec(tmp_path, "noflock"), env=env)
    assert (submit.returncode, submit.stderr) == (0, said_once(registry, errno_name))
    job_id = re.fullmatch(rf"submitted job (\d+); logs in {tmp_path}/logs\n", submit.stdout).group(1)
    [planned, job] = all_records(registry)
    assert recorded(registry, planned.token) == [job_id] and job.job_id == job_id
    status = run_cli("status", env=env)
    assert (status.returncode, status.stderr) == (0, said_once(registry, errno_name))
    assert [line.split("\t")[:2] for line in status.stdout.splitlines()[1:]] == [[job_id, "noflock"]]
    assert leftovers(registry.parent) == []
    logs = os.listdir(tmp_path / "logs")   # the job's own logs may be there too, once it runs
    assert f"{job_id}_submission.sh" in logs and [name for name in logs if name.endswith(".sbatch")] == []


def test_a_submit_that_cannot_take_the_lock_folder_says_so_and_leaves_no_script(cluster, registry, tmp_path, no_flock):
    """The registry's folder is immutable: the registry can be written, its lock folder not made."""
    env, errno_name = no_flock
    registry.parent.mkdir(parents=True)
    registry.write_text("")
    with immutable(registry.parent):
        submit = run_cli("submit", write_spec(tmp_path, "nolockdir"), env=env)
    assert (submit.returncode, submit.stdout) == (1, "")
    assert submit.stderr == (said_once(registry, errno_name)
                             + f"error: nothing was submitted: cannot lock the job registry {registry}: cannot make its "
                               f"lock folder {registry}.lock: Operation not permitted; make {registry.parent} writable "
                               "or set SLURMKIT_REGISTRY to a file elsewhere\n")
    assert registry.read_text() == "" and leftovers(registry.parent) == []
    assert os.listdir(tmp_path / "logs") == []
