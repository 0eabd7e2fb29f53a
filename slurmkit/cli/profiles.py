"""``slurmkit profiles``: list, show, validate and detect site profiles.

Thin commands over :mod:`slurmkit.sites.profiles` and :mod:`slurmkit.sites.detect`; both (and yaml, rich)
are imported inside the commands so that ``slurmkit profiles --help`` stays cheap.
"""

from __future__ import annotations

import functools
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional, Tuple

import click

from slurmkit.cli.json_output import JsonCommand, emit, error_object
from slurmkit.cli.main import complete_profile_names, fail, pretty_output
from slurmkit.core.errors import SlurmkitError
from slurmkit.core.files import write_atomic
from slurmkit.core.output import message_line, verbatim

if TYPE_CHECKING:
    from slurmkit.sites.profiles import Accounts, Launch, Scheduling, SiteProfile, Software, Storage


def _reports_errors(command):
    """Turn a SlurmkitError into its one line on stderr and its exit code (never a traceback),
    and each warning (a retired cluster's profile) into one ``warning:`` line, as it happens."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("default")
                warnings.showwarning = lambda message, *rest, **kw: message_line(f"warning: {message}")
                return command(*args, **kwargs)
        except SlurmkitError as error:
            fail(error)

    return wrapper


@click.group("profiles")
def profiles():
    """List, show, validate and detect site profiles (what slurmkit knows about a cluster)."""


# -------------------------------------------------------------------------------------- list

@profiles.command("list", cls=JsonCommand)
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts (schema 1; slurmkit docs json).")
@click.option("--all", "include_abstract", is_flag=True, help="Include abstract bases (such as alliance).")
@_reports_errors
def list_command(as_json, include_abstract):
    """List the profiles on the search path.

    Searched in order: ./site_profiles, ~/.config/slurmkit/site_profiles ($XDG_CONFIG_HOME),
    then the bundled ones; the first profile of a name wins.
    """
    from slurmkit.sites.profiles import list_profiles

    found, errors = list_profiles(include_abstract=include_abstract)
    if as_json:
        emit(profiles=[_list_entry(p) for p in found], errors=[error_object(e) for e in errors])
    else:
        rows = [[p.name, _status_text(p), _first([t.name for t in p.node_types], 4),
                 ", ".join(p.gpu_models) or "-", _walltime(p)] for p in found]
        _table(["name", "status", "node types", "GPU models", "max walltime"], rows)
    for error in errors:  # one broken file hides only its own profile
        message_line(f"error: {error.message} (skipped; the other profiles are listed)")
    if errors:
        sys.exit(2)


def _first(names, limit) -> str:
    """``a, b, c, d +4 more``: the table stays readable; --json has every name."""
    shown = ", ".join(names[:limit]) or "-"
    return shown + (f" +{len(names) - limit} more" if len(names) > limit else "")


def _list_entry(profile) -> dict:
    return {
        "name": profile.name,
        "status": profile.status.state,
        "successor": profile.status.successor,
        "abstract": profile.abstract,
        "description": profile.description,
        "node_types": [t.name for t in profile.node_types],
        "gpu_models": list(profile.gpu_models),
        "max_walltime": _walltime(profile),
        "max_walltime_seconds": profile.scheduling.max_walltime_seconds,
        "path": str(profile.path),
    }


def _status_text(profile) -> str:
    if profile.abstract:
        return "abstract"
    if profile.is_retired:
        return f"retired -> {profile.status.successor}"
    return profile.status.state


def _walltime(profile) -> str:
    from slurmkit.core.units import format_duration

    seconds = profile.scheduling.max_walltime_seconds
    return "-" if seconds is None else format_duration(seconds)


# -------------------------------------------------------------------------------------- show

@profiles.command("show", cls=JsonCommand)
@click.argument("name", required=False, shell_complete=complete_profile_names)
@click.option("--yaml", "as_yaml", is_flag=True, help="Print the merged profile as YAML.")
@click.option("--json", "as_json", is_flag=True, help="Print the merged profile as JSON (schema 1; slurmkit docs json).")
@_reports_errors
def show_command(name, as_yaml, as_json):
    """Summarise profile NAME (default: the one detected here)."""
    from slurmkit.sites.profiles import load_profile, retirement_notice, select_profile

    if name:
        profile, reason = load_profile(name), None
        notice = retirement_notice(profile)
        if notice:
            warnings.warn(notice)
    else:
        profile, detection = select_profile()
        reason = detection.reason
    if as_yaml:
        import yaml

        verbatim(yaml.safe_dump(profile.raw, sort_keys=False, allow_unicode=True, width=100))
    elif as_json:
        emit(name=profile.name, chosen_by=reason, profile=profile.raw)
    else:
        for line in _summary(profile, reason):
            message_line(line, err=False)   # a profile's values may hold escape sequences ("\e" in YAML)
        if profile.node_types:
            click.echo("")
            _table(["node type", "nodes", "cores", "sockets", "memory", "local disk", "GPUs"],
                   [_node_type_row(t) for t in profile.node_types])


Row = Tuple[str, str]   # (label, value) of one line of ``profiles show``


def _summary(profile: SiteProfile, reason: Optional[str]) -> List[str]:
    """The lines of ``profiles show``: the name, then one labelled row per part of the profile."""
    rows = (_identity_rows(profile, reason) + _scheduling_rows(profile.scheduling)
            + [("accounts", _accounts_text(profile.accounts)), ("storage", _storage_text(profile.storage)),
               ("software", _software_text(profile.software)), ("launch", _launch_text(profile.launch))]
            + _rule_rows(profile))
    width = max(len(label) for label, _ in rows)
    title = f"{profile.name}: {profile.description or ''}".rstrip(": ")
    return [title] + [f"  {label.ljust(width)}  {value}" for label, value in rows]


def _identity_rows(profile: SiteProfile, reason: Optional[str]) -> List[Row]:
    """Which file it is, why it was chosen, whether the cluster runs, and how it is recognised."""
    where = str(profile.path) + (f" (extends {profile.extends})" if profile.extends else "")
    rows = [("file", where)] + ([("chosen by", reason)] if reason else [])
    status = profile.status
    state = status.state + (f" since {status.since.isoformat()}" if status.since else "")
    if profile.is_retired:
        state = f"retired on {status.retired_on}; successor {status.successor}"
    rows.append(("status", state + (f" ({status.note})" if status.note else "")))
    detect = profile.detect
    by = [f"$CC_CLUSTER={'|'.join(detect.cc_cluster)}" if detect.cc_cluster else "",
          f"$SLURM_CLUSTER_NAME={'|'.join(detect.slurm_cluster_name)}" if detect.slurm_cluster_name else "",
          f"hostname like {', '.join(detect.hostnames)}" if detect.hostnames else ""]
    rows.append(("detected by", "; ".join(filter(None, by)) or "never (choose it with --profile)"))
    return rows


def _scheduling_rows(sched: Scheduling) -> List[Row]:
    """Walltime, whole nodes, memory and partitions."""
    from slurmkit.core.units import format_duration

    walltime = "max " + ("?" if sched.max_walltime_seconds is None else format_duration(sched.max_walltime_seconds))
    if sched.min_walltime_advice_seconds:
        walltime += f"; the site asks for at least {format_duration(sched.min_walltime_advice_seconds)}"
    rows = [("walltime", walltime)]
    if sched.whole_node:
        counts = f", GPU counts {', '.join(map(str, sched.whole_node.gpu_counts))}" if sched.whole_node.gpu_counts else ""
        rows.append(("whole nodes", f"only ({sched.whole_node.cores or '?'} cores{counts})"))
    rows.append(("memory", {True: "--mem is honoured", False: "--mem is ignored", None: "?"}[sched.mem_request]
                 + (f"; default {_size(sched.default_mem_per_cpu_mib)} per CPU" if sched.default_mem_per_cpu_mib else "")))
    partitions = sched.partitions
    allowed = f" (allowed: {', '.join(partitions.allowed)})" if partitions.allowed else ""
    rows.append(("partitions", f"{partitions.name_partition or '?'}{allowed}"))
    return rows


def _accounts_text(accounts: Accounts) -> str:
    return f"--account {accounts.required or '?'}" + (f"; prefixes {', '.join(accounts.prefixes)}" if accounts.prefixes else "")


def _storage_text(storage: Storage) -> str:
    areas = [f"{label} {area.path or '?'} ({_size(area.quota_mib)}{', purged' if area.purged else ''})"
             for label, area in (("home", storage.home), ("project", storage.project), ("scratch", storage.scratch)) if area]
    if storage.slurm_tmpdir:
        areas.append(f"$SLURM_TMPDIR {storage.slurm_tmpdir.kind or '?'} {_size(storage.slurm_tmpdir.size_mib)}")
    if storage.filesystem:
        areas.append(f"file systems {storage.filesystem.words()}")
    areas.append("internet on compute nodes: " + {True: "yes", False: "no", None: "?"}[storage.internet_on_compute])
    return "; ".join(areas)


def _software_text(software: Software) -> str:
    preload = " ".join(software.preload + ((software.stdenv,) if software.stdenv else ()))
    modules = ", ".join(m for m in software.modules.values() if m)
    return "; ".join(filter(None, [software.module_system or "?", preload, modules]))


def _launch_text(launch: Launch) -> str:
    mpi = launch.mpi
    return "; ".join(filter(None, [launch.default or "?", f"MPI {mpi.flavour}" if mpi.flavour else "",
                                   f"srun --mpi={mpi.srun_mpi}" if mpi.srun_mpi else "",
                                   " ".join(filter(None, [launch.interconnect.fabric, launch.interconnect.speed]))]))


def _rule_rows(profile: SiteProfile) -> List[Row]:
    """The site's rules, one row each as siterules states them, and its documentation."""
    from slurmkit.resolve.siterules import rule_lines

    rows = [("rules" if index == 0 else "", f"{line.text} [{line.source}]") for index, line in enumerate(rule_lines(profile))]
    return rows + ([("docs", " ".join(profile.docs))] if profile.docs else [])


