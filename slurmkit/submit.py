"""Submitting rendered scripts, and the handles that follow them: submitit's Job, extended.

``submit_script`` runs ``sbatch --parsable`` (retrying a busy controller), puts the logs where
submitit's ``JobPaths`` looks for them (``<folder>/<id>_0_log.out``), records the submission
in the registry, and returns a ``JobHandle``: submitit's ``SlurmJob`` (``state``, ``done()``,
``wait()``, ``cancel()``, ``stdout()``, ``stderr()``) whose watcher is ``SlurmkitWatcher``, which
asks sacct, then the controller, then the job's exit-status file (monitor.py), so that a job
always ends with its real exit code even when accounting is down.
"""

import datetime
import os
import re
import time
import uuid
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from submitit.slurm.slurm import SlurmInfoWatcher, SlurmJob

from .files import write_atomic
from .monitor import Cadence, JobStatus, Poller, SlurmNotConfigured, SlurmUnreachable
from .registry import Submission, record
from .slurmcli import SchedulerError, run_slurm

DEPENDENCY_TYPES = ("ok", "any", "notok")
#: the longest wait between two polls of JobHandle.wait() (its Cadence doubles from 0.5 s up to this).
WAIT_CAP_S = 15.0


class SlurmkitWatcher(SlurmInfoWatcher):
    """submitit's shared watcher with slurmkit's Poller: one query for all registered jobs,
    answers from the controller or exit files when sacct has none, and ended jobs never asked
    about again."""

    def __init__(self, delay_s: int = 30) -> None:
        super().__init__(delay_s=delay_s)
        self.folders: Dict[str, str] = {}
        self.statuses: Dict[str, JobStatus] = {}
        self.poller = Poller(self.folders)

    def register_folder(self, job_id: str, folder: Path) -> None:
        self.folders[job_id.split("_")[0]] = str(folder)

    def update(self) -> None:
        """One poll of every registered job that has not ended (SlurmUnreachable when SLURM is not answering)."""
        pending = sorted(self._registered - self._finished)
        if not pending:
            return
        self._num_calls += 1
        self._last_status_check = time.time()
        fresh = self.poller.poll(pending)
        self.statuses.update(fresh)
        for job_id, status in fresh.items():
            self._info_dict[job_id] = {"JobID": job_id, "State": status.state, "NodeList": status.nodes,
                                       "ExitCode": "" if status.exit_code is None else f"{status.exit_code}:{status.signal or 0}"}
        for job_id in pending:
            if self.is_done(job_id, mode="cache"):
                self._finished.add(job_id)

    def status_of(self, job_id: str) -> JobStatus:
        return self.statuses.get(job_id, JobStatus(job_id, "UNKNOWN"))


def wait_all(handles: Sequence["JobHandle"], poll_s: float = WAIT_CAP_S) -> List[JobStatus]:
    """Block until every handle's job ends: one batched poll on a Cadence (0.5 s doubling to
    ``poll_s``). A poll that cannot reach SLURM is tried again on the same back-off (the jobs
    run on regardless); a missing SLURM configuration is raised at once."""
    cadence = Cadence(poll_s)
    watcher = JobHandle.watcher
    while True:
        try:
            watcher.update()
        except SlurmNotConfigured:
            raise
        except SlurmUnreachable:
            pass
        statuses = [watcher.status_of(h.job_id) for h in handles]
        if all(s.done for s in statuses):
            return statuses
        time.sleep(cadence.next())


class JobHandle(SlurmJob):
    """A submitted job (or one array task): submitit's future, plus exit code, elapsed, nodes,
    and what became of its outputs (``status().saved`` / ``unsaved``)."""

    watcher = SlurmkitWatcher(delay_s=30)

    def __init__(self, folder, job_id: str, tasks=(0,)) -> None:
        super().__init__(folder, job_id, tasks)
        self.watcher.register_folder(job_id, Path(folder))

    def status(self, force: bool = False) -> JobStatus:
        self.watcher.get_state(self.job_id, mode="force" if force else "standard")
        return self.watcher.status_of(self.job_id)

    @property
    def exit_code(self) -> Optional[int]:
        return self.status().exit_code

    @property
    def elapsed_s(self) -> Optional[int]:
        return self.status().elapsed_s

    @property
    def nodes(self) -> str:
        return self.status().nodes

    def wait(self, poll_s: float = WAIT_CAP_S) -> JobStatus:  # type: ignore[override]
        """Block until the job ends (polling at most every ``poll_s`` seconds); its final status."""
        return wait_all([self], poll_s)[0]


class SweepHandle:
    """An array job: one submission, a handle per task."""

    def __init__(self, folder, job_id: str, size: int) -> None:
        self.job_id, self.size = job_id, size
        self.tasks: List[JobHandle] = [JobHandle(folder, f"{job_id}_{i}") for i in range(size)]

    def statuses(self) -> Dict[str, JobStatus]:
        """Every task's status, from one forced poll (the watcher asks for all tasks at once)."""
        if self.tasks:
            self.tasks[0].status(force=True)
        return {t.job_id: JobHandle.watcher.status_of(t.job_id) for t in self.tasks}

    def done(self) -> bool:
        return all(s.done for s in self.statuses().values())

    def wait(self, poll_s: float = WAIT_CAP_S) -> Dict[str, JobStatus]:
        return {s.job_id: s for s in wait_all(self.tasks, poll_s)}

    def cancel(self) -> None:
        run_slurm(["scancel", self.job_id])


