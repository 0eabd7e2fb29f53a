"""``slurmkit import`` (an sbatch script into a job spec) and ``slurmkit port`` (a job spec onto
another cluster), each with a report of every line or value it changed."""

import os
from pathlib import Path

import click

from slurmkit.cli.main import PROFILE_OPTION, fail
from slurmkit.core.errors import SlurmkitError
from slurmkit.core.files import check_destination, check_writable, write_atomic
from slurmkit.core.output import message_line, verbatim

#: how many of import's notes are told on stderr (the spec's comments hold them all).
MAX_TOLD_NOTES = 100


def _refuse_special(output: str) -> None:
    """A named pipe, a device, a socket or a folder at OUTPUT is refused first, --force or not:
    "use --force" would not help (a link is only in the way: --force replaces the link itself)."""
    try:
        check_destination(output, replace_link=True)
    except SlurmkitError as error:
        fail(error)


NO_VERIFY = click.option("--no-verify", is_flag=True, help="Do not run the old and the new script side by side to compare "
                                                         "what they do (slurmkit docs moving: Verification).")


def _told_verification(verification) -> None:
    """Each difference verification found, declared or not; the findings become the spec's to-dos."""
    for difference in verification.declared[:MAX_TOLD_NOTES]:
        message_line(f"verify: declared: {difference.text}: {difference.declared}")
    if not verification.not_run and not verification.findings:   # else each is a to do, told with the others
        untraced = f"; {len(verification.untraced)} step(s) neither trace ran, each a note" if verification.untraced else ""
        message_line(f"verify: the traces of the old and the new script agree ({len(verification.declared)} differences "
                     f"declared{untraced})")


def _write_beside(files, output, force: bool) -> None:
    """The files the imported spec names (a task file), beside OUTPUT (in the current folder when
    the spec is printed); one that exists is refused, as OUTPUT is, unless --force."""
    folder = Path(output).parent if output else Path(".")
    paths = [(folder / name, body) for name, body in files]
    for path, _ in paths:
        _refuse_special(str(path))
        if os.path.lexists(path) and not force:
            fail(SlurmkitError(f"{path} already exists (the task file the spec names); use --force to overwrite"))
    for path, body in paths:
        try:
            write_atomic(str(path), body, replace_link=force)
        except SlurmkitError as error:
            fail(error)
        message_line(f"wrote {path}", err=bool(not output))


@click.command("import")
@click.argument("script", type=click.Path(dir_okay=False, exists=True))
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the spec here (default: print it).")
@click.option("--name", help="Job name when the script sets none (default: the script's file name).")
@click.option("--force", is_flag=True, help="Overwrite OUTPUT if it exists.")
@NO_VERIFY
@PROFILE_OPTION
def import_command(script, output, name, force, no_verify, profile):
    """Read an sbatch SCRIPT into a job spec; every line is mapped, dropped, kept as written in
    environment.setup, or left as a "to do" (in the spec file, where `slurmkit check` finds it).
    Then the script and the one slurmkit renders run side by side under recording stand-ins:
    a difference slurmkit did not declare is a "to do" too."""
    from slurmkit.core.errors import InputError
    from slurmkit.core.yamlfile import read_text
    from slurmkit.port.modulelines import with_module_line_todos
    from slurmkit.port.porting import MAX_SCRIPT_BYTES, import_script, imported_text
    from slurmkit.spec.spec import spec_from_mapping

    try:
        text = read_text(Path(script), InputError, MAX_SCRIPT_BYTES)
    except SlurmkitError as error:
        fail(error)
    imported = import_script(text, name=name or Path(script).stem.replace(" ", "-"), profile=profile)
    try:
        spec_from_mapping(imported.spec, source=f"{script} (imported)")
    except SlurmkitError as error:
        fail(error)
    imported = with_module_line_todos(imported, Path(script).parent)
    verification = None
    if not no_verify:
        from slurmkit.port.verify import verified_import

        imported, verification = verified_import(text, imported, profile)
    text = imported_text(imported, Path(script).name)
    _write_beside(imported.files, output, force)
    if output:
        _refuse_special(output)
        if os.path.lexists(output) and not force:
            fail(SlurmkitError(f"{output} already exists; use --force to overwrite"))
        try:
            write_atomic(output, text, replace_link=force)
        except SlurmkitError as error:
            fail(error)
        message_line(f"wrote {output}", err=False)
    else:
        verbatim(text)
    told = [note for note in imported.notes if note.outcome != "mapped" or note.reason]
    for note in told[:MAX_TOLD_NOTES]:
        where = f"{script}:{note.line}" if note.line else script
        text = note.text.split("\n")[0]
        text = text if len(text) <= 200 else text[:200] + "..."
        message_line(f"{note.outcome}: {where}: {text or '(script)'}{': ' + note.reason if note.reason else ''}")
    if len(told) > MAX_TOLD_NOTES:
        message_line(f"... and {len(told) - MAX_TOLD_NOTES} more notes, each a comment at the top of the spec")
    if verification is not None:
        _told_verification(verification)
    if imported.unmapped:
        message_line(f"{len(imported.unmapped)} to do: the spec lists them at its top; `slurmkit check` reports them until you remove them")


