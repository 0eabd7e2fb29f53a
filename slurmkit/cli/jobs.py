"""``slurmkit new``, ``render`` and ``check``: thin click commands over ``slurmkit.Job``."""

import sys
from pathlib import Path

import click

from slurmkit.cli.json_output import JsonCommand
from slurmkit.cli.main import PROFILE_OPTION, pretty_output
from slurmkit.cli.main import fail as _fail
from slurmkit.core.errors import SlurmkitError
from slurmkit.core.files import PRIVATE_SCRIPT, write_atomic
from slurmkit.core.output import message_line, verbatim
from slurmkit.spec.spec import KINDS


def _load(spec_path: str):
    from slurmkit.api.job import Job

    try:
        return Job.from_yaml(spec_path)
    except SlurmkitError as error:
        _fail(error)


def _located(job, finding) -> str:
    line = job.spec.line_of(finding.field)
    where = f"{job.spec.source}:{line}" if line else job.spec.source
    return f"{where}: {finding.field}: {finding.message}"


def _render_or_fail(job, profile, standalone=False):
    """Render, printing warnings to stderr; errors end the command with exit 2."""
    try:
        resolution = job.resolve(profile)
    except SlurmkitError as error:
        _fail(error)
    for finding in resolution.warnings:
        message_line(f"warning: {_located(job, finding)}")
    if resolution.plan is None:
        for finding in resolution.errors:
            message_line(f"error: {_located(job, finding)}")
        sys.exit(2)
    from slurmkit.render.render import render

    try:
        return render(resolution.plan, standalone=standalone)
    except SlurmkitError as error:  # a template that failed, or tried to leave the sandbox
        _fail(error)


@click.command("render")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--output", "-o", type=click.Path(dir_okay=False),
              help="Write the script here (atomically) instead of stdout, and slurmkit's runtime library beside it.")
@click.option("--standalone", is_flag=True, help="Append slurmkit's runtime library to the script: one file that needs no other.")
@PROFILE_OPTION
def render_command(spec, output, standalone, profile):
    """Render the sbatch script of a job spec."""
    script = _render_or_fail(_load(spec), profile, standalone)
    if output:
        try:
            write_atomic(output, script, PRIVATE_SCRIPT)   # a link or a pipe at OUTPUT is refused: no --force here
            if not standalone:
                _write_runtime_beside(output)
        except SlurmkitError as error:
            _fail(error)
    else:
        verbatim(script)


def _write_runtime_beside(output) -> None:
    """The runtime library the script sources, beside it (sbatch run in that folder finds it in
    $SLURM_SUBMIT_DIR) and in the data folder (found from anywhere), as submit writes it."""
    from slurmkit.render.runtime import runtime_folder, write_runtime

    write_runtime(Path(output).resolve().parent)
    try:
        write_runtime(runtime_folder())
    except SlurmkitError:
        pass   # beside the script is enough for it; submit says so if the data folder stays unwritable


