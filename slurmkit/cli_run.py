"""``slurmkit submit``, ``status``, ``watch``, ``cancel`` and ``logs``: thin commands over
submit.py, monitor.py and the registry."""

import json
import sys
import time
from pathlib import Path

import click

from .errors import SlurmkitError
from .monitor import TERMINAL as TERMINAL_STATES

from .cli import PROFILE_OPTION, fail as _fail, pretty_output


@click.command("submit")
@click.argument("spec", type=click.Path(dir_okay=False))
@PROFILE_OPTION
@click.option("--folder", type=click.Path(file_okay=False), help="Logs and exit-status files (default: logs/ beside SPEC).")
@click.option("--after", multiple=True, help="Start after this job id (repeatable).")
@click.option("--after-type", type=click.Choice(["ok", "any", "notok"]), default="ok", show_default=True,
              help="What the --after jobs must have done.")
@click.option("--dry-run", is_flag=True, help="Ask the controller where and when it would start (sbatch --test-only); queue nothing.")
@click.option("--wait", "wait_", is_flag=True, help="Watch the job until it ends; exit 1 unless it completed.")
def submit_command(spec, profile, folder, after, after_type, dry_run, wait_):
    """Render SPEC and submit it."""
    from .job import Job
    from .submit import NotRecorded

    unrecorded = None
    try:
        job = Job.from_yaml(spec)
        warn = lambda f: click.echo(f"warning: {f.field}: {f.message}", err=True)  # noqa: E731
        if dry_run:
            click.echo(job.test_only(profile, folder))
            return
        handle = job.submit(profile, folder, after=after, after_type=after_type, warn=warn)
    except NotRecorded as error:  # the job exists: its id comes first, then why it is not recorded
        handle, unrecorded = error.handle, error
    except SlurmkitError as error:
        _fail(error)
    except KeyboardInterrupt:
        click.echo("error: interrupted: if sbatch had already accepted the job, `slurmkit status` adopts it", err=True)
        sys.exit(130)
    size = getattr(handle, "size", None)
    click.echo(f"submitted job {handle.job_id}" + (f" (an array of {size} tasks)" if size else "") + f"; logs in {handle.paths.folder if size is None else handle.tasks[0].paths.folder}")
    if unrecorded is not None:
        _fail(unrecorded)
    if wait_:
        sys.exit(_watch([handle.job_id], interval=30.0))


def _ids_and_folders(job_ids):
    from .registry import adopt_interrupted, find, submissions

    adopt_interrupted(lambda line: click.echo(line, err=True), on_error=_fail)  # what an interrupted submit left
    records = find(job_ids) if job_ids else {s.job_id: s for s in submissions()[-20:]}
    links = [r.job_id for r in records.values() if r.chain in job_ids and r.job_id not in job_ids]
    ids = list(dict.fromkeys([*job_ids, *links])) or list(records)
    folders = {job_id: record.folder for job_id, record in records.items()}
    sizes = {job_id: record.array_size for job_id, record in records.items() if record.array_size}
    return ids, folders, sizes, records


def _rows(statuses, records):
    """One row a job; the links of a chain fold into one row for the chain, listing its links."""
    rows, chains = [], {}
    for job_id, status in statuses.items():
        record = records.get(job_id.split("_")[0])
        row = {"job": job_id, "name": record.name if record else "", "state": status.state, "exit_code": status.exit_code,
               "elapsed_s": status.elapsed_s, "nodes": status.nodes, "source": status.source}
        if record is not None and record.chain:
            chains.setdefault(record.chain, []).append((record.link, row))
        else:
            rows.append(row)
    for chain_id, links in chains.items():
        links = [row for _, row in sorted(links, key=lambda pair: pair[0] or 0)]
        current = next((row for row in links if row["state"] not in TERMINAL_STATES), links[-1])
        rows.append({**current, "job": chain_id, "name": f"{current['name']} (chain, link {links.index(current) + 1}/{len(links)})",
                     "links": [{"job": row["job"], "state": row["state"], "exit_code": row["exit_code"]} for row in links]})
    return rows


def _print_table(rows, title=None):
    columns = ("job", "name", "state", "exit_code", "elapsed_s", "nodes", "source")
    if not pretty_output():
        for row in rows:
            click.echo("\t".join("" if row[c] is None else str(row[c]) for c in columns))
        return
    from rich.console import Console

    Console().print(_rich_table(rows, columns, title))


