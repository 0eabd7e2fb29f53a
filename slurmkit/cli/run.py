"""``slurmkit submit``, ``status``, ``watch``, ``cancel`` and ``logs``: thin commands over
submit.py, monitor.py and the registry."""

import sys
import time
from pathlib import Path
from typing import Callable, Optional

import click

from slurmkit.cli import views
from slurmkit.cli.json_output import JsonCommand, JsonLinesCommand, emit
from slurmkit.cli.main import PROFILE_OPTION, complete_job_ids, job_id_arguments, pretty_output, require_stdout
from slurmkit.cli.main import fail as _fail
from slurmkit.cli.remote import REMOTE_OPTION, refuse_remote_ids
from slurmkit.core.errors import SlurmConfigError, SlurmkitError
from slurmkit.core.output import message_line
from slurmkit.core.sbatch_options import DEPENDENCY_TYPES


class ScriptArgsCommand(JsonCommand):
    """A command whose words after ``--`` are the job script's arguments (``ctx.meta["script_args"]``),
    passed to sbatch after the script's name. Only there: a second spec given by mistake stays
    an error, not an argument the job would silently receive."""

    def parse_args(self, ctx, args):
        if "--" in args:
            at = args.index("--")
            ctx.meta["script_args"] = tuple(args[at + 1:])
            args = args[:at]
        return super().parse_args(ctx, args)

    def collect_usage_pieces(self, ctx):
        return [*super().collect_usage_pieces(ctx), "[-- ARGS]..."]


def _said_arguments(args) -> str:
    """`` with arguments 'a b' c`` for the submit line: what the script's $1... are, on one line."""
    return f" with arguments {views.typed_words(args)}" if args else ""


@click.command("submit", cls=ScriptArgsCommand)
@click.argument("spec", type=click.Path(dir_okay=False))
@PROFILE_OPTION
@click.option("--folder", type=click.Path(file_okay=False), help="Logs and exit-status files (default: logs/ beside SPEC).")
@click.option("--after", multiple=True, help="Start after this job id (repeatable).")
@click.option("--after-type", type=click.Choice(list(DEPENDENCY_TYPES)), default="ok", show_default=True,
              help="What the --after jobs must have done.")
@click.option("--dry-run", is_flag=True, help="Ask the controller where and when it would start (sbatch --test-only); queue nothing.")
@click.option("--wait", "wait_", is_flag=True, help="Watch the job until it ends; exit 1 unless it completed.")
@click.option("--ignore-todos", is_flag=True, help="Submit although SPEC still has '# to do:' lines left by import or port.")
@click.option("--json", "as_json", is_flag=True, help="Print what was submitted as JSON (schema 1; slurmkit docs json).")
@click.option("--parsable", is_flag=True, help="Print the job id alone (a chain: its first link's), as sbatch --parsable.")
@REMOTE_OPTION
def submit_command(spec, profile, folder, after, after_type, dry_run, wait_, ignore_todos, as_json, parsable, remote):
    """Render SPEC and submit it.

    Words after `--` go to the job script as sbatch passes them (its $1, "$@"), each one word
    that no shell reads: `slurmkit submit job.yaml -- input.dat 42`. `status` shows them."""
    args = click.get_current_context().meta.get("script_args", ())
    _refuse_with_script_output(as_json, parsable, dry_run, wait_, remote)
    if remote:
        from slurmkit.cli.remote import submit_remote

        return submit_remote(spec, remote, after, after_type, wait_, unsupported={"--profile": profile, "--folder": folder,
                                                                                  "--dry-run": dry_run}, args=args,
                             ignore_todos=ignore_todos)
    from slurmkit.api.job import Job
    from slurmkit.slurm.submit import NotRecorded

    unrecorded = None
    try:
        job = Job.from_yaml(spec)
        warn = lambda f: message_line(f"warning: {f.field}: {f.message}")  # noqa: E731
        if dry_run:
            click.echo(job.test_only(profile, folder, args=args))
            return
        handle = job.submit(profile, folder, after=after, after_type=after_type, warn=warn, args=args, ignore_todos=ignore_todos)
    except NotRecorded as error:  # the job exists: its id comes first, then why it is not recorded
        handle, unrecorded = error.handle, error
    except SlurmkitError as error:
        _fail(error)
    except KeyboardInterrupt:
        message_line("error: interrupted: if sbatch had already accepted the job, `slurmkit status` adopts it")
        sys.exit(130)
    if as_json or parsable:
        return _print_submitted(handle, spec, profile, args, as_json, unrecorded)
    size = getattr(handle, "size", None)
    logs = handle.paths.folder if size is None else handle.tasks[0].paths.folder
    parts = getattr(handle, "parts", ())
    split = f", split into {len(parts)} linked arrays: {' '.join(parts)}" if len(parts) > 1 else ""
    message_line(f"submitted job {handle.job_id}" + (f" (an array of {size} tasks{split})" if size else "") + _said_arguments(args)
                 + f"; logs in {logs}", err=False)
    if unrecorded is not None:
        _fail(unrecorded)
    if wait_:
        sys.exit(_watch([handle.job_id], interval=30.0))


