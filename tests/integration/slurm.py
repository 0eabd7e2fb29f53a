"""Small helpers for talking to the local test cluster from tests.

These drive sbatch and sacct directly; they exist so that the foundation tests check the
cluster itself, independently of slurmkit's own submit and monitor code.
"""

import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List

STATE = Path(__file__).resolve().parent.parent / "cluster" / ".state"

#: how long a test waits for an event (a file, a job state, a line of output) before it fails:
#: a guard against a hang, never a margin that a slow run can overstep. A loaded CI machine
#: whose 2 nodes are busy with other tests' jobs takes minutes where a quiet one takes seconds.
GUARD_S = 300.0

#: the ``slurmkit`` command as its console script runs it (``slurmkit.cli:run``), in this
#: Python and with this checkout's slurmkit. Not ``-m slurmkit.cli.main``: the package
#: ``slurmkit.cli`` imports that module, so runpy warns on stderr that it runs it a second time,
#: a line that no user of the command sees and that tests of "one line on stderr" would count.
CLI = [sys.executable, "-c", "from slurmkit.cli import run; run()"]


def ctrl_c_as_at_a_terminal():
    """``preexec_fn`` for a CLI a test stops with SIGINT: a shell that started the suite in the
    background leaves SIGINT ignored, and Python keeps an ignored SIGINT ignored, so the Ctrl-C
    would never arrive. Restored to its default, Python turns it into KeyboardInterrupt as at a
    terminal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_until(predicate, what: str = "it", guard_s: float = GUARD_S, step: float = 0.2, job_id: str = ""):
    """Ask ``predicate`` every ``step`` seconds until it answers something true; that answer.
    Fails, saying ``what`` did not happen, only after ``guard_s`` seconds; with ``job_id``, the
    failure shows what the controller says of that job and of the nodes, so that a run that
    failed on a loaded machine says why SLURM did not do what was awaited."""
    deadline = time.monotonic() + guard_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {guard_s:.0f} s" + controller_view(job_id))
        time.sleep(step)


def controller_view(job_id: str) -> str:
    """``scontrol show job`` of ``job_id`` and ``sinfo`` of every node, as text for a failure
    message; empty without a job id."""
    if not job_id:
        return ""
    shown = []
    for argv in (["scontrol", "show", "job", job_id], ["sinfo", "-N", "-o", "%N %T %E %C %e"], ["squeue", "-t", "all"]):
        out = subprocess.run(argv, capture_output=True, text=True)
        shown.append(f"$ {' '.join(argv)}\n{out.stdout}{out.stderr}")
    return "\n" + "\n".join(shown)


def lasting_venv(requirement: str, *more: str) -> Path:
    """A virtualenv with ``requirement`` (``name==version``) and ``more``, made once and kept in the
    cluster's state folder, as users keep one on project space; a half-made one is made again."""
    venv = STATE / "venvs" / "+".join(r.replace("==", "-") for r in (requirement, *more))
    if not (venv / "ready").exists():
        subprocess.run(["rm", "-rf", str(venv)], check=True)
        subprocess.run(["/usr/bin/python3.11", "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", requirement, *more], check=True)
        (venv / "ready").write_text("")
    return venv


TERMINAL_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE"}


@dataclass(frozen=True)
class LocalCluster:
    base: Path
    slurm_conf: Path

    def node_scratch(self, node: str) -> Path:
        """The folder that node ``node`` sees as its local scratch (its $SLURM_TMPDIR parent)."""
        return self.base / "nodes" / node / "localscratch"


@dataclass(frozen=True)
class Submission:
    returncode: int
    job_id: str
    stderr: str


def sbatch(script: Path, *args: str) -> Submission:
    """sbatch SCRIPT in its folder, as a user runs it; a script slurmkit rendered finds its runtime
    beside it, as `slurmkit render -o` leaves it."""
    from slurmkit.render.runtime import runtime, write_runtime

    if runtime().name in script.read_text(errors="replace"):
        write_runtime(script.parent)
    result = subprocess.run(["sbatch", "--parsable", *args, str(script)], cwd=script.parent, capture_output=True, text=True, timeout=60)
    return Submission(result.returncode, result.stdout.strip().split(";")[0], result.stderr)


