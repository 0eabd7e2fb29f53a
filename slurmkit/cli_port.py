"""``slurmkit import`` (an sbatch script into a job spec) and ``slurmkit port`` (a job spec onto
another cluster), each with a report of every line or value it changed."""

from pathlib import Path

import click

from .cli import PROFILE_OPTION, fail
from .errors import SlurmkitError
from .files import write_atomic


@click.command("import")
@click.argument("script", type=click.Path(dir_okay=False, exists=True))
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the spec here (default: print it).")
@click.option("--name", help="Job name when the script sets none (default: the script's file name).")
@click.option("--force", is_flag=True, help="Overwrite OUTPUT if it exists.")
@PROFILE_OPTION
def import_command(script, output, name, force, profile):
    """Read an sbatch SCRIPT into a job spec; every line is mapped, dropped, kept as written in
    environment.setup, or left as a "to do" (in the spec file, where `slurmkit check` finds it)."""
    from .porting import import_script, imported_text
    from .spec import spec_from_mapping

    from .errors import InputError
    from .yamlfile import read_text

    try:
        text = read_text(Path(script), InputError)
    except SlurmkitError as error:
        fail(error)
    imported = import_script(text, name=name or Path(script).stem.replace(" ", "-"), profile=profile)
    try:
        spec_from_mapping(imported.spec, source=f"{script} (imported)")
    except SlurmkitError as error:
        fail(error)
    text = imported_text(imported, Path(script).name)
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
            text = note.text.split("\n")[0]
            click.echo(f"{note.outcome}: {where}: {text or '(script)'}{': ' + note.reason if note.reason else ''}", err=True)
    if imported.unmapped:
        click.echo(f"{len(imported.unmapped)} to do: the spec lists them at its top; `slurmkit check` reports them until you remove them", err=True)


@click.command("port")
@click.argument("spec", type=click.Path(dir_okay=False, exists=True))
@click.option("--to", "to", metavar="CLUSTER", help="The cluster to move to (default: the successor of the spec's retired cluster).")
@click.option("--from", "from_", metavar="CLUSTER", help="The cluster the spec was written for, when it names no profile.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the ported spec here (default: print it).")
@click.option("--force", is_flag=True, help="Overwrite OUTPUT if it exists.")
@click.option("--repack", is_flag=True, help="Pack an MPI job's ranks (kept by default) into as few of the new cluster's whole nodes as hold them.")
def port_command(spec, to, from_, output, force, repack):
    """Move a job SPEC to another cluster: GPU model, cores per GPU, memory, time, modules and
    whole-node rules, listing every change and why; refuse what cannot move."""
    from .profiles import load_profile
    from .retarget import PortRefused, choose_target, port_spec, ported_text
    from .spec import spec_from_mapping
    from .errors import SpecError
    from .yamlfile import read_yaml_file

    try:
        original, (data, lines, _) = read_yaml_file(Path(spec), SpecError)
        parsed = spec_from_mapping(data, spec, lines)
        source_name = from_ or parsed.profile
        if source_name is None:
            raise SlurmkitError(f"{spec}: profile: the spec names no cluster; give --from CLUSTER")
        source = load_profile(source_name)
        target = choose_target(source, to, load_profile)
        ported = port_spec(data, parsed, source, target, repack)
    except PortRefused as refused:
        for finding in refused.findings:
            line = parsed.line_of(finding.field)
            click.echo(f"error: {spec}{':' + str(line) if line else ''}: {finding.field}: {finding.message}", err=True)
        click.echo(f"error: {spec} cannot move from {source.name} to {target.name}; nothing written", err=True)
        raise SystemExit(2)
    except SlurmkitError as error:
        fail(error)
    if output and Path(output).exists() and not force:
        fail(SlurmkitError(f"{output} already exists; use --force to overwrite"))
    for change in ported.changes:
        click.echo(f"changed: {change}", err=True)
    for finding in ported.warnings:
        click.echo(f"warning: {finding.field}: {finding.message}", err=True)
    for todo in ported.todos:
        click.echo(f"to do: {todo}", err=True)
    # The user's file as written, with only the changed values rewritten: its comments (and the
    # "# to do:" lines import left, still to do on the new cluster) stay.
    text = ported_text(ported, original, data)
    if output:
        write_atomic(output, text)
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(text, nl=False)
