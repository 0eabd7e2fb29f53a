"""``slurmkit build``: fill the build cache ahead of time, as a short job of its own."""

import click

from slurmkit.cli.main import PROFILE_OPTION
from slurmkit.cli.main import fail as _fail
from slurmkit.core.errors import SlurmkitError
from slurmkit.core.output import message_line, verbatim
from slurmkit.spec.spec import BUILDS, FRAMEWORKS


@click.command("build")
@click.argument("names", nargs=-1, type=click.Choice(BUILDS))
@click.option("--spec", "spec_path", type=click.Path(dir_okay=False, exists=True),
              help="Build what this job builds, with its modules, venv, GPUs and framework (the cache key must match).")
@PROFILE_OPTION
@click.option("--account", "-A", help="Account for the build job.")
@click.option("--gpus", help="GPU request (MODEL:COUNT) when the build needs CUDA and NCCL, e.g. h100:1.")
@click.option("--framework", type=click.Choice(FRAMEWORKS), help="Framework Horovod is built for (default: the spec's, else pytorch).")
@click.option("--module", "modules", multiple=True, help="Module to load for the build (repeatable), e.g. cuda/12.2.")
@click.option("--print", "print_only", is_flag=True, help="Print the build job's script; submit nothing.")
def build_command(names, spec_path, profile, account, gpus, framework, modules, print_only):
    """Build NAMES (horovod, mpi4py) into the build cache as a job of its own.

    Horovod is compiled from its release's source, fetched into the cache here first, as submit does
    (--print fetches nothing).
    """
    from slurmkit.api.job import Job
    from slurmkit.build.builds import build_spec
    from slurmkit.spec.spec import load_spec

    try:
        spec = build_spec(names, load_spec(spec_path) if spec_path else None, profile, account, gpus, framework, modules)
        job = Job(spec)
        from slurmkit.resolve.loginenv import refuse_build_job

        refuse_build_job(spec, job.profile())
        warn = lambda f: message_line(f"warning: {f.field}: {f.message}")  # noqa: E731
        if print_only:
            verbatim(job.render(warn=warn))
            return
        handle = job.submit(warn=warn)
    except SlurmkitError as error:
        _fail(error)
    click.echo(f"submitted build job {handle.job_id}; logs in {handle.paths.folder}")
