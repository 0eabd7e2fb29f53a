"""``slurmkit env build``: a thin click command over slurmkit/build/envbuild.py."""

import click

from slurmkit.cli.main import PROFILE_OPTION
from slurmkit.cli.main import fail as _fail
from slurmkit.core.errors import SlurmkitError
from slurmkit.core.output import message_line


@click.group("env")
def env_group():
    """Python environments built on the login node, for sites whose jobs only activate them."""


@env_group.command("build")
@click.argument("spec", type=click.Path(dir_okay=False))
@PROFILE_OPTION
@click.option("--force", is_flag=True, help="Build again even if an environment with the same key is built.")
def build_command(spec, profile, force):
    """Build SPEC's virtualenv here, on the login node (Trillium), where its jobs will activate it."""
    from slurmkit.api.job import Job
    from slurmkit.build.envbuild import build

    try:
        path, built = build(Job.from_yaml(spec), profile, force)
    except SlurmkitError as error:
        _fail(error)
    message_line(f"{'built' if built else 'already built'}: {path}" + ("" if built else " (--force builds it again)"), err=False)