def _size(mib: Optional[int]) -> str:
    from slurmkit.core.units import format_size

    return "?" if mib is None else format_size(mib)


def _node_type_row(node_type):
    from slurmkit.core.units import format_size

    disk = node_type.local_disk
    gpus = node_type.gpus
    gpu_text = "-"
    if gpus:
        gpu_text = f"{gpus.count} x {gpus.model}" + (f" {format_size(gpus.memory_mib)}" if gpus.memory_mib else "")
        gpu_text += f" (gres {gpus.gres})" if gpus.gres else " (untyped gres)"
        if gpus.mig:
            gpu_text += "; MIG " + ", ".join(m.profile for m in gpus.mig)
    disk_text = "-" if not disk else " ".join(filter(None, [format_size(disk.size_mib) if disk.size_mib else "?", disk.kind]))
    return [node_type.name, "?" if node_type.count is None else str(node_type.count), str(node_type.cores),
            "?" if node_type.sockets is None else str(node_type.sockets), format_size(node_type.memory_mib), disk_text, gpu_text]


# ---------------------------------------------------------------------------------- validate

@profiles.command("validate")
@click.argument("files", nargs=-1, required=True)
@_reports_errors
def validate_command(files):
    """Check profile FILES against the schema, sources included.

    The schema is `slurmkit docs site-profiles`; each problem is one line: file, line, key path.
    """
    from slurmkit.sites.profiles import validate_file

    failed = False
    for file in files:
        errors = validate_file(file)
        for error in errors:
            message_line(f"error: {error.message}")
        if not errors:
            message_line(f"ok: {file}", err=False)
        failed = failed or bool(errors)
    if failed:
        sys.exit(2)