def sacct_rows(job_id: str) -> List[Dict[str, str]]:
    fields = "JobID,State,ExitCode,NodeList"
    out = subprocess.run(["sacct", "-n", "-P", "-o", fields, "-j", job_id], capture_output=True, text=True, timeout=60).stdout
    return [dict(zip(fields.split(","), line.split("|"))) for line in out.splitlines() if line]


def read_until(streams, done, guard_s: float = GUARD_S) -> bool:
    """Read ``streams`` (a file descriptor -> the bytearray its output goes to) as they come, as a
    terminal emulator would (a full pipe or pty would block its writer), until ``done()`` or the
    end of every stream; whether ``done()``. Fails after ``guard_s`` seconds."""
    deadline = time.monotonic() + guard_s
    open_fds = list(streams)
    while open_fds and not done():
        assert time.monotonic() < deadline, f"waited {guard_s:.0f} s: {[bytes(b[-500:]) for b in streams.values()]}"
        for fd in select.select(open_fds, [], [], 0.2)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:   # a pty whose other end has closed
                chunk = b""
            streams[fd].extend(chunk)
            if not chunk:
                open_fds.remove(fd)
    return bool(done())


def wait_for_job(job_id: str, timeout: float = GUARD_S) -> Dict[str, str]:
    """Poll sacct until the job's allocation row reaches a terminal state; return that row.
    ``timeout`` is a guard (the job may wait its turn behind other tests' jobs first)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = [row for row in sacct_rows(job_id) if row["JobID"] == job_id]
        if rows and rows[0]["State"].split()[0] in TERMINAL_STATES:
            return rows[0]
        time.sleep(0.5)
    raise AssertionError(f"job {job_id} did not finish within {timeout}s: {sacct_rows(job_id)}")


def near_its_time_limit(job_id: str) -> None:
    """Brings a running job's time limit to between one and two minutes from now (SLURM counts
    limits in minutes), so that its ``--signal=B:USR1@LEAD`` comes within a minute and SLURM ends it
    at that limit.

    A test of the save at a real time limit submits with a long limit and calls this once the
    payload has written what is to be saved. Submitted with a one-minute limit, the job could be
    signalled before its payload began: SLURM sends the signal at its first time-limit check
    (every 30 s) at which the limit is less than LEAD + 30 s away (the sbatch page: up to 60 s
    early). Measured on the local Slurm 22.05, four jobs of ``--time=1 --signal=B:USR1@30`` were
    signalled 3, 10, 17 and 26 s after they started."""
    shown = subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%T %M"], capture_output=True, text=True, timeout=60)
    state, _, elapsed = shown.stdout.strip().partition(" ")
    assert state == "RUNNING", (shown.stdout, shown.stderr)
    days, _, clock = elapsed.rpartition("-")
    seconds = 0
    for part in clock.split(":"):
        seconds = seconds * 60 + int(part)
    minutes = (int(days or 0) * 86400 + seconds) // 60 + 2
    subprocess.run(["scontrol", "update", f"JobId={job_id}", f"TimeLimit={minutes}"], check=True, timeout=60)


def run_job(tmp_path: Path, body: str, *args: str, timeout: float = GUARD_S):
    """Write ``body`` as a batch script, submit it with ``args``, wait; return (row, stdout)."""
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n" + body)
    submission = sbatch(script, "--output", str(tmp_path / "%j.out"), *args)
    assert submission.returncode == 0, submission.stderr
    row = wait_for_job(submission.job_id, timeout)
    output = tmp_path / f"{submission.job_id}.out"
    return row, (output.read_text() if output.exists() else ""), submission.job_id


def local_job(tmp_path: Path, name: str = "t", command=("true",), time_limit: str = "5m", **fields):
    """A slurmkit Job for the local cluster, written as ``<tmp_path>/<name>.yaml`` (so its logs go to
    ``<tmp_path>/logs``): ``command`` is its launch command, ``fields`` any other spec keys."""
    import yaml

    from slurmkit import Job

    spec = {"name": name, "profile": "local", "account": "def-test", "resources": {"time": time_limit},
            "launch": {"command": list(command)}, **fields}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return Job.from_yaml(path)
