"""A sweep split into linked arrays (resolve/arraysplit.py), submitted and followed as one job.

Each part is recorded as an array of its own, the parts after the first with ``sweep`` (the
first part's id) and each with ``offset`` (the sweep's point that its task 0 runs) and
``parts``. ``status`` and ``watch`` show the sweep under the first part's id, its tasks numbered
by their point (``as_one``: task 398 of the third part of 1001 is ``FIRST_2400``); ``logs`` and
``resubmit --failed`` go the other way (``locate``).
"""

from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from slurmkit.core.errors import SlurmkitError
from slurmkit.slurm.monitor import JobStatus, Watch
from slurmkit.slurm.registry import Submission

#: a part's id -> (the sweep's id, the offset of the part's task 0).
Joins = Mapping[str, Tuple[str, int]]


def live_max_array_size(run: Optional[Callable] = None) -> Optional[int]:
    """The cluster's MaxArraySize (``scontrol show config``), or None where it cannot be asked."""
    from slurmkit.sites.detect import parse_config
    from slurmkit.slurm.slurmcli import SchedulerError, run_slurm

    try:
        text = (run or run_slurm)(["scontrol", "show", "config"], retry_for=0.0, timeout=30.0).stdout
    except (SchedulerError, SlurmkitError, OSError):
        return None
    value = parse_config(text).get("MaxArraySize", "")
    return int(value) if value.isdigit() and int(value) > 0 else None


def largest_array(profile_limit: Optional[int], live: Optional[int]) -> Optional[int]:
    """The most tasks one array may have: the smaller of what the profile and the cluster say."""
    known = [limit for limit in (profile_limit, live) if limit]
    return min(known) if known else None


class SweepIncomplete(SlurmkitError):
    """A part of a split sweep was refused after the parts before it were submitted: their ids
    are in the message, so that none runs unseen."""

    exit_code = 1

    def __init__(self, error: SlurmkitError, ids: Sequence[str], parts: int) -> None:
        listed = " ".join(ids)
        super().__init__(f"{error.message} (the sweep stopped at part {len(ids) + 1} of {parts}; parts 1-{len(ids)} are "
                         f"jobs {listed}: `slurmkit cancel {listed}` drops them)")


def submit_sweep(parts: Sequence[Tuple[int, str, int]], throttled: bool, folder, name: str, profile: str, **options):
    """Submit each part ``(offset, script, size)`` of a split sweep; one SweepHandle for all.
    Parts go together, each independent; with a throttle each waits for the one before (afterany).
    ``options`` are submit_script's (spec, after, after_type, workdir, args, logs)."""
    from slurmkit.slurm.submit import SweepHandle, submit_script

    handles: List[SweepHandle] = []
    after, after_type = tuple(options.pop("after", ())), options.pop("after_type", "ok")
    for offset, script, size in parts:
        first = handles[0].job_id if handles else None
        previous = ((handles[-1].job_id,), "any") if handles and throttled else (after, after_type)
        try:
            handle = submit_script(script, folder, name, profile, array_size=size, after=previous[0], after_type=previous[1],
                                   part=(first, offset, len(parts)), **options)
        except SlurmkitError as error:
            if not handles:
                raise
            raise SweepIncomplete(error, [h.job_id for h in handles], len(parts)) from None
        handles.append(handle)   # type: ignore[arg-type]   # array_size given: a SweepHandle
    return SweepHandle.joined(handles)


def joins_of(records: Mapping[str, Submission]) -> Dict[str, Tuple[str, int]]:
    """The parts after the first among ``records``: their id -> (the sweep's id, offset)."""
    return {job_id: (r.sweep, r.offset or 0) for job_id, r in records.items() if r.sweep}


def as_one(statuses: Mapping[str, JobStatus], joins: Joins) -> Dict[str, JobStatus]:
    """``statuses`` with each part's tasks under the sweep's id, numbered by their point."""
    if not joins:
        return dict(statuses)
    shown = {}
    for job, status in statuses.items():
        base, _, task = job.partition("_")
        if base in joins and task.isdigit():
            sweep, offset = joins[base]
            job = f"{sweep}_{offset + int(task)}"
            status = status._replace(job_id=job)
        shown[job] = status
    return shown


class SweepWatch(Watch):
    """A Watch whose statuses show each split sweep as one array (``as_one``)."""

    def __init__(self, job_ids: Sequence[str], joins: Joins, **options) -> None:
        super().__init__(job_ids, **options)
        self.joins = joins

    def statuses(self) -> Dict[str, JobStatus]:
        return as_one(super().statuses(), self.joins)


def parts_of(record: Submission, records: Mapping[str, Submission]) -> List[Submission]:
    """The parts of ``record``'s sweep among ``records`` in sweep order (``[record]`` for a plain array)."""
    if not record.parts:
        return [record]
    found = [record, *(r for r in records.values() if r.sweep == record.job_id)]
    return sorted(found, key=lambda r: r.offset or 0)


def locate(task: int, parts: Sequence[Submission]) -> Tuple[Submission, int]:
    """The part that runs point ``task`` of a sweep, and the task's id in that part."""
    for part in reversed(parts):
        if task >= (part.offset or 0):
            return part, task - (part.offset or 0)
    return parts[0], task
