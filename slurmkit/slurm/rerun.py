"""``slurmkit resubmit JOBID --failed``: the tasks of an array that failed, submitted again.

The rerun is the same script (kept beside the logs as ``<id>_submission.sh``) with its
``#SBATCH --array`` line naming only those tasks (``--array=1,4``, runs compacted to ranges):
task *i* still reads point *i* of the grid by ``$SLURM_ARRAY_TASK_ID``, so each rerun task gets
the parameters it had. Which tasks failed is what ``status`` says (sacct reconciled with the
exit files), so a task the exit file shows failed counts although sacct said COMPLETED.

A function array (``map_array``) reruns the same way: its script runs submitit's
``_submit``, which loads task *i*'s pickled call from ``<array id>_<i>_submitted.pkl``, so each
failed task's call is copied (whole, under a temporary name first) to the rerun's id as soon
as sbatch has given it: submitit's task waits up to a minute for its call to appear, as it does
for submitit's own arrays, whose calls are moved in after sbatch returns too.
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
    """The script with its ``--array`` naming only ``tasks`` (its throttle kept)."""
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


def runs_calls(script_text: str) -> bool:
    """The script runs pickled Python calls (submitit's, as map_array submits them)."""
    return "submitit.core._submit" in script_text


def call_files(record: Submission, tasks: Sequence[int]) -> List[Path]:
    """Each task's pickled call; CannotRerun naming the first that is gone."""
    files = [Path(record.folder) / f"{record.job_id}_{task}_submitted.pkl" for task in tasks]
    for path in files:
        if not path.is_file():
            raise CannotRerun(f"job {record.job_id}: the call of task {path.name.split('_')[1]} is gone ({path} is not there): "
                              "call map_array again with the failed items")
    return files


def copy_calls(files: Sequence[Path], tasks: Sequence[int], job_id: str) -> None:
    """The calls, each under the rerun's task id, whole before it has that name."""
    import shutil

    for path, task in zip(files, tasks):
        target = path.with_name(f"{job_id}_{task}_submitted.pkl")
        temporary = target.with_name(f".{target.name}.tmp")
        try:
            shutil.copyfile(path, temporary)
            temporary.replace(target)
        except OSError as error:
            temporary.unlink(missing_ok=True)
            raise CannotRerun(f"job {job_id} was submitted, but the call of its task {task} could not be put in place "
                              f"({target}: {error.strerror or error}), so that task will fail: `slurmkit cancel {job_id}`, "
                              "fix that, and resubmit again") from None


def resubmit_failed(record: Submission, tasks: Sequence[int]):
    """Submit ``tasks`` of ``record``'s array again; the SweepHandle of the rerun. A function
    array's tasks get their pickled calls under the new id (the module's docstring says how)."""
    from slurmkit.slurm.submit import NotRecorded, submit_script

    script = script_of(record)
    text = rerun_script(script, tasks)
    calls = call_files(record, tasks) if runs_calls(script) else []
    ids = index_list(tasks)
    try:
        handle = submit_script(text, record.folder, record.name, record.profile, array_size=len(tasks), spec=record.spec,
                               workdir=workdir_of(record), args=record.args or (), array_indices=ids,
                               logs=record.logs or (), rerun_of=record.job_id)
    except NotRecorded as error:   # the job exists: its tasks still need their calls
        copy_calls(calls, tasks, error.job_id)
        raise
    copy_calls(calls, tasks, handle.job_id)
    return handle
