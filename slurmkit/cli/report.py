"""``slurmkit report JOBID``: how well a job (or every task of an array) used what it asked for."""

import click

from slurmkit.cli.json_output import JsonCommand, emit
from slurmkit.cli.main import complete_job_ids, fail, job_id_arguments, pretty_output
from slurmkit.cli.remote import REMOTE_OPTION
from slurmkit.core.errors import SlurmkitError


def submission(job_id: str):
    """slurmkit's record of the job (None for a job it did not submit)."""
    from slurmkit.slurm.registry import find

    return find([job_id]).get(job_id.split("_")[0])


def log_folder(job_id: str):
    """Where slurmkit put the job's logs and exit files (None for a job it did not submit)."""
    record = submission(job_id)
    return record.folder if record else None


def job_profile(job_id: str):
    """The site profile the job was rendered for (its GPUs, MIG slices, GPU counts); None when
    slurmkit did not submit it or the profile is no longer found."""
    record = submission(job_id)
    return profile_named(record.profile if record else None)


def profile_named(name):
    """The profile ``name``, or None when there is no name or it is no longer found."""
    from slurmkit.sites.profiles import load_profile

    try:
        return load_profile(name) if name else None
    except (SlurmkitError, OSError):
        return None


def gpu_report(job_id: str, effs):
    """The report of ``effs`` with the job's GPU samples (gpuuse.full_report)."""
    from slurmkit.report.gpuuse import full_report

    return full_report(effs, log_folder(job_id), job_profile(job_id))


@click.command("report", cls=JsonCommand)
@click.argument("job_id", metavar="JOBID", callback=job_id_arguments, shell_complete=complete_job_ids)
@click.option("--json", "as_json", is_flag=True, help="Print the figures and the advice as JSON (schema 1; docs/json.md).")
@click.option("--apply", "apply", is_flag=True,
              help="Write the advised time, memory, cores and GPUs into the job's spec (SPEC, or the one it was submitted from).")
@click.option("--yes", is_flag=True, help="With --apply: write without asking.")
@click.argument("spec_path", metavar="[SPEC]", required=False, type=click.Path(dir_okay=False))
@REMOTE_OPTION
def report_command(job_id, as_json, apply, yes, spec_path, remote):
    """Efficiency of a finished job from sacct (time, CPU, memory, GPUs) with advice; arrays as a summary."""
    if spec_path and not apply:
        raise click.UsageError(f"{spec_path}: a spec is read only with --apply (slurmkit report {job_id} --apply {spec_path})")
    if apply and (as_json or remote):
        raise click.UsageError(f"--apply writes a spec here, after showing its diff: not with {'--json' if as_json else '--remote'}")
    if remote:
        from slurmkit.cli.remote import report_remote

        return report_remote(remote, job_id, as_json)
    from slurmkit.report import efficiency

    try:
        effs = efficiency.with_exit_files(efficiency.report_for(job_id), log_folder(job_id))
        made = gpu_report(job_id, effs)
    except SlurmkitError as error:
        fail(error)
    show_report(made, as_json)
    if apply:
        from slurmkit.report.rightsize import apply_advice

        apply_advice(job_id, list(made.effs), made, spec_path, yes)


def show_report(made, as_json: bool) -> None:
    """The report (gpuuse.full_report's) as JSON, gauges on a terminal, or plain text: here and over --remote."""
    from slurmkit.report import efficiency, gauges

    effs = list(made.effs)
    if as_json:
        out = efficiency.as_json(effs)
        if len(effs) == 1:
            out["jobs"][0]["advice"] = [tip.text for tip in made.advice]
        emit(**out, **gauges.as_json(effs), **_gpu_json(made))
    elif pretty_output():
        from rich.console import Console

        head = made.text.partition("\nAdvice:")[0]
        Console().print(gauges.rich_report(effs, head.splitlines(), [tip.text for tip in made.advice], gpu_rows(made)))
    else:
        head, _, advice = made.text.partition("\nAdvice:")
        click.echo("\n".join([head, *outlier_lines(effs), "Advice:" + advice]), nl=False)


def _gpu_json(made):
    from slurmkit.report.gpuuse import as_json

    return as_json(made.jobs)


def gpu_rows(made):
    """Per-GPU gauge rows of a single job: (label, mean utilisation as a fraction, the figures)."""
    from slurmkit.report.gpuuse import describe

    if len(made.effs) != 1:
        return []
    job = made.jobs.get(made.effs[0].job_id)
    return [(g.label, None if g.mean_util is None else g.mean_util / 100, describe(g).split(": ", 1)[1])
            for g in (job.gpus if job else ())]


def outlier_lines(effs):
    """``Outliers (memory): 12_7 (98%)``: the tasks of an array far from the rest, per gauge."""
    from slurmkit.report.gauges import LABELS, spreads

    return [f"Outliers ({LABELS[s.name].lower()}): " + ", ".join(f"{job} ({value:.0%})" for job, value, _ in s.outliers[:10])
            for s in spreads(effs) if s.outliers] if len(effs) > 1 else []