# ------------------------------------------------------------------------------------ detect

@profiles.command("detect")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the profile here (NAME.yaml) instead of stdout.")
@click.option("--name", help="The profile's name (default: the output file's name, else the cluster's).")
@click.option("--force", is_flag=True, help="Overwrite OUTPUT if it exists.")
@_reports_errors
def detect_command(output, name, force):
    """Build a profile from the live cluster.

    Reads scontrol (config, nodes, partitions), sacctmgr where readable, and one
    `sbatch --test-only` (which queues nothing); checks the result before writing it.
    """
    from slurmkit.core.errors import ProfileError
    from slurmkit.sites.detect import build_profile, gather_facts, profile_name, summary_lines
    from slurmkit.sites.profiles import validate_text

    target = Path(output) if output else None
    if target is not None:
        if target.suffix != ".yaml":
            raise ProfileError(target, None, "", "a profile file's name ends in .yaml (its name is the file name without it)")
        if name and name != target.stem:
            raise ProfileError(target, None, "name", f"--name {name} differs from the file name; a profile's name is its file name")
        if target.exists() and not force:
            raise ProfileError(target, None, "", "exists; pass --force to overwrite it")
    facts = gather_facts()
    name = name or (target.stem if target else profile_name(facts.cluster_name))
    detected = build_profile(facts, name)
    problems = validate_text(detected.text, target or Path.cwd() / "site_profiles" / f"{name}.yaml")
    if problems:  # a bug in detect, not in the user's input
        message_line(detected.text)
        message_line(f"error: the detected profile does not validate: {problems[0].message}")
        sys.exit(1)
    report = summary_lines(facts)
    if target is None:
        verbatim(detected.text)
        for line in report:
            message_line(line)
        return
    try:
        write_atomic(target, detected.text, replace_link=force)
    except SlurmkitError as error:
        fail(error)
    for line in report:
        click.echo(line)
    message_line(f"wrote {target}: check the nulls, then `slurmkit profiles show {name}`"
               + ("" if target.parent.name == "site_profiles" else " (put it in ./site_profiles/ to use it by name)"), err=False)


# ------------------------------------------------------------------------------------ output

def _table(headers, rows) -> None:
    """A rich table on a terminal, tab-free aligned columns when piped (for grep and awk)."""
    if pretty_output():
        from rich.console import Console
        from rich.table import Table

        table = Table(*headers, box=None, header_style="bold")
        for row in rows:
            table.add_row(*row)
        Console().print(table)
        return
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows)]
    for row in [headers] + rows:
        message_line("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip(), err=False)
