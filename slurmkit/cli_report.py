"""``slurmkit report JOBID``: how well a job (or every task of an array) used what it asked for."""

import re

import click

from .cli import complete_job_ids, fail
from .cli_json import JsonCommand, emit
from .cli_remote import REMOTE_OPTION
from .errors import SlurmkitError

_JOB_ID_RE = re.compile(r"^\d+(?:_\d+)?$")


def _job_id(ctx, param, value: str) -> str:
    if not _JOB_ID_RE.match(value):
        raise click.BadParameter(f"{value!r} is not a job id: use 123 (a job or a whole array) or 123_4 (one array task)")
    return value


def log_folder(job_id: str):
    """Where slurmkit put the job's logs and exit files (None for a job it did not submit)."""
    from .registry import find

    record = find([job_id]).get(job_id.split("_")[0])
    return record.folder if record else None


@click.command("report", cls=JsonCommand)
@click.argument("job_id", metavar="JOBID", callback=_job_id, shell_complete=complete_job_ids)
@click.option("--json", "as_json", is_flag=True, help="Print the figures and the advice as JSON (schema 1; docs/json.md).")
@REMOTE_OPTION
def report_command(job_id, as_json, remote):
    """Efficiency of a finished job from sacct (time, CPU, memory, GPUs) with advice; arrays as a summary."""
    if remote:
        from .cli_remote import report_remote

        return report_remote(remote, job_id, as_json)
    from . import efficiency

    try:
        effs = efficiency.with_exit_files(efficiency.report_for(job_id), log_folder(job_id))
    except SlurmkitError as error:
        fail(error)
    if as_json:
        emit(**efficiency.as_json(effs))
    else:
        click.echo(efficiency.format_report(effs), nl=False)