def _refuse_with_script_output(as_json: bool, parsable: bool, dry_run: bool, wait_: bool, remote) -> None:
    """--json and --parsable print what was submitted and return: one of them, never with
    --dry-run, --wait or --remote (their output is not a submission's)."""
    given = "--json" if as_json else "--parsable" if parsable else None
    other = "--parsable" if as_json and parsable else "--dry-run" if dry_run else "--wait" if wait_ else "--remote" if remote else None
    if not (given and other):
        return
    said = f"{given} is not taken with {other}" + (": submit, then follow with `slurmkit watch --json ID`" if other == "--wait" else "")
    if as_json:
        from slurmkit.cli.json_output import USAGE_CODE

        emit(error={"code": USAGE_CODE, "message": said, "field": other})
    message_line(f"error: {said}")
    sys.exit(2)


def _print_submitted(handle, spec, profile, args, as_json: bool, unrecorded) -> None:
    """The id alone (--parsable) or the submission as one JSON document (--json); a job that
    exists but is not recorded still prints its id first, then the error (exit 1)."""
    if not as_json:
        click.echo(handle.job_id)
    else:
        from slurmkit.cli.json_output import error_object

        error = {} if unrecorded is None else {"error": error_object(unrecorded)}
        emit(**views.submitted_fields(handle, spec, profile, args), **error)
    if unrecorded is not None:
        message_line(f"error: {unrecorded.message}")
        sys.exit(unrecorded.exit_code)


def _ids_and_folders(job_ids):
    from slurmkit.slurm.registry import adopt_interrupted, array_tasks, find, submissions

    adopt_interrupted(lambda line: message_line(line), on_error=_fail)  # what an interrupted submit left
    records = find(job_ids) if job_ids else {s.job_id: s for s in [s for s in submissions() if not s.remote][-20:]}
    refuse_remote_ids(records)
    links = [r.job_id for r in records.values() if (r.chain in job_ids or r.sweep in job_ids) and r.job_id not in job_ids]
    ids = list(dict.fromkeys([*job_ids, *links])) or list(records)
    folders = {job_id: record.folder for job_id, record in records.items()}
    sizes = {job_id: array_tasks(record) for job_id, record in records.items() if record.array_size}
    return ids, folders, sizes, records


