"""One protocol for every handle slurmkit returns, and the functions that work across them.

``JobHandle`` (one job, a script's or a Python function's), ``SweepHandle`` (an array) and
``ChainHandle`` (a chain of resubmitted links) all have::

    .job_id  .state  .done()  .wait(poll_s, timeout=None)  .result()  .cancel()  .stdout()  .stderr()

``result()`` is what a caller wants once the job is over: a function job's return value; a
script job's exit status (0), or :class:`JobFailed` with the end of its logs; a sweep's exit
statuses in task order; a chain's last link's. ``as_completed(handles)`` yields handles as they
end, polling all of them in one query a round; ``tracked()`` gives the handles of the jobs in
the registry, the links of each chain folded into one ``ChainHandle``.

submitit's ``result()`` raises ``UncompletedJobError`` on a script job (it has no pickled
result): slurmkit's answers with the exit status instead, which is what a script has.
"""

import time
from typing import TYPE_CHECKING, Iterable, Iterator, List, Optional, Protocol, Sequence, TypeVar

from slurmkit.core.errors import SlurmkitError

if TYPE_CHECKING:   # for the hints only: submit.py imports submitit
    from slurmkit.slurm.monitor import JobStatus
    from slurmkit.slurm.submit import JobHandle

#: the lines of a failed job's log that JobFailed shows.
TAIL_LINES = 20


class Handle(Protocol):
    """What every handle has (a structural type: JobHandle, SweepHandle and ChainHandle), for
    type checkers: ``def follow(handles: Sequence[slurmkit.Handle]) -> None``."""

    job_id: str

    @property
    def state(self) -> str: ...

    def done(self) -> bool: ...

    def wait(self, poll_s: float = ..., *, timeout: Optional[float] = None): ...

    def result(self): ...

    def cancel(self) -> None: ...

    def stdout(self) -> Optional[str]: ...

    def stderr(self) -> Optional[str]: ...


H = TypeVar("H")


class WaitTimeout(SlurmkitError, TimeoutError):
    """``wait(timeout=...)`` or ``as_completed(..., timeout=...)`` ran out; the jobs run on."""

    exit_code = 1


class JobFailed(SlurmkitError):
    """A script job (or a task of a sweep, or a chain's last link) did not complete: its state,
    exit status and the end of its log, so that the reason is in the traceback."""

    exit_code = 1

    def __init__(self, status: "JobStatus", log_tail: str = "", failed: Sequence[str] = ()):
        from slurmkit.slurm.monitor import verdict

        self.status, self.log_tail, self.failed = status, log_tail, tuple(failed)
        which = f"{len(failed)} task(s) of job {status.job_id.split('_')[0]} failed ({', '.join(failed[:10])}" \
                f"{', ...' if len(failed) > 10 else ''}); the first, " if failed else ""
        message = f"{which}job {status.job_id}: {verdict(status)}"
        if log_tail:
            message += f"\n--- the end of its log ---\n{log_tail}"
        super().__init__(message)

    @property
    def exit_status(self) -> Optional[int]:
        return self.status.exit_code


def log_tail(handle: "JobHandle", lines: int = TAIL_LINES) -> str:
    """The last ``lines`` of the job's error log, else of its output log ('' when neither exists)."""
    for text in (handle.stderr(), handle.stdout()):
        if text and text.strip():
            return "\n".join(text.rstrip("\n").splitlines()[-lines:])
    return ""


def script_result(handle: "JobHandle", status: "JobStatus") -> int:
    """A script job's result: its exit status when it completed (outputs saved), else JobFailed."""
    if status.ok and status.exit_code == 0:
        return 0
    raise JobFailed(status, log_tail(handle))


def deadline_of(timeout: Optional[float]) -> Optional[float]:
    return None if timeout is None else time.monotonic() + timeout


def check_deadline(deadline: Optional[float], what: str) -> None:
    if deadline is not None and time.monotonic() >= deadline:
        raise WaitTimeout(f"{what} had not ended when the timeout ran out; it runs on "
                          f"(`slurmkit status {what.split()[-1]}` follows it)")


