"""``slurmkit report JOBID``: how well a job (or every task of an array) used what it asked for."""

import sys

import click

from slurmkit.cli import views
from slurmkit.cli.json_output import JsonCommand
from slurmkit.cli.main import complete_job_ids, fail, job_id_arguments
from slurmkit.cli.remote import REMOTE_OPTION
from slurmkit.core.errors import SlurmkitError
from slurmkit.core.output import message_line


@click.command("report", cls=JsonCommand)
@click.argument("job_id", metavar="JOBID", callback=job_id_arguments, shell_complete=complete_job_ids)
@click.option("--json", "as_json", is_flag=True, help="Print the figures and the advice as JSON (schema 1; slurmkit docs json).")
@click.option("--apply", "apply", is_flag=True,
              help="Write the advised time, memory, cores and GPUs into the job's spec (SPEC, or the one it was submitted from).")
@click.option("--yes", is_flag=True, help="With --apply: write without asking.")
@click.argument("spec_path", metavar="[SPEC]", required=False, type=click.Path(dir_okay=False))
@REMOTE_OPTION
def report_command(job_id, as_json, apply, yes, spec_path, remote):
    """Efficiency of a finished job from sacct (time, CPU, memory, GPUs) with advice; arrays as a summary.

    A running job's figures so far come from sstat and the live GPU sample file, marked so far."""
    if spec_path and not apply:
        raise click.UsageError(f"{spec_path}: a spec is read only with --apply (slurmkit report {job_id} --apply {spec_path})")
    if apply and (as_json or remote):
        raise click.UsageError(f"--apply writes a spec here, after showing its diff: not with {'--json' if as_json else '--remote'}")
    if remote:
        from slurmkit.cli.remote import report_remote

        return report_remote(remote, job_id, as_json)
    from slurmkit.report import efficiency

    try:
        effs = efficiency.with_exit_files(efficiency.report_for(job_id), views.log_folder(job_id))
        made = views.local_gpu_report(job_id, effs, spec_path)
        if not as_json:
            views.say_arguments(job_id)
    except SlurmkitError as error:
        fail(error)
    views.show_report(made, as_json)
    if apply:
        apply_advice(job_id, list(made.effs), made, spec_path, yes)


def apply_advice(job_id: str, effs, made, spec_path, yes: bool) -> None:
    """Show the diff of the spec with the report's advice, ask (or --yes), write it atomically."""
    import difflib
    import os

    from slurmkit.core.files import check_destination, write_atomic
    from slurmkit.report.rightsize import NotApplied, advice_for_spec

    try:
        path, before, after, skipped = advice_for_spec(job_id, effs, made, spec_path, views.submission(job_id), views.job_profile(job_id))
        check_destination(path)   # before the diff and the question: a link or a pipe is never written
    except SlurmkitError as error:
        fail(error)
    for line in skipped:
        message_line(f"not applied: {line}")
    if before == after:
        click.echo(f"{path}: {unchanged_reason(made.advice, skipped)}")
        return
    click.echo("".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), str(path), str(path))), nl=False)
    if not yes:
        if not sys.stdin.isatty():
            fail(NotApplied(f"{path} not written: add --yes to write these changes"))
        if not click.confirm(f"Write these changes to {path}?", default=False):
            fail(NotApplied(f"{path} not written"))
    try:
        write_atomic(path, after, mode=os.stat(path).st_mode & 0o777)
    except (SlurmkitError, OSError) as error:
        fail(error if isinstance(error, SlurmkitError) else NotApplied(f"{path}: {error.strerror or error}"))
    click.echo(f"wrote {path}")


def unchanged_reason(tips, skipped) -> str:
    """Why ``--apply`` left the spec as it was, in words that agree with the lines above it: the
    advice it could not write was just said (never "nothing to change" under a "not applied"),
    and advice with a figure that the spec already follows is said as that."""
    if skipped:
        return "unchanged: the advice above is for you to apply by hand"
    if any(tip.suggest is not None or tip.value for tip in tips):
        return "nothing to change: it already asks what the report advises"
    return "nothing to change: no advice with a figure to write"