@click.command("port")
@click.argument("spec", type=click.Path(dir_okay=False, exists=True))
@click.option("--to", "to", metavar="CLUSTER", help="The cluster to move to (default: the successor of the spec's retired cluster).")
@click.option("--from", "from_", metavar="CLUSTER", help="The cluster the spec was written for, when it names no profile.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the ported spec here (default: print it).")
@click.option("--force", is_flag=True, help="Overwrite OUTPUT if it exists.")
@click.option("--repack", is_flag=True, help="Pack an MPI job's ranks, or a multi-node GPU job's GPUs (kept by default), "
                                            "into as few of the new cluster's nodes as hold them.")
@NO_VERIFY
def port_command(spec, to, from_, output, force, repack, no_verify):
    """Move a job SPEC to another cluster: GPU model, cores per GPU, memory, time, modules and
    whole-node rules, listing every change and why; refuse what cannot move. Then the scripts of
    both run side by side under recording stand-ins: a difference the port did not declare is a
    "to do" in the ported spec."""
    from slurmkit.core.errors import SpecError
    from slurmkit.core.yamlfile import read_yaml_file
    from slurmkit.port.retarget import PortRefused, choose_target, port_spec, ported_text, untold_warnings, written_todos
    from slurmkit.sites.profiles import load_profile
    from slurmkit.spec.spec import spec_from_mapping

    try:
        original, (data, lines, _) = read_yaml_file(Path(spec), SpecError)
        parsed = spec_from_mapping(data, spec, lines)
        source_name = from_ or parsed.profile
        if source_name is None:
            raise SlurmkitError(f"{spec}: profile: the spec names no cluster; give --from CLUSTER")
        source = load_profile(source_name)
        target = choose_target(source, to, load_profile)
        if output:   # before the port's work: a target that cannot be written is the one line of a failed port
            _refuse_special(output)
            if os.path.lexists(output) and not force:
                raise SlurmkitError(f"{output} already exists; use --force to overwrite")
            check_writable(output)
        ported = port_spec(data, parsed, source, target, repack, Path(spec).parent)
    except PortRefused as refused:
        for finding in refused.findings:
            line = parsed.line_of(finding.field)
            message_line(f"error: {spec}{':' + str(line) if line else ''}: {finding.field}: {finding.message}")
        message_line(f"error: {spec} cannot move from {source.name} to {target.name}; nothing written")
        raise SystemExit(2)
    except SlurmkitError as error:
        fail(error)
    verification = None
    if not no_verify:
        from slurmkit.port.verify import verified_port

        ported, verification = verified_port(data, ported, source.name)
    # The user's file as written, with only the changed values rewritten: its comments (and the
    # "# to do:" lines import left, still to do on the new cluster) stay.
    text = ported_text(ported, original, data)
    if output:
        try:   # first: a target that cannot be written is the one line of a failed port
            write_atomic(output, text, replace_link=force)
        except SlurmkitError as error:
            fail(error)
    for change in ported.changes:
        message_line(f"changed: {change}")
    for finding in untold_warnings(ported):
        message_line(f"warning: {finding.field}: {finding.message}")
    if verification is not None:
        _told_verification(verification)
        for note in verification.notes():
            message_line(f"note: {note}")
    _tell_todos(written_todos(ported.todos, original), text)
    if output:
        message_line(f"wrote {output}")
    else:
        verbatim(text)


def _tell_todos(todos, text: str) -> None:
    """The port's to-dos, then each kept comment of the user's that states old values (the note
    in the file's header alone goes unread, and check cannot see comments)."""
    from slurmkit.core.roundtrip import stale_notes

    for todo in todos:
        message_line(f"to do: {todo}")
    for note in stale_notes(text):
        message_line(f"to do: {note}: edit or remove it")