def jobs_of(handle) -> List["JobHandle"]:
    """The JobHandles a handle follows: itself, a sweep's tasks, a chain's links."""
    return list(getattr(handle, "tasks", None) or getattr(handle, "links", None) or [handle])


def as_completed(handles: Iterable[H], timeout: Optional[float] = None, poll_s: Optional[float] = None) -> Iterator[H]:
    """Yield each handle once its job (every task, every link) has ended, soonest first; one
    batched poll a round for all of them (0.5 s, doubling up to ``poll_s``). ``timeout``
    (seconds): WaitTimeout if some have not ended by then; the jobs run on."""
    from slurmkit.slurm.monitor import Cadence, SlurmNotConfigured, SlurmUnreachable
    from slurmkit.slurm.submit import WAIT_CAP_S, JobHandle

    pending = list(handles)
    cadence, deadline = Cadence(poll_s or WAIT_CAP_S), deadline_of(timeout)
    watcher = JobHandle.watcher
    while pending:
        try:
            watcher.update()
        except SlurmNotConfigured:
            raise
        except SlurmUnreachable:
            pass
        ended = [h for h in pending if all(watcher.status_of(j.job_id).done for j in jobs_of(h))]
        for handle in ended:
            pending.remove(handle)
            yield handle
        if pending:
            ids = " ".join(dict.fromkeys(getattr(h, "job_id", "?").split("_")[0] for h in pending))
            check_deadline(deadline, f"job {ids}")
            time.sleep(cadence.next())


def tracked(limit: Optional[int] = None) -> list:
    """Handles for the jobs in the registry (the last ``limit`` of them; all by default),
    oldest first: a JobHandle a job, a SweepHandle an array, a ChainHandle a chain (its links
    folded, at the place of its first link). Submissions that never got a job id are left out."""
    from slurmkit.slurm.registry import submissions
    from slurmkit.slurm.submit import ChainHandle, JobHandle, SweepHandle

    records = [r for r in submissions() if r.job_id]
    handles: list = []
    chains: dict = {}
    for record in records:
        if record.chain:
            links = chains.get(record.chain)
            if links is None:
                links = chains[record.chain] = []
                handles.append(links)   # filled below, kept at the chain's place
            links.append(record)
        elif record.array_size is not None:
            handles.append(SweepHandle(record.folder, record.job_id, record.array_size))
        else:
            handles.append(JobHandle(record.folder, record.job_id))
    folded = [ChainHandle([JobHandle(r.folder, r.job_id) for r in sorted(h, key=lambda r: r.link or 0)])
              if isinstance(h, list) else h for h in handles]
    return folded[-limit:] if limit else folded


def sweep_state(statuses: Sequence["JobStatus"]) -> str:
    """An array's state in one word: while some task has not ended, RUNNING if any task has
    started (or ended), else the tasks' common state (PENDING); once all ended, COMPLETED when
    every task completed, else the state of the first task that did not."""
    if not statuses:
        return "UNKNOWN"
    if not all(s.done for s in statuses):
        if any(s.state == "RUNNING" or s.done for s in statuses):
            return "RUNNING"
        return statuses[0].state
    return next((s.state for s in statuses if s.state != "COMPLETED"), "COMPLETED")


def sweep_result(tasks: Sequence["JobHandle"], statuses: Sequence["JobStatus"]) -> List[int]:
    """Every task's exit status (0s), or JobFailed naming the tasks that failed."""
    failed = [(task, status) for task, status in zip(tasks, statuses) if not (status.ok and status.exit_code == 0)]
    if failed:
        first_task, first = failed[0]
        raise JobFailed(first, log_tail(first_task), failed=[s.job_id for _, s in failed])
    return [0 for _ in statuses]   # every task completed with exit status 0


def joined_logs(tasks: Sequence["JobHandle"], stream: str) -> Optional[str]:
    """The logs of several tasks, each under ``==> ID <==`` as ``tail`` heads several files."""
    parts = [(task.job_id, getattr(task, stream)()) for task in tasks]
    found = [f"==> {job_id} <==\n{text}" for job_id, text in parts if text is not None]
    return "\n".join(found) if found else None
