"""``slurmkit resubmit JOBID --failed``: the tasks of an array that failed, submitted again.

The rerun is the same script (kept beside the logs as ``<id>_submission.sh``) with its
``#SBATCH --array`` line naming only those tasks (``--array=1,4``, runs compacted to ranges):
task *i* still reads point *i* of the grid by ``$SLURM_ARRAY_TASK_ID``, so each rerun task gets
the parameters it had. Which tasks failed is what ``status`` says (sacct reconciled with the
exit files), so a task the exit file shows failed counts although sacct said COMPLETED.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from slurmkit.core.array_ids import index_list, task_ids
from slurmkit.core.errors import SlurmkitError
from slurmkit.slurm.monitor import JobStatus, poll
from slurmkit.slurm.registry import Submission, array_tasks, find

#: the ends a rerun may mend: everything but success and a cancel SLURM will redo itself.
RERUN_STATES = frozenset({"FAILED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "CANCELLED", "BOOT_FAIL", "DEADLINE",
                          "PREEMPTED"})
#: the script's own --array line: its index list and an optional %throttle.
_ARRAY_LINE = re.compile(r"^#SBATCH --array=[^\s%]+(%\d+)?[ \t]*$", re.MULTILINE)

#: ``poll``'s signature (job ids, their folders, array_sizes=...): the statuses by task id.
Poll = Callable[..., Dict[str, JobStatus]]


class CannotRerun(SlurmkitError):
    """The job cannot be rerun this way (not slurmkit's, not an array, its script gone)."""


def original(job_id: str, path: Optional[Path] = None) -> Submission:
    """The registry's record of the array ``job_id``; CannotRerun (one line) for any other id."""
    record = find([job_id], path).get(job_id)
    if record is None:
        raise CannotRerun(f"job {job_id}: slurmkit submitted no such job from this account "
                          "(`slurmkit status` lists yours)")
    if record.remote:
        raise CannotRerun(f"job {job_id} was submitted with --remote: resubmit it on {record.remote}")
    if not record.array_size:
        raise CannotRerun(f"job {job_id} is not an array: --failed reruns an array's failed tasks; "
                          "submit its spec again for a single job")
    return record


def failed_tasks(record: Submission, ask: Poll = poll) -> Tuple[List[int], List[int]]:
    """The task ids that ended in a RERUN_STATES state, and those not ended yet (both ascending)."""
    statuses = ask([record.job_id], {record.job_id: record.folder}, array_sizes={record.job_id: array_tasks(record)})
    failed, open_ = [], []
    for task in task_ids(array_tasks(record)):
        status = statuses.get(f"{record.job_id}_{task}")
        state = status.state if status else "UNKNOWN"
        if state in RERUN_STATES:
            failed.append(task)
        elif status is None or not status.done:
            open_.append(task)
    return failed, open_


def rerun_script(script_text: str, tasks: Sequence[int]) -> str:
    """The script with its ``--array`` naming only ``tasks`` (its throttle kept). A function
    array's script is refused: its tasks read pickled calls filed under the old array's id."""
    if "submitit.core._submit" in script_text:
        raise CannotRerun("its tasks ran Python calls (map_array), whose pickled calls belong to that array: "
                          "call map_array again with the failed items")
    match = _ARRAY_LINE.search(script_text)
    if match is None:
        raise CannotRerun("its script has no '#SBATCH --array=' line to narrow: submit its spec again")
    line = f"#SBATCH --array={index_list(tasks)}{match.group(1) or ''}"
    return script_text[:match.start()] + line + script_text[match.end():]


def script_of(record: Submission) -> str:
    """The script the job ran, as submit kept it beside its logs."""
    path = Path(record.folder) / f"{record.job_id}_submission.sh"
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise CannotRerun(f"job {record.job_id}: cannot read its script {path}: {error.strerror or error}; "
                          "submit its spec again") from None


def workdir_of(record: Submission) -> Path:
    """Where sbatch ran for it: the spec's folder (Job.base_dir), else where the logs' folder is."""
    if record.spec and record.spec.endswith((".yaml", ".yml")):
        return Path(record.spec).resolve().parent
    return Path(record.folder).parent


def resubmit_failed(record: Submission, tasks: Sequence[int]):
    """Submit ``tasks`` of ``record``'s array again; the SweepHandle of the rerun."""
    from slurmkit.slurm.submit import submit_script

    text = rerun_script(script_of(record), tasks)
    ids = index_list(tasks)
    return submit_script(text, record.folder, record.name, record.profile, array_size=len(tasks), spec=record.spec,
                         workdir=workdir_of(record), args=record.args or (), array_indices=ids,
                         logs=record.logs or (), rerun_of=record.job_id)