@click.command("status", cls=JsonCommand)
@click.argument("job_ids", nargs=-1, callback=job_id_arguments, shell_complete=complete_job_ids)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (schema 1; slurmkit docs json).")
@REMOTE_OPTION
def status_command(job_ids, as_json, remote):
    """Where jobs stand (default: the last 20 submissions)."""
    require_stdout()
    if remote:
        from slurmkit.cli.remote import status_remote

        return status_remote(remote, job_ids, as_json)
    # Exit 1, one line, when SLURM cannot be asked: never a table of UNKNOWN.
    from slurmkit.slurm.monitor import poll
    from slurmkit.slurm.sweeps import as_one, joins_of

    ids, folders, sizes, records = _ids_and_folders(job_ids)
    if not ids:
        if as_json:
            emit(jobs=[], arrays=[])
        else:
            click.echo("no jobs submitted with slurmkit yet")
        return
    try:
        statuses = as_one(poll(ids, folders, array_sizes=sizes), joins_of(records))   # a split sweep: one array
        rows = views.status_rows(statuses, records)
    except SlurmkitError as error:
        _fail(error)
    if as_json:
        emit(jobs=rows, arrays=views.array_fields(statuses))
    else:
        views.print_table(rows, statuses=statuses)
    unknown = [job_id for job_id in job_ids if views.cancel_verdicts([job_id], statuses)[job_id] == "unknown"]
    for job_id in unknown:
        message_line(f"error: job {job_id}: SLURM knows no such job: check the id (`slurmkit status` lists yours)")
    if unknown:
        sys.exit(1)
    hint = views.failure_hint(job_ids, statuses)
    if hint and not as_json:
        message_line(hint)


# -------------------------------------------------------------------------------------- watch


def _watch(job_ids, interval: float, as_json: bool = False) -> int:
    """Poll until every job is done; 0 if all completed with their outputs saved, else 1.
    ``as_json``: JSON Lines on stdout (views.json_lines), no report after them."""
    from slurmkit.slurm.sweeps import SweepWatch, joins_of

    try:
        ids, folders, sizes, records = _ids_and_folders(job_ids)
        if not ids:   # nothing to follow: a watch of no job would wait for ever, saying nothing
            message_line("no jobs submitted with slurmkit yet: nothing to watch", err=as_json)
            return 0
        watch = SweepWatch(ids, joins_of(records), interval=interval, folders=folders, array_sizes=sizes)
        if as_json or not pretty_output():
            final = (views.json_lines if as_json else views.plain)(watch, records)
        else:
            final = views.live(watch, records, views.SoFar())
    except SlurmkitError as error:
        if as_json:
            views.json_line("error", error=views.error_fields(error))
            message_line(f"error: {error.message}")
            sys.exit(error.exit_code)
        _fail(error)
    except (KeyboardInterrupt, click.Abort):
        message_line(views.still_running(job_ids))
        return 130
    return _watch_ended(watch, final, ids, records, as_json)


def _watch_ended(watch, final, ids, records, as_json: bool) -> int:
    """What a watch says once every job has ended: the jobs it lost, why each failed job
    failed (its logs' ends), then the reports (not under --json); its exit status."""
    for line in views.forgotten_lines(watch):
        message_line(line)
    ended = {job_id: status for job_id, status in (final or {}).items() if job_id not in watch.forgotten}
    for line in views.failure_lines(ended, records):   # why it failed, where the failure is reported
        message_line(line, err=False)
    ok = 0 if final and all(s.ok for s in final.values()) else 1
    if as_json:
        return ok
    try:
        views.print_reports([job_id for job_id in ids if job_id not in watch.forgotten])
    except (KeyboardInterrupt, click.Abort):
        return 130   # every job had ended: only its report is cut short
    return ok


#: the shortest --interval: polling more often costs SLURM more than it tells (a job is seen
#: within 0.5 s of its start anyway: the cadence starts there and doubles up to the interval).
MIN_INTERVAL_S = 5.0


def interval_seconds(ctx, param, value):
    """Click callback of --interval: a number of seconds above 0, raised to MIN_INTERVAL_S."""
    import math

    if value is None or not math.isfinite(value) or value <= 0:
        raise click.BadParameter(f"{value!r} is not a number of seconds above 0 (give {MIN_INTERVAL_S:g} or more)")
    return max(value, MIN_INTERVAL_S)


