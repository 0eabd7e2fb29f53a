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

What a job's end means (JobFailed, a sweep's state, the wait itself) is outcomes.py's, which
submit.py uses too; this module imports submit.py (and so submitit) only when a function here
needs a handle's class, so that ``slurmkit.as_completed`` is cheap to look up.
"""

from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Optional, Protocol, TypeVar, Union

from slurmkit.slurm.monitor import JobStatus
from slurmkit.slurm.outcomes import (
    TAIL_LINES,
    JobFailed,
    WaitTimeout,
    check_deadline,
    deadline_of,
    ended_in_turn,
    jobs_of,
    joined_logs,
    log_tail,
    script_result,
    sweep_result,
    sweep_state,
)

if TYPE_CHECKING:   # for the hints only: submit.py imports submitit
    from slurmkit.slurm.registry import Submission
    from slurmkit.slurm.submit import ChainHandle, JobHandle, SweepHandle

__all__ = ["Handle", "as_completed", "tracked",
           # outcomes.py's, here where they have always been
           "TAIL_LINES", "JobFailed", "WaitTimeout", "check_deadline", "deadline_of", "jobs_of", "joined_logs", "log_tail",
           "script_result", "sweep_result", "sweep_state"]

R_co = TypeVar("R_co", covariant=True)


class Handle(Protocol[R_co]):
    """What every handle has (a structural type: JobHandle, SweepHandle and ChainHandle), for
    type checkers: ``def follow(handles: Sequence[slurmkit.Handle[object]]) -> None``. Its
    parameter is what ``result()`` gives: ``int`` for a script job or a chain, ``List[int]`` for
    a sweep, the function's return type for a function job."""

    @property
    def job_id(self) -> str: ...

    @property
    def state(self) -> str: ...

    def done(self) -> bool: ...

    def wait(self, poll_s: float = ..., *, timeout: Optional[float] = None) -> Union[JobStatus, Dict[str, JobStatus]]: ...

    def result(self) -> R_co: ...

    def cancel(self) -> None: ...

    def stdout(self) -> Optional[str]: ...

    def stderr(self) -> Optional[str]: ...


H = TypeVar("H", bound="Handle[Any]")


def as_completed(handles: Iterable[H], timeout: Optional[float] = None, poll_s: Optional[float] = None) -> Iterator[H]:
    """Yield each handle once its job (every task, every link) has ended, soonest first; one
    batched poll a round for all of them (0.5 s, doubling up to ``poll_s``). ``timeout``
    (seconds): WaitTimeout if some have not ended by then; the jobs run on."""
    from slurmkit.slurm.submit import WAIT_CAP_S, JobHandle

    yield from ended_in_turn(handles, JobHandle.watcher, poll_s or WAIT_CAP_S, timeout)


def tracked(limit: Optional[int] = None) -> List[Union["JobHandle[Any]", "SweepHandle", "ChainHandle"]]:
    """Handles for the jobs in the registry (the last ``limit`` of them; all by default),
    oldest first: a JobHandle a job, a SweepHandle an array, a ChainHandle a chain (its links
    folded, at the place of its first link). Submissions that never got a job id are left out."""
    from slurmkit.core.array_ids import array_ids
    from slurmkit.slurm.registry import submissions
    from slurmkit.slurm.submit import ChainHandle, JobHandle, SweepHandle

    places: List[Union["JobHandle[Any]", "SweepHandle", List["Submission"]]] = []
    chains: Dict[str, List["Submission"]] = {}
    sweeps: Dict[str, List["SweepHandle"]] = {}   # a split sweep's parts, folded into its first's handle
    for record in (r for r in submissions() if r.job_id):
        if record.chain:
            if record.chain not in chains:
                chains[record.chain] = []
                places.append(chains[record.chain])   # filled below, kept at the chain's place
            chains[record.chain].append(record)
        elif record.array_size is not None:
            sweep = SweepHandle(record.folder, record.job_id, record.array_size,
                                array_ids(record.array_ids) if record.array_ids else (), logs=record.logs or ())
            if record.sweep in sweeps:
                sweeps[record.sweep].append(sweep)
                continue
            sweeps[record.job_id] = [sweep]
            places.append(sweep)
        else:
            places.append(JobHandle(record.folder, record.job_id, logs=record.logs or ()))
    handles = [ChainHandle([JobHandle(r.folder, r.job_id, logs=r.logs or ()) for r in sorted(p, key=lambda r: r.link or 0)])
               if isinstance(p, list) else SweepHandle.joined(sweeps[p.job_id]) if isinstance(p, SweepHandle) else p
               for p in places]
    return handles[-limit:] if limit else handles
