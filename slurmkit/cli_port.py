"""``slurmkit import``: an existing sbatch script into a job spec, with a report of every line."""

from pathlib import Path

import click

from .cli import PROFILE_OPTION, fail
from .errors import SlurmkitError


@click.command("import")
@click.argument("script", type=click.Path(dir_okay=False, exists=True))
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the spec here (default: print it).")
@click.option("--name", help="Job name when the script sets none (default: the script's file name).")
@click.option("--force", is_flag=True, help="Overwrite OUTPUT if it exists.")
@PROFILE_OPTION
def import_command(script, output, name, force, profile):
    """Read an sbatch SCRIPT into a job spec; report every line that could not be mapped."""
    import yaml

    from .files import write_atomic
    from .porting import import_script
    from .spec import spec_from_mapping

    imported = import_script(Path(script).read_text(), name=name or Path(script).stem.replace(" ", "-"), profile=profile)
    try:
        spec_from_mapping(imported.spec, source=f"{script} (imported)")
    except SlurmkitError as error:
        fail(error)
    text = yaml.safe_dump(imported.spec, sort_keys=False, default_flow_style=False)
    if output:
        if Path(output).exists() and not force:
            fail(SlurmkitError(f"{output} already exists; use --force to overwrite"))
        write_atomic(output, text)
        click.echo(f"wrote {output}")
    else:
        click.echo(text, nl=False)
    for note in imported.notes:
        if note.outcome != "mapped" or note.reason:
            where = f"{script}:{note.line}" if note.line else script
            click.echo(f"{note.outcome}: {where}: {note.text or '(script)'}{': ' + note.reason if note.reason else ''}", err=True)
