"""``slurmkit resubmit JOBID --failed``: a thin command over slurm/rerun.py."""

import sys

import click

from slurmkit.cli.main import complete_job_ids, job_id_arguments
from slurmkit.cli.main import fail as _fail
from slurmkit.core.errors import SlurmkitError
from slurmkit.core.output import message_line


@click.command("resubmit")
@click.argument("job_id", callback=job_id_arguments, shell_complete=complete_job_ids)
@click.option("--failed", is_flag=True, help="Rerun the array's tasks that ended FAILED, TIMEOUT, OUT_OF_MEMORY, "
              "NODE_FAIL, CANCELLED (or BOOT_FAIL, DEADLINE, PREEMPTED); required.")
def resubmit_command(job_id, failed):
    """Submit an array's failed tasks again, as one array of exactly those task ids.

    The same script runs with --array naming only them (1,4 or 3-7), so each task gets the
    parameters it had (a map_array task, its own pickled call); the new job is recorded as a
    rerun of JOB_ID. Nothing failed: nothing is submitted (exit 0)."""
    if not failed:
        raise click.UsageError("say what to resubmit: --failed (the array's failed tasks) is the only choice")
    if "_" in job_id:
        _fail(SlurmkitError(f"{job_id} is one task: give the array's id ({job_id.split('_')[0]}) with --failed"))
    from slurmkit.core.array_ids import index_list
    from slurmkit.slurm.rerun import failed_tasks, original, resubmit_failed
    from slurmkit.slurm.submit import NotRecorded

    unrecorded = None
    try:
        record = original(job_id)
        if record.parts and not record.sweep:
            return _rerun_sweep(record)
        tasks, still_open = failed_tasks(record)
        if not tasks:
            message_line(f"job {job_id}: no task failed; nothing submitted"
                         + (f" ({len(still_open)} not ended yet)" if still_open else ""), err=False)
            return
        handle = resubmit_failed(record, tasks)
    except NotRecorded as error:
        handle, unrecorded = error.handle, error
    except SlurmkitError as error:
        _fail(error)
    message_line(f"submitted job {handle.job_id}: reruns task{'s' if len(tasks) > 1 else ''} {index_list(tasks)} "
                 f"of {job_id} (--array={index_list(tasks)})"
                 + (f"; {len(still_open)} task(s) not ended yet were left alone" if still_open else ""), err=False)
    if unrecorded is not None:
        _fail(unrecorded)
    sys.exit(0)


def _rerun_sweep(record) -> None:
    """A split sweep's failed tasks: each part's again, as a rerun of that part (its own script
    reads its own slice of the grid); the points are said as the sweep numbers them."""
    from slurmkit.core.array_ids import index_list
    from slurmkit.slurm.registry import find
    from slurmkit.slurm.rerun import failed_tasks, resubmit_failed
    from slurmkit.slurm.sweeps import parts_of

    reruns, still_open = [], 0
    for part in parts_of(record, find([record.job_id])):
        tasks, open_ = failed_tasks(part)
        still_open += len(open_)
        if tasks:
            reruns.append((part, tasks))
    if not reruns:
        message_line(f"job {record.job_id}: no task failed; nothing submitted"
                     + (f" ({still_open} not ended yet)" if still_open else ""), err=False)
        return
    for part, tasks in reruns:
        try:
            handle = resubmit_failed(part, tasks)
        except SlurmkitError as error:   # NotRecorded names the job that exists
            _fail(error)
        points = index_list([(part.offset or 0) + task for task in tasks])
        message_line(f"submitted job {handle.job_id}: reruns points {points} of {record.job_id} "
                     f"(tasks {index_list(tasks)} of its part {part.job_id})", err=False)
    if still_open:
        message_line(f"{still_open} task(s) not ended yet were left alone", err=False)