@click.command("check", cls=JsonCommand)
@click.argument("spec", type=click.Path(dir_okay=False), required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON (schema 1; slurmkit docs json).")
@PROFILE_OPTION
@click.option("--folder", type=click.Path(file_okay=False),
              help="Check the job as submitted with this log folder (slurmkit submit --folder; default: logs/ beside SPEC).")
@click.option("--site-rules", is_flag=True,
              help="Print the table of the rules check enforces, with their clusters and sources, and check no spec: "
                   "SPEC (or --profile) names the cluster; without one, every cluster in service.")
def check_command(spec, as_json, profile, folder, site_rules):
    """List the errors and warnings of a job spec on its cluster (exit 2 on errors)."""
    if site_rules:
        _print_site_rules(spec or profile, as_json)
        return
    if not spec:
        raise click.UsageError("Missing argument 'SPEC' (or give --site-rules).")
    job = _load(spec)
    try:
        findings = job.check(profile, folder) + _import_notes(spec)
    except SlurmkitError as error:
        _fail(error)
    if as_json:
        from slurmkit.cli.json_output import emit

        rows = [{"level": f.level, "field": f.field, "line": job.spec.line_of(f.field), "message": f.message} for f in findings]
        emit(spec=spec, findings=rows)
    else:
        _print_findings(job, findings)
    sys.exit(2 if any(f.level == "error" for f in findings) else 0)


def _print_site_rules(cluster, as_json) -> None:
    """The site-rules table (docs/site-rules.md) of ``cluster``, or of every cluster in service
    on the profile search path."""
    from slurmkit.resolve.siterules import rule_lines, rule_table, rule_table_markdown
    from slurmkit.sites.profiles import list_profiles, load_profile

    try:
        profiles = [load_profile(cluster)] if cluster else [p for p in list_profiles()[0] if not p.is_retired and rule_lines(p)]
    except SlurmkitError as error:
        _fail(error)
    rows = rule_table(profiles)
    if as_json:
        from slurmkit.cli.json_output import emit

        emit(rules=[{"rule": r.rule, "clusters": list(r.clusters), "level": r.severity, "text": r.text, "sources": list(r.sources)}
                    for r in rows])
        return
    if not rows:
        message_line(f"{cluster}: no site rules", err=False)
    for line in rule_table_markdown(rows) if rows else ():
        message_line(line, err=False)


def _import_notes(spec) -> tuple:
    """What ``slurmkit import`` left for the user (``# to do:`` comments), as warnings until removed."""
    from slurmkit.core.findings import Finding
    from slurmkit.core.todos import pending_import_notes

    text = Path(spec).read_text(errors="replace")
    return tuple(Finding("warning", "import", f"to do: {note} (remove this line from the spec once done)")
                 for note in pending_import_notes(text))


def _print_findings(job, findings):
    if not findings:
        message_line(f"{job.spec.source}: no problems found", err=False)
        return
    if not pretty_output():
        for finding in findings:
            message_line(f"{finding.level}: {_located(job, finding)}", err=False)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{job.spec.source}")
    for column in ("level", "field", "line", "message"):
        table.add_column(column, overflow="fold")
    for finding in findings:
        style = "red" if finding.level == "error" else "yellow"
        table.add_row(f"[{style}]{finding.level}[/]", finding.field, str(job.spec.line_of(finding.field) or ""), finding.message)
    Console().print(table)


@click.command("new")
@click.argument("name")
@click.option("--kind", type=click.Choice(KINDS), help="What kind of job.")
@click.option("--account", help="Allocation to charge (default: $SBATCH_ACCOUNT or $SLURM_ACCOUNT).")
@click.option("--time", "time_", help="Time limit, e.g. 3h, 1-00:00:00.")
@click.option("--gpus", help="GPUs per node, MODEL:COUNT (e.g. h100:1).")
@click.option("--command", "command", help="What the job runs.")
@click.option("--yes", "-y", is_flag=True, help="Ask nothing: take the flags and defaults.")
@click.option("--force", is_flag=True, help="Overwrite NAME/job.yaml (keeping your comments in it) and NAME/job.sbatch if they exist.")
@click.option("--show", is_flag=True, help="Also print the rendered script (it is in NAME/job.sbatch).")
@PROFILE_OPTION
def new_command(name, kind, account, time_, gpus, command, yes, force, show, profile):
    """Scaffold NAME/job.yaml and its rendered NAME/job.sbatch."""
    from slurmkit.api.scaffold import scaffold

    interactive = not yes and _can_ask()
    try:
        written = scaffold(name, profile=profile, kind=kind, account=account, time=time_, gpus=gpus, command=command,
                           force=force, ask=click.prompt if interactive else None,
                           warn=lambda finding: message_line(str(finding)),
                           tell=lambda line: message_line(line))
    except SlurmkitError as error:
        _fail(error)
    from slurmkit.core.verbosity import quiet

    if show:   # first: what comes last stays on the screen, and that is what to do next
        verbatim(Path(written[-1]).read_text(encoding="utf-8"))
    if not quiet():
        for path in written:
            message_line(f"wrote {path}", err=False)
        _next_steps(str(written[0]))


def _next_steps(spec: str) -> None:
    """What to do with a new spec: the few lines a first-time user needs, not the whole script
    (which pushed them off the screen; ``--show`` prints it)."""
    import shlex

    quoted = shlex.quote(spec)
    message_line(f"next: edit {quoted} (what the job runs and what it needs), then", err=False)
    message_line(f"  slurmkit check {quoted}           # errors and warnings on its cluster", err=False)
    message_line(f"  slurmkit submit {quoted} --wait   # submit it and follow it to the end", err=False)


def _can_ask() -> bool:
    """Questions only for a person at a terminal; a pipe or a batch job takes flags and defaults."""
    return sys.stdin.isatty()
