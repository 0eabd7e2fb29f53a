"""SLURM's job array indices as ``--array`` writes them (``1-5``, ``1-9:2,20``): the task ids
an array job has, in the order a sweep's points take them."""

import re
from typing import Iterable, List, Optional, Sequence, Tuple, Union

#: one part of an index list: FIRST, FIRST-LAST or FIRST-LAST:STEP
_PART = re.compile(r"(\d+)(?:-(\d+)(?::(\d+))?)?")
#: the most task ids one expression may name (expanded before anything is checked against a
#: profile): far above any cluster's MaxArraySize, far below a size that fills memory.
MAX_IDS = 1_000_000


def array_ids(text: str) -> Tuple[int, ...]:
    """The task ids of an index list, ascending; ValueError (one line, what is allowed) for one
    that is not SLURM's FIRST[-LAST[:STEP]],... (no throttle: that is its own field), that runs
    backwards, has step 0, names an id twice or names more than MAX_IDS."""
    ids: List[int] = []
    for part in str(text).split(","):
        match = _PART.fullmatch(part.strip())
        if not match:
            raise ValueError(f"{part!r} is not FIRST, FIRST-LAST or FIRST-LAST:STEP (whole numbers, e.g. 1-9:2), "
                             "the parts separated by commas; a throttle goes in array.throttle")
        first, last, step = int(match.group(1)), int(match.group(2) or match.group(1)), int(match.group(3) or 1)
        if last < first or step < 1:
            raise ValueError(f"{part!r} runs backwards or has step 0: write FIRST-LAST with a step of 1 or more")
        if len(ids) + (last - first) // step + 1 > MAX_IDS:
            raise ValueError(f"more than {MAX_IDS:,} task ids")
        ids.extend(range(first, last + 1, step))
    if len(set(ids)) != len(ids) or ids != sorted(ids):
        raise ValueError("names a task id twice or out of order: give the ids ascending, each once")
    return tuple(ids)


#: an array's tasks as the job records know them: their number (ids 0..n-1), or their ids
TaskIds = Union[int, Sequence[int]]


def task_ids(ids: Optional[TaskIds]) -> Iterable[int]:
    """The task ids of an array of ``ids`` tasks (0..ids-1), or the ids themselves."""
    if ids is None:
        return ()
    return range(ids) if isinstance(ids, int) else ids


def index_list(ids: Iterable[int]) -> str:
    """The ids as SLURM's ``--array`` index list, runs of consecutive ids as ``FIRST-LAST``
    (``[1, 2, 3, 7]`` is ``1-3,7``): the shortest form sbatch reads, so a rerun of many tasks
    stays one short option. ``array_ids`` reads it back to the same ids, sorted and once each."""
    runs: List[List[int]] = []
    for task in sorted(set(ids)):
        if runs and task == runs[-1][1] + 1:
            runs[-1][1] = task
        else:
            runs.append([task, task])
    return ",".join(str(first) if first == last else f"{first}-{last}" for first, last in runs)