@click.command("watch", cls=JsonLinesCommand)
@click.argument("job_ids", nargs=-1, callback=job_id_arguments, shell_complete=complete_job_ids)
@click.option("--interval", type=float, default=30.0, show_default=True, callback=interval_seconds,
              help=f"Poll at least this often (seconds; at least {MIN_INTERVAL_S:g}).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON line per change of a job's state, then one with "
              "the final states (JSON Lines; slurmkit docs json).")
@REMOTE_OPTION
def watch_command(job_ids, interval, as_json, remote):
    """Follow jobs until they end; exit 0 only if all completed.

    On a terminal, the figures so far of up to 3 running jobs (sstat, live GPU samples) show below the table."""
    require_stdout()
    if remote:
        from slurmkit.cli.remote import watch_remote

        if as_json:
            _fail(SlurmkitError("--json is not taken with --remote yet: `slurmkit status --remote CLUSTER --json` polls once"))
        watch_remote(remote, job_ids, interval)
    sys.exit(_watch(job_ids, interval, as_json))


# ------------------------------------------------------------------------------------- cancel


@click.command("cancel")
@click.argument("job_ids", nargs=-1, required=True, callback=job_id_arguments, shell_complete=complete_job_ids)
@REMOTE_OPTION
def cancel_command(job_ids, remote):
    """Cancel jobs."""
    # An unknown id, or one that had already ended, is an error (exit 1); the others are still cancelled.
    from slurmkit.slurm.monitor import poll
    from slurmkit.slurm.slurmcli import scancel

    if remote:
        from slurmkit.cli.remote import cancel_remote

        return cancel_remote(remote, job_ids)
    from slurmkit.slurm.sweeps import as_one, joins_of

    ids, folders, sizes, records = _ids_and_folders(job_ids)
    joins = joins_of(records)
    try:
        verdicts = views.cancel_verdicts(job_ids, as_one(poll(ids, folders, array_sizes=sizes), joins))
        live = [job_id for job_id in job_ids if verdicts[job_id] == "live"]
        parts = [part for part, (sweep, _) in joins.items() if sweep in live and part not in live]   # a split sweep's other arrays
        refused = scancel([*live, *parts]) if live else {}
    except SlurmkitError as error:
        _fail(error)
    live = [job_id for job_id in live if job_id not in refused]
    if live:
        click.echo(f"cancelled {' '.join(live)}")
    for job_id in job_ids:
        if job_id in refused:
            message_line(f"error: job {job_id}: scancel refused it: {refused[job_id]}")
        elif verdicts[job_id] == "unknown":
            message_line(f"error: job {job_id}: SLURM knows no such job: check the id (`slurmkit status` lists yours)")
        elif verdicts[job_id] != "live":
            message_line(f"error: job {job_id} had already ended ({verdicts[job_id]}): nothing to cancel")
    if len(live) < len(job_ids):
        sys.exit(1)


# --------------------------------------------------------------------------------------- logs

class JobLogGone(SlurmkitError):
    """A job's log that will never be printed: gone after the job ended, or not a readable file."""

    exit_code = 1


def log_job_id(ctx, param, value):
    """Click callback of logs' JOBID: a job id as every command takes it, or a het job's
    component (``123+1``), whose logs are its job's."""
    head, plus, component = value.partition("+")
    if plus and head.isascii() and head.isdigit() and component.isascii() and component.isdigit():
        return value
    return job_id_arguments(ctx, param, value)


