"""``slurmkit report JOBID``: how well a job (or every task of an array) used what it asked for."""

import click

from .cli import complete_job_ids, fail, job_id_arguments, pretty_output
from .cli_json import JsonCommand, emit
from .cli_remote import REMOTE_OPTION
from .errors import SlurmkitError

def log_folder(job_id: str):
    """Where slurmkit put the job's logs and exit files (None for a job it did not submit)."""
    from .registry import find

    record = find([job_id]).get(job_id.split("_")[0])
    return record.folder if record else None


@click.command("report", cls=JsonCommand)
@click.argument("job_id", metavar="JOBID", callback=job_id_arguments, shell_complete=complete_job_ids)
@click.option("--json", "as_json", is_flag=True, help="Print the figures and the advice as JSON (schema 1; docs/json.md).")
@REMOTE_OPTION
def report_command(job_id, as_json, remote):
    """Efficiency of a finished job from sacct (time, CPU, memory, GPUs) with advice; arrays as a summary."""
    if remote:
        from .cli_remote import report_remote

        return report_remote(remote, job_id, as_json)
    from . import efficiency, gauges

    try:
        effs = efficiency.with_exit_files(efficiency.report_for(job_id), log_folder(job_id))
    except SlurmkitError as error:
        fail(error)
    if as_json:
        emit(**efficiency.as_json(effs), **gauges.as_json(effs))
        return
    head, _, advice = efficiency.format_report(effs).partition("\nAdvice:")
    if pretty_output():
        from rich.console import Console

        said = efficiency.advice(effs[0]) if len(effs) == 1 else efficiency.summarize(effs).advice
        Console().print(gauges.rich_report(effs, head.splitlines(), said))
        return
    click.echo("\n".join([head, *outlier_lines(effs), "Advice:" + advice]), nl=False)


def outlier_lines(effs):
    """``Outliers (memory): 12_7 (98%)``: the tasks of an array far from the rest, per gauge."""
    from .gauges import LABELS, spreads

    return [f"Outliers ({LABELS[s.name].lower()}): " + ", ".join(f"{job} ({value:.0%})" for job, value, _ in s.outliers[:10])
            for s in spreads(effs) if s.outliers] if len(effs) > 1 else []
