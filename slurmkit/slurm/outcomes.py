"""What a job's end means to its handle, and the one wait for many handles.

A script job's result is its exit status (0) or :class:`JobFailed` with the end of its log; a
sweep's is every task's, its state one word for all of them; ``ended_in_turn`` yields handles
as they end, one batched poll of the watcher a round. The handles (submit.py) and the functions
across them (handles.py, which re-exports these names) both use this module, and it imports
neither of them, nor submitit: ``slurmkit.as_completed`` stays cheap to look up.
"""

import time
from typing import Iterable, Iterator, List, Optional, Protocol, Sequence, Tuple, TypeVar

from slurmkit.core.errors import SlurmkitError
from slurmkit.slurm.jobfiles import LogTail, log_tails, tail_lines
from slurmkit.slurm.monitor import Cadence, JobStatus, SlurmNotConfigured, SlurmUnreachable, verdict

#: the lines of a failed job's log that JobFailed shows.
TAIL_LINES = 20

H = TypeVar("H")


class Logged(Protocol):
    """A job whose logs can be read: a JobHandle, or one task of a sweep."""

    @property
    def job_id(self) -> str: ...

    def stdout(self) -> Optional[str]: ...

    def stderr(self) -> Optional[str]: ...


class Watcher(Protocol):
    """What the wait asks (submit.SlurmkitWatcher): one batched poll, then each job's status."""

    def update(self) -> None: ...

    def status_of(self, job_id: str) -> JobStatus: ...


class WaitTimeout(SlurmkitError, TimeoutError):
    """``wait(timeout=...)`` or ``as_completed(..., timeout=...)`` ran out; the jobs run on."""

    exit_code = 1


class JobFailed(SlurmkitError):
    """A job (a script's, a function's that raised nothing this process can rebuild, a task of
    a sweep, or a chain's last link) did not complete: its state, exit status and the ends of
    its stderr and stdout with their files, so that the reason is in the traceback. A function
    job's remote traceback, where one was written, is in ``remote_traceback``."""

    exit_code = 1

    def __init__(self, status: JobStatus, log_tail: str = "", failed: Sequence[str] = (),
                 tails: Sequence[LogTail] = (), remote_traceback: str = "", why: str = "") -> None:
        self.status, self.failed, self.tails = status, tuple(failed), tuple(tails)
        self.remote_traceback = remote_traceback
        self.log_tail = log_tail or next((t.text for t in self.tails if t.stream != "stdout" and t.text),
                                         next((t.text for t in self.tails if t.text), ""))
        which = f"{len(failed)} task(s) of job {status.job_id.split('_')[0]} failed ({', '.join(failed[:10])}" \
                f"{', ...' if len(failed) > 10 else ''}); the first, " if failed else ""
        message = f"{which}job {status.job_id}: {verdict(status)}" + (f"; {why}" if why else "")
        if remote_traceback:
            message += f"\n--- the traceback on the node ---\n{remote_traceback.rstrip()}"
        if self.tails:
            message += "\n" + "\n".join(tail_lines(self.tails))
        elif log_tail:
            message += f"\n--- the end of its log ---\n{log_tail}"
        super().__init__(message)

    @property
    def exit_status(self) -> Optional[int]:
        return self.status.exit_code

    def _tail(self, *streams: str) -> Optional[LogTail]:
        return next((t for t in self.tails if t.stream in streams), None)

    @property
    def stdout_tail(self) -> str:
        """The last lines of its output log ('' when it is empty or not there)."""
        tail = self._tail("stdout", "output")
        return (tail.text or "") if tail else ""

    @property
    def stderr_tail(self) -> str:
        """The last lines of its error log (the output log where stderr joins it)."""
        tail = self._tail("stderr", "output")
        return (tail.text or "") if tail else ""

    @property
    def stdout_path(self) -> Optional[str]:
        tail = self._tail("stdout", "output")
        return tail.path if tail else None

    @property
    def stderr_path(self) -> Optional[str]:
        tail = self._tail("stderr", "output")
        return tail.path if tail else None


def log_tail(handle: Logged, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` of the job's error log, else of its output log ('' when neither exists)."""
    for text in (handle.stderr(), handle.stdout()):
        if text and text.strip():
            return "\n".join(text.rstrip("\n").splitlines()[-lines:])
    return ""


def tails_of(handle: object, lines: int = TAIL_LINES) -> Tuple[LogTail, ...]:
    """The ends of a handle's stderr and stdout, at its own log names (the spec's, or slurmkit's
    in its folder); none for a handle that cannot say where its logs are."""
    paths = getattr(handle, "paths", None)
    if paths is None:
        return ()
    return log_tails(paths.folder, getattr(handle, "job_id"), getattr(handle, "logs", ()), lines)


def script_result(handle: Logged, status: JobStatus) -> int:
    """A script job's result: its exit status when it completed (outputs saved), else JobFailed."""
    if status.ok and status.exit_code == 0:
        return 0
    tails = tails_of(handle)
    raise JobFailed(status, "" if tails else log_tail(handle), tails=tails)


def deadline_of(timeout: Optional[float]) -> Optional[float]:
    return None if timeout is None else time.monotonic() + timeout


def check_deadline(deadline: Optional[float], what: str) -> None:
    if deadline is not None and time.monotonic() >= deadline:
        raise WaitTimeout(f"{what} had not ended when the timeout ran out; it runs on "
                          f"(`slurmkit status {what.split()[-1]}` follows it)")


def jobs_of(handle: object) -> List[Logged]:
    """The jobs a handle follows: itself, a sweep's tasks, a chain's links."""
    return list(getattr(handle, "tasks", None) or getattr(handle, "links", None) or [handle])


def ended_in_turn(handles: Iterable[H], watcher: Watcher, poll_s: float, timeout: Optional[float] = None) -> Iterator[H]:
    """Yield each handle once its job (every task, every link) has ended, soonest first; one
    poll of ``watcher`` a round for all of them (0.5 s, doubling up to ``poll_s``). WaitTimeout
    when ``timeout`` seconds are gone; an unreachable SLURM is asked again on the same back-off,
    a missing configuration raised at once."""
    pending = list(handles)
    cadence, deadline = Cadence(poll_s), deadline_of(timeout)
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


def sweep_state(statuses: Sequence[JobStatus]) -> str:
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


def sweep_result(tasks: Sequence[Logged], statuses: Sequence[JobStatus]) -> List[int]:
    """Every task's exit status (0s), or JobFailed naming the tasks that failed."""
    failed = [(task, status) for task, status in zip(tasks, statuses) if not (status.ok and status.exit_code == 0)]
    if failed:
        first_task, first = failed[0]
        tails = tails_of(first_task)
        raise JobFailed(first, "" if tails else log_tail(first_task), failed=[s.job_id for _, s in failed], tails=tails)
    return [0 for _ in statuses]   # every task completed with exit status 0


def joined_logs(tasks: Sequence[Logged], stream: str) -> Optional[str]:
    """The logs of several tasks, each under ``==> ID <==`` as ``tail`` heads several files."""
    parts = [(task.job_id, getattr(task, stream)()) for task in tasks]
    found = [f"==> {job_id} <==\n{text}" for job_id, text in parts if text is not None]
    return "\n".join(found) if found else None