@click.command("logs")
@click.argument("job_id", callback=log_job_id, shell_complete=complete_job_ids)
@click.option("--err", is_flag=True, help="Show stderr instead of stdout.")
@click.option("--follow", "-f", is_flag=True, help="Keep printing until the job ends.")
@click.option("--task", type=click.IntRange(min=0), help="One task of an array (as JOBID_TASK does); without it, every task's log.")
@REMOTE_OPTION
def logs_command(job_id, err, follow, task, remote):
    """Print a job's output; an array's, every task's under a header (one task: ID_TASK or --task)."""
    require_stdout()
    if remote:
        from slurmkit.cli.remote import logs_remote

        return logs_remote(remote, job_id, err, follow, task)
    from slurmkit.slurm.jobfiles import job_log_ids
    from slurmkit.slurm.registry import RegistryError, array_tasks, find

    try:
        record = find([job_id.split("+")[0]]).get(job_id.split("_")[0].split("+")[0])
    except RegistryError as error:
        _fail(error)
    if record is None:
        _fail(SlurmkitError(f"job {job_id} was not submitted with slurmkit here; its logs are where its --output says"))
    refuse_remote_ids({record.job_id: record})
    if record.parts and not record.sweep:   # a split sweep: its tasks by their point, in the part that ran each
        return _sweep_logs(job_id, task, record, err, follow)
    try:
        ids = job_log_ids(job_id, array_tasks(record) if record.array_size else None, task)
    except SlurmkitError as error:
        _fail(error)
    _require_folder(ids[0], record.folder)
    if len(ids) > 1:
        if follow:
            _fail(SlurmkitError(f"logs -f follows one task: give --task N (or {record.job_id}_N)"))
        return _print_tasks(ids, record, err)
    job_id = ids[0]
    path = _log_path(job_id, record, err)
    if not follow:
        if not path.exists():
            _refuse_gone_log(path, _ended_state(job_id, record.folder))
            _fail(SlurmkitError(f"no {path.name} yet in {path.parent}: the job has not started writing"))
        _print_from(path, 0)
        return
    _follow(job_id, path, record.folder, find=(lambda: _log_path(job_id, record, err, quiet=True)) if record.logs else None)


def _sweep_logs(job_id: str, task, record, err: bool, follow: bool) -> None:
    """``logs`` of a split sweep: point N (``ID_N``, ``--task N``) from the part that ran it, as
    that part's task; without a point, every part's tasks in turn."""
    from slurmkit.slurm.registry import find
    from slurmkit.slurm.sweeps import locate, parts_of

    parts = parts_of(record, find([record.job_id]))
    point = task if task is not None else int(job_id.partition("_")[2]) if "_" in job_id else None
    if point is None:
        if follow:
            _fail(SlurmkitError(f"logs -f follows one task: give --task N (or {record.job_id}_N)"))
        for part in parts:
            _print_tasks([f"{part.job_id}_{i}" for i in range(part.array_size or 0)], part, err)
        return
    if point >= sum(part.array_size or 0 for part in parts):
        _fail(SlurmkitError(f"job {record.job_id} has no task {point}: its tasks are 0-{sum(p.array_size or 0 for p in parts) - 1}"))
    part, local = locate(point, parts)
    logs_command.callback(f"{part.job_id}_{local}", err, follow, None, None)   # type: ignore[misc]


def _print_tasks(ids, record, err: bool) -> None:
    """Every task's log under a ``==> ID <==`` header (as ``tail`` heads several files); a log
    that several tasks share (a name without %a) once. Tasks without a log are one line on
    stderr; none at all is an error (exit 2, as for one job's log not yet written)."""
    from slurmkit.slurm.jobfiles import task_list

    paths = {job_id: _log_path(job_id, record, err, quiet=job_id != ids[0]) for job_id in ids}
    shown: set = set()
    missing = []
    for job_id, path in paths.items():
        if not path.exists():
            missing.append(job_id)
        elif path not in shown:
            if len(set(paths.values())) > 1:
                click.echo(("\n" if shown else "") + f"==> {job_id} <==")
                sys.stdout.flush()
            shown.add(path)
            _print_from(path, 0)
    if not shown:
        _fail(SlurmkitError(f"no task of array {record.job_id} has a log in {record.folder} yet: none has started writing"))
    if missing:
        tasks = task_list([int(job_id.rpartition("_")[2]) for job_id in missing])
        message_line(f"slurmkit: no log (not started, or gone) for {len(missing)} of {len(ids)} tasks: {tasks}")