class ChainHandle:
    """A chain of jobs, each starting after the previous one ended (afterany)."""

    def __init__(self, links: List[JobHandle]) -> None:
        self.links = links
        self.job_id = links[0].job_id

    def wait(self, poll_s: float = WAIT_CAP_S) -> JobStatus:
        """Wait for every link (one poll for all); the chain's outcome is its last link's."""
        return wait_all(self.links, poll_s)[-1]

    def cancel(self) -> None:
        run_slurm(["scancel", *(link.job_id for link in self.links)])


def submit_chain(script_text: str, links: int, folder, name: str, profile: str, spec: Optional[str] = None,
                 after: Sequence[str] = (), after_type: str = "ok", workdir=None) -> ChainHandle:
    """Submit ``links`` copies of a chain link, each after the previous one ends (afterany)."""
    handles: List[JobHandle] = []
    for link in range(1, links + 1):
        previous = (handles[-1].job_id,) if handles else tuple(after)
        handles.append(submit_script(script_text, folder, name, profile, spec=spec, after=previous,
                                     after_type="any" if handles else after_type, workdir=workdir,
                                     chain=(handles[0].job_id if handles else None, link, links)))
    return ChainHandle(handles)


def log_pattern(folder: Path, array: bool, stream: str) -> str:
    """Where sbatch writes a job's output: submitit's JobPaths naming (``%j_0_log.out``)."""
    return str(folder / (f"%A_%a_0_log.{stream}" if array else f"%j_0_log.{stream}"))


def sbatch_command(script: Path, folder: Path, array: bool, after: Sequence[str] = (), after_type: str = "ok",
                   test_only: bool = False) -> List[str]:
    argv = ["sbatch", "--parsable", f"--output={log_pattern(folder, array, 'out')}", f"--error={log_pattern(folder, array, 'err')}"]
    if after:
        if after_type not in DEPENDENCY_TYPES:
            raise ValueError(f"after_type must be one of {', '.join(DEPENDENCY_TYPES)}")
        argv.append(f"--dependency=after{after_type}:{':'.join(after)}")
    if test_only:
        argv.append("--test-only")
    return argv + [str(script)]


def parse_job_id(stdout: str) -> str:
    """``sbatch --parsable`` prints ``ID`` or ``ID;CLUSTER``."""
    match = re.match(r"\s*(\d+)", stdout)
    if not match:
        raise SchedulerError(f"sbatch printed no job id: {stdout.strip()!r}")
    return match.group(1)


def submit_script(script_text: str, folder, name: str, profile: str, array_size: Optional[int] = None,
                  spec: Optional[str] = None, after: Sequence[str] = (), after_type: str = "ok", workdir=None,
                  chain: Optional[Tuple[Optional[str], int, int]] = None):
    """Submit ``script_text``; return a JobHandle (a SweepHandle for an array).

    sbatch runs in ``workdir`` (default: the current folder): the job starts there, and
    ``$SLURM_SUBMIT_DIR`` is it. Nothing is recorded unless sbatch accepted the job.
    """
    folder = Path(folder).resolve()
    # A name of its own: concurrent submits of one spec must not rename each other's script.
    script = write_atomic(folder / f".{name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.sbatch", script_text, 0o755)
    env = {**os.environ, "SLURMKIT_JOB_DIR": str(folder)}
    argv = sbatch_command(script, folder, array_size is not None, after, after_type)
    try:
        result = run_slurm(argv, env=env, cwd=workdir or Path.cwd(), failed="sbatch refused the job")
    except SchedulerError:
        script.unlink(missing_ok=True)
        raise
    job_id = parse_job_id(result.stdout)
    os.replace(script, folder / f"{job_id}_submission.sh")  # where submitit's JobPaths looks
    record(Submission(job_id=job_id, name=name, folder=str(folder), profile=profile,
                      submitted=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                      array_size=array_size, spec=spec, after=",".join(after) or None,
                      chain=(chain[0] or job_id) if chain else None, link=chain[1] if chain else None,
                      links=chain[2] if chain else None))
    return SweepHandle(folder, job_id, array_size) if array_size is not None else JobHandle(folder, job_id)


def test_only(script_text: str, folder, name: str, array: bool = False, workdir=None) -> str:
    """``sbatch --test-only``: where and when the controller would start the job (nothing queued)."""
    folder = Path(folder).resolve()
    script = write_atomic(folder / f".{name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.test-only.sbatch", script_text, 0o755)
    try:
        result = run_slurm(sbatch_command(script, folder, array, test_only=True), cwd=workdir or Path.cwd(), failed="sbatch refused the job")
    finally:
        script.unlink(missing_ok=True)
    lines = [line.split("sbatch:", 1)[-1].strip() for line in (result.stderr + result.stdout).splitlines() if "to start at" in line]
    return lines[0] if lines else (result.stderr or result.stdout).strip()