def _rich_table(rows, columns, title=None):
    from rich.table import Table

    table = Table(title=title)
    for column in columns:
        table.add_column(column.replace("_", " "))
    colours = {"COMPLETED": "green", "RUNNING": "cyan", "PENDING": "yellow"}
    for row in rows:
        cells = ["" if row[c] is None else str(row[c]) for c in columns]
        colour = colours.get(row["state"], "red" if row["state"] not in ("UNKNOWN",) else "white")
        cells[2] = f"[{colour}]{cells[2]}[/]"
        table.add_row(*cells)
    return table


@click.command("status")
@click.argument("job_ids", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status_command(job_ids, as_json):
    """Where jobs stand (default: the last 20 submissions)."""
    from .monitor import poll

    ids, folders, sizes, records = _ids_and_folders(job_ids)
    if not ids:
        click.echo("no jobs submitted with slurmkit yet")
        return
    rows = _rows(poll(ids, folders, array_sizes=sizes), records)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        _print_table(rows)


def _watch(job_ids, interval: float) -> int:
    """Poll until every job is done; 0 if all completed, else 1."""
    from .monitor import Watch

    ids, folders, sizes, records = _ids_and_folders(job_ids)
    watch = Watch(ids, interval=interval, folders=folders, array_sizes=sizes)
    final = {}
    if pretty_output():
        from rich.live import Live

        with Live(refresh_per_second=2) as live:
            for final in watch:
                live.update(_rich_table(_rows(final, records), ("job", "name", "state", "exit_code", "elapsed_s", "nodes", "source"),
                                        title=f"{sum(s.done for s in final.values())}/{len(final)} done"))
    else:
        seen = {}
        for final in watch:
            for job_id, status in final.items():
                if seen.get(job_id) != status.state:
                    seen[job_id] = status.state
                    code = "" if status.exit_code is None else f" exit {status.exit_code}"
                    click.echo(f"{time.strftime('%H:%M:%S')} {job_id} {status.state}{code if status.done else ''}")
    _print_reports(ids)
    return 0 if final and all(s.ok for s in final.values()) else 1


def _print_reports(job_ids) -> None:
    """The efficiency report of each job once it ended (skipped, with a note, without accounting)."""
    from . import efficiency

    for job_id in job_ids:
        try:
            click.echo(efficiency.format_report(efficiency.report_for(job_id)), nl=False)
        except SlurmkitError as error:
            click.echo(f"no efficiency report for {job_id}: {error.message}", err=True)


@click.command("watch")
@click.argument("job_ids", nargs=-1)
@click.option("--interval", type=float, default=30.0, show_default=True, help="Poll at least this often (seconds).")
def watch_command(job_ids, interval):
    """Follow jobs until they end; exit 0 only if all completed."""
    sys.exit(_watch(job_ids, interval))


@click.command("cancel")
@click.argument("job_ids", nargs=-1, required=True)
def cancel_command(job_ids):
    """Cancel jobs."""
    from .slurmcli import run_slurm

    try:
        run_slurm(["scancel", *job_ids])
    except SlurmkitError as error:
        _fail(error)
    click.echo(f"cancelled {' '.join(job_ids)}")


@click.command("logs")
@click.argument("job_id")
@click.option("--err", is_flag=True, help="Show stderr instead of stdout.")
@click.option("--follow", "-f", is_flag=True, help="Keep printing until the job ends.")
def logs_command(job_id, err, follow):
    """Print a job's output (an array task as ID_TASK)."""
    from .monitor import poll
    from .registry import find

    record = find([job_id]).get(job_id.split("_")[0])
    if record is None:
        _fail(SlurmkitError(f"job {job_id} was not submitted with slurmkit here; its logs are where its --output says"))
    path = Path(record.folder) / f"{job_id}_0_log.{'err' if err else 'out'}"
    position = 0
    while True:
        if path.exists():
            with open(path, "rb") as handle:
                handle.seek(position)
                chunk = handle.read()
                position += len(chunk)
            sys.stdout.write(chunk.decode("utf-8", "replace"))
            sys.stdout.flush()
        if not follow:
            if not path.exists():
                _fail(SlurmkitError(f"no {path.name} yet in {record.folder}: the job has not started writing"))
            return
        status = poll([job_id], {job_id.split("_")[0]: record.folder}).get(job_id)
        if status is not None and status.done:
            follow = False  # one last read above caught the tail
            continue
        time.sleep(1.0)