def _log_path(job_id: str, record, err: bool, quiet: bool = False) -> Path:
    """The job's log: slurmkit's, or where the spec's logs named it. With logs.output alone,
    sbatch writes stderr into the output log: that is the one --err shows, said on stderr."""
    from slurmkit.slurm.jobfiles import job_log_path

    path = job_log_path(record.folder, job_id, "stderr" if err else "stdout", record.logs or ())
    if path is None:
        if not quiet:
            message_line("slurmkit: the spec names no logs.error, so stderr is in the output log: showing it")
        path = job_log_path(record.folder, job_id, "stdout", record.logs or ())
    assert path is not None, "an output log always has a path"
    return path


def _ended_state(job_id: str, folder: str) -> Optional[str]:
    """The state of ``job_id`` if it has ended (its exit file or SLURM says so), else None (also
    when SLURM cannot be asked: then its log may still come)."""
    from slurmkit.slurm.monitor import Poller

    try:
        status = Poller({job_id.split("_")[0]: folder}).poll([job_id]).get(job_id)
    except SlurmConfigError as error:   # nothing will ever answer: say so, not "not started"
        _fail(error)
    except SlurmkitError:
        return None
    return status.state if status is not None and status.done else None


def _refuse_gone_log(path: Path, ended: Optional[str]) -> None:
    """A missing log of a job that has ended will never come: one line (exit 1), not "not started"."""
    if ended is not None and not path.exists():
        _fail(JobLogGone(f"the log {path} is gone (the job ended {ended})"))


def _require_folder(job_id: str, folder: str) -> None:
    """The job's log folder is there, else one line (exit 1): nothing would ever be printed from it."""
    from slurmkit.slurm.jobfiles import JobFolderGone

    if not Path(folder).is_dir():
        _fail(JobFolderGone(f"the log folder of job {job_id}, {folder}, is gone (moved or deleted): "
                            "its logs and exit file were there"))


def _print_from(path: Path, position: int) -> int:
    """Print what ``path`` holds past ``position``; the new position."""
    if not path.exists():
        return position
    from slurmkit.core.files import open_regular

    try:
        with open_regular(path) as handle:
            handle.seek(position)
            chunk = handle.read()
    except OSError as error:   # a named pipe, a device, a folder, unreadable: never a traceback
        _fail(JobLogGone(f"{path}: cannot read it as the job's log: {error.strerror or error}"))
    sys.stdout.flush()
    sys.stdout.buffer.write(chunk)   # the log's bytes as they are (escape sequences, any encoding)
    sys.stdout.flush()
    return position + len(chunk)


def _follow(job_id: str, path: Path, folder: str, read_every_s: float = 1.0, find: Optional[Callable[[], Path]] = None) -> None:
    """Print the log as it grows (a local read each second); ask SLURM on the polling Cadence.
    ``find``: where the log is, asked again until it exists (a name with %N is known only then)."""
    from slurmkit.slurm.monitor import Cadence, Poller, SlurmNotConfigured, SlurmUnreachable

    poller, cadence = Poller({job_id.split("_")[0]: folder}, waiting=True), Cadence(30.0)
    position, next_poll = 0, time.monotonic()
    while True:
        _require_folder(job_id, folder)
        path = find() if find and not path.exists() else path
        position = _print_from(path, position)
        if time.monotonic() >= next_poll:
            try:
                status = poller.poll([job_id]).get(job_id)
            except (SlurmNotConfigured, SlurmConfigError) as error:
                _fail(error)
            except SlurmUnreachable:
                status = None
            if status is not None and status.done:
                _refuse_gone_log(path, status.state)
                _print_from(path, position)   # the tail written as it ended
                return
            next_poll = time.monotonic() + cadence.next()
        time.sleep(read_every_s)
