"""``--remote CLUSTER`` for submit, status, watch, logs, cancel and report, and ``slurmkit fetch``:
thin click layers over remote.py (the connection) and remote_jobs.py (the job's folder)."""

import sys
import time
from pathlib import Path, PurePosixPath
from typing import Optional

import click

from slurmkit.cli.main import complete_job_ids, fail
from slurmkit.core.errors import SlurmkitError

#: the --remote option of the job commands (the command's own function hands over when it is given).
REMOTE_OPTION = click.option("--remote", metavar="CLUSTER",
                             help="Do it on CLUSTER over one SSH connection from here (slurmkit docs laptop).")


def refuse_remote_ids(records) -> None:
    """A job submitted with --remote, named without it: say which --remote it needs (its id
    means nothing to the SLURM here, or another job)."""
    for job_id, record in records.items():
        if record.remote:
            fail(SlurmkitError(f"job {job_id} was submitted to {record.profile} with --remote: add "
                               f"`--remote {record.profile}`"))


def connect(cluster: str, gpu: bool = False, target: Optional[str] = None):
    """A Connection to ``cluster`` (a profile name); ``target`` is a registry record's ssh target."""
    from slurmkit.sites.profiles import select_profile
    from slurmkit.slurm.remote import Connection, remote_for, stderr_say

    profile = select_profile(cluster, warn_retired=False)[0]
    remote = remote_for(profile, gpu)
    if target:
        user, _, host = target.rpartition("@")
        remote = remote._replace(host=host, user=user or None)
    return Connection(remote, say=stderr_say)


def _records(cluster: str, job_ids):
    """The registry's records of ``cluster``'s remote jobs: those named, else its last 20."""
    from slurmkit.slurm.registry import find, submissions

    if job_ids:
        found = find(job_ids)
        for job_id in job_ids:
            record = found.get(job_id.split("_")[0])
            if record is None or not record.remote:
                fail(SlurmkitError(f"job {job_id} was not submitted with --remote from here: "
                                   "`slurmkit status --remote CLUSTER` lists those that were"))
        return found
    mine = [s for s in submissions() if s.remote and s.profile == cluster]
    return {s.job_id: s for s in mine[-20:]}


def _ids_folders_sizes(records, job_ids):
    from slurmkit.slurm.registry import array_tasks

    ids = list(job_ids) or list(records)
    folders = {job_id: record.folder for job_id, record in records.items()}
    sizes = {job_id: array_tasks(record) for job_id, record in records.items() if record.array_size}
    return ids, folders, sizes


def _adopt(conn, cluster: str) -> None:
    """Intents an interrupted remote submit left, looked up on the cluster by their tokens."""
    from slurmkit.slurm.registry import adopt_interrupted
    from slurmkit.slurm.remote import remote_tokens

    adopt_interrupted(lambda line: click.echo(line, err=True), lookup=lambda since: remote_tokens(conn, since),
                      on_error=fail, which=lambda entry: bool(entry.remote) and entry.profile == cluster)


# ------------------------------------------------------------------------------------ submit

def submit_remote(spec: str, cluster: str, after, after_type: str, wait_: bool, unsupported=None, args=(),
                  ignore_todos: bool = False) -> None:
    """``unsupported``: the options of local submit given with --remote (refused: CLUSTER is the
    profile, logs live beside the job's folder on the cluster, and --dry-run is not there yet)."""
    from slurmkit.api.job import Job
    from slurmkit.core.todos import refuse_open_todos
    from slurmkit.slurm.remote_jobs import submit
    from slurmkit.slurm.submit import NotRecorded

    given = [name for name, value in (unsupported or {}).items() if value and not (name == "--profile" and value == cluster)]
    if given:
        fail(SlurmkitError(f"{given[0]} is not taken with --remote: the cluster's profile is --remote's CLUSTER, its logs go "
                           "to logs/ beside the job's folder there, and --dry-run is not available remotely yet"))

    unrecorded = None
    try:
        job = Job.from_yaml(spec)
        if not ignore_todos:
            refuse_open_todos(job._spec_path())   # before the cluster is asked anything
        conn = connect(cluster, gpu=job.spec.resources.gpus is not None)
        handle = submit(job, conn, after=after, after_type=after_type, args=args, ignore_todos=True,
                        warn=lambda f: click.echo(f"warning: {f.field}: {f.message}", err=True))
    except NotRecorded as error:
        handle, unrecorded = error.handle, error
    except SlurmkitError as error:
        fail(error)
    except KeyboardInterrupt:
        click.echo(f"error: interrupted: if sbatch had already accepted the job, `slurmkit status --remote {cluster}` adopts it", err=True)
        sys.exit(130)
    what = f" (an array of {handle.size} tasks)" if handle.size else ""
    click.echo(f"submitted job {handle.job_id}{what} on {conn.remote.host}; logs in {handle.folder} there "
               f"(`slurmkit fetch {handle.job_id}` brings them here)")
    if unrecorded is not None:
        fail(unrecorded)
    if wait_:
        sys.exit(_watch(conn, cluster, [handle.job_id], 30.0))


# ------------------------------------------------------------------------- status and watch

def status_remote(cluster: str, job_ids, as_json: bool) -> None:
    from slurmkit.cli.json_output import emit
    from slurmkit.cli.views import print_table, status_rows
    from slurmkit.slurm.remote import make_poller

    try:
        conn = connect(cluster)
        conn.ensure_open()
        _adopt(conn, cluster)
        records = _records(cluster, job_ids)
        ids, folders, sizes = _ids_folders_sizes(records, job_ids)
        if not ids:
            emit(jobs=[]) if as_json else click.echo(f"no jobs submitted to {cluster} with --remote yet")
            return
        statuses = make_poller(conn, folders, sizes).poll(ids)
        rows = status_rows(statuses, records)
    except SlurmkitError as error:
        fail(error)
    if as_json:
        emit(jobs=rows)
    else:
        print_table(rows)
    _refuse_unknown(job_ids, statuses, conn.remote.host)


def _refuse_unknown(job_ids, statuses, host: str) -> None:
    """A named job that SLURM on the cluster does not know: one line each, exit 1 (as ``status`` here)."""
    from slurmkit.cli.views import cancel_verdicts

    unknown = [job_id for job_id in job_ids if cancel_verdicts([job_id], statuses)[job_id] == "unknown"]
    for job_id in unknown:
        click.echo(f"error: job {job_id}: SLURM on {host} knows no such job (purged from accounting, or another cluster's)", err=True)
    if unknown:
        sys.exit(1)


def watch_remote(cluster: str, job_ids, interval: float) -> None:
    try:
        conn = connect(cluster)
    except SlurmkitError as error:
        fail(error)
    sys.exit(_watch(conn, cluster, job_ids, interval))


def _watch(conn, cluster: str, job_ids, interval: float) -> int:
    """cli_run's watch with a poller on the cluster: one master connection, re-opened once if it drops."""
    from slurmkit.cli.main import pretty_output
    from slurmkit.cli.views import failure_lines, forgotten_lines, live, plain, still_running
    from slurmkit.core.output import message_line
    from slurmkit.slurm.monitor import Watch
    from slurmkit.slurm.remote import make_poller

    try:
        conn.ensure_open()
        records = _records(cluster, job_ids)
        ids, folders, sizes = _ids_folders_sizes(records, job_ids)
        watch = Watch(ids, interval=interval)
        watch.poller = make_poller(conn, folders, sizes, waiting=True)
        final = live(watch, records) if pretty_output() else plain(watch, records)
    except SlurmkitError as error:
        fail(error)
    except (KeyboardInterrupt, click.Abort):
        click.echo(still_running(job_ids).replace("`slurmkit watch", "`slurmkit watch --remote " + cluster)
                   .replace("`slurmkit cancel", "`slurmkit cancel --remote " + cluster), err=True)
        return 130
    for line in forgotten_lines(watch):
        click.echo(line, err=True)
    ended = {job_id: status for job_id, status in (final or {}).items() if job_id not in watch.forgotten}
    for line in failure_lines(ended, records, read=lambda path, lines: _remote_tail(conn, path, lines),
                              logs=f"slurmkit logs --remote {cluster}"):
        message_line(line, err=False)
    ids = [job_id for job_id in ids if job_id not in watch.forgotten]
    try:
        _print_reports(conn, records, ids)
    except (KeyboardInterrupt, click.Abort):
        return 130   # every job had ended: only its report is cut short
    return 0 if final and all(s.ok for s in final.values()) else 1


def _remote_tail(conn, path: str, lines: int) -> Optional[str]:
    """The last ``lines`` of a log on the cluster; None where it is not there (or cannot be read)."""
    try:
        result = conn.run(["tail", "-n", str(lines), "--", path])
    except SlurmkitError:
        return None
    return result.stdout.rstrip("\n") if result.returncode == 0 else None


# --------------------------------------------------------------------------------- cancel

def cancel_remote(cluster: str, job_ids) -> None:
    from slurmkit.cli.views import cancel_verdicts
    from slurmkit.slurm.remote import make_poller, slurm_runner
    from slurmkit.slurm.slurmcli import scancel

    try:
        conn = connect(cluster)
        conn.ensure_open()
        records = _records(cluster, job_ids)
        _, folders, sizes = _ids_folders_sizes(records, job_ids)
        verdicts = cancel_verdicts(job_ids, make_poller(conn, folders, sizes).poll(list(job_ids)))
        live = [job_id for job_id in job_ids if verdicts[job_id] == "live"]
        refused = scancel(live, slurm_runner(conn)) if live else {}
    except SlurmkitError as error:
        fail(error)
    live = [job_id for job_id in live if job_id not in refused]
    if live:
        click.echo(f"cancelled {' '.join(live)} on {conn.remote.host}")
    for job_id in job_ids:
        if job_id in refused:
            click.echo(f"error: job {job_id}: scancel on {conn.remote.host} refused it: {refused[job_id]}", err=True)
        elif verdicts[job_id] == "unknown":
            click.echo(f"error: job {job_id}: SLURM on {conn.remote.host} knows no such job", err=True)
        elif verdicts[job_id] != "live":
            click.echo(f"error: job {job_id} had already ended ({verdicts[job_id]}): nothing to cancel", err=True)
    if len(live) < len(job_ids):
        sys.exit(1)


# ----------------------------------------------------------------------------------- logs

def logs_remote(cluster: str, job_id: str, err: bool, follow: bool, task=None) -> None:
    from slurmkit.slurm.jobfiles import job_log_ids, log_owner
    from slurmkit.slurm.registry import array_tasks
    from slurmkit.slurm.remote import make_poller

    try:
        conn = connect(cluster)
        conn.ensure_open()
        record = _records(cluster, [log_owner(job_id)])[log_owner(job_id).split("_")[0]]
        ids = job_log_ids(job_id, array_tasks(record) if record.array_size else None, task)
        if len(ids) > 1 and follow:
            raise SlurmkitError(f"logs -f follows one task: give --task N (or {record.job_id}_N)")
        job_id = ids[0]
        path = str(PurePosixPath(record.folder) / f"{job_id}_0_log.{'err' if err else 'out'}")
        if not follow:
            _cat_remote(conn, record.folder, ids, err)
            return
        poller, position = make_poller(conn, {job_id.split("_")[0]: record.folder}, {}, waiting=True), 0
        while True:
            position = _print_from(conn, path, position)
            status = poller.poll([job_id]).get(job_id)
            if status is not None and status.done:
                _print_from(conn, path, position)
                return
            time.sleep(2.0)
    except SlurmkitError as error:
        fail(error)


def _cat_remote(conn, folder: str, ids, err: bool) -> None:
    """Each job's (each task's) log from the cluster, in one command, under a ``==> ID <==``
    header where there are several."""
    from slurmkit.slurm.remote import read_remote_files

    paths = {job_id: str(PurePosixPath(folder) / f"{job_id}_0_log.{'err' if err else 'out'}") for job_id in ids}
    found = read_remote_files(conn, list(paths.values()))
    shown = [job_id for job_id in ids if paths[job_id] in found]
    for job_id in shown:
        _write(("\n" if job_id != shown[0] else "") + f"==> {job_id} <==\n" if len(ids) > 1 else "")
        _write(found[paths[job_id]])
    if not shown:
        name = PurePosixPath(paths[ids[0]]).name if len(ids) == 1 else "log of any task"
        fail(SlurmkitError(f"no {name} yet in {folder} on {conn.remote.host}: the job has not started writing"))
    if len(shown) < len(ids):
        click.echo(f"slurmkit: no log (not started, or gone) for {len(ids) - len(shown)} of {len(ids)} tasks", err=True)


def _print_from(conn, path: str, position: int) -> int:
    """What the remote log holds past ``position`` (bytes), printed; the new position. The far
    side says how many bytes it sent (after a marker line), since text read back as UTF-8, with
    U+FFFD for bytes that are not, no longer counts them."""
    script = ('test -f "$1" || exit 1; size=$(wc -c < "$1"); size=$((size)); '
              'if [ "$size" -gt "$2" ]; then tail -c +"$(($2 + 1))" "$1" | head -c "$((size - $2))"; fi; printf "\\036%s" "$size"')
    result = conn.run(["sh", "-c", script, "sh", path, str(position)])
    text, marker, size = result.stdout.rpartition("\x1e")
    if result.returncode != 0 or not marker or not size.strip().isdigit():
        return position
    _write(text)
    return max(position, int(size))


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


# --------------------------------------------------------------------------------- report

def report_remote(cluster: str, job_id: str, as_json: bool) -> None:
    """The report ``report`` prints here, from the cluster's sacct, exit files and GPU samples."""
    from slurmkit.cli.views import say_arguments, show_report

    try:
        conn = connect(cluster)
        conn.ensure_open()
        record = _records(cluster, [job_id]).get(job_id.split("_")[0])
        effs = _with_so_far(conn, _with_exit_files(conn, _sacct_report(conn, job_id), record))
        made = _with_gpu_samples(conn, effs, record)
    except SlurmkitError as error:
        fail(error)
    if not as_json and record is not None:
        say_arguments(job_id, record)
    show_report(made, as_json)


def _with_so_far(conn, effs):
    """live.with_so_far, sstat asked on the cluster over the connection (its running jobs only)."""
    from slurmkit.report import live
    from slurmkit.slurm.remote import slurm_runner
    from slurmkit.slurm.slurmcli import SchedulerError

    def ask(job_id: str):
        try:
            return live.parse_sstat(slurm_runner(conn)(live.sstat_command(job_id)))
        except SchedulerError:
            return None

    return live.with_so_far(effs, ask=ask)


def _with_gpu_samples(conn, effs, record):
    """gpuuse.full_report of the jobs, their GPU samples copied from the cluster (one command)
    into a private temporary folder for the reading; messages name the cluster's folder."""
    import tempfile

    from slurmkit.cli.views import profile_named, record_floors
    from slurmkit.report.gpuuse import MAX_SAMPLE_BYTES, full_report
    from slurmkit.slurm.remote import copy_gpu_samples

    profile = profile_named(record.profile) if record is not None else None
    floors = record_floors(record, None, profile)   # the advice within what check accepts of the job's spec
    if record is None or not any(eff.gpus for eff in effs):
        return full_report(effs, None, floors=floors)
    try:
        with tempfile.TemporaryDirectory(prefix="slurmkit-gpu-") as local:
            copy_gpu_samples(conn, record.folder, [eff.job_id for eff in effs], Path(local), MAX_SAMPLE_BYTES)
            return full_report(effs, local, profile, shown=f"{conn.remote.host}:{record.folder}", floors=floors)
    except OSError as error:
        raise SlurmkitError(f"cannot copy the GPU samples of job {effs[0].job_id.split('_')[0]} from {conn.remote.host} into a "
                            f"temporary folder here ({tempfile.gettempdir()}): {error.strerror or error}; free space there or "
                            "set TMPDIR") from None


def _sacct_report(conn, job_id: str, retry_for: float = 0.0):
    """efficiency.report_for, asked of the cluster's sacct over the connection."""
    from slurmkit.report import efficiency
    from slurmkit.slurm.remote import slurm_runner
    from slurmkit.slurm.slurmcli import SchedulerError

    effs = efficiency.parse(slurm_runner(conn)(efficiency.sacct_command(job_id)))
    if not effs:
        raise SchedulerError(f"sacct has no record of job {job_id}: check the id, and that it ran on {conn.remote.host}")
    return effs


def _with_exit_files(conn, effs, record):
    """efficiency.with_exit_files, the job files read on the cluster (one command)."""
    from slurmkit.report.efficiency import SCRIPT_SUFFIX, with_job_files
    from slurmkit.slurm.remote import remote_exit_files

    if record is None:
        return effs
    texts = remote_exit_files(conn, {eff.job_id: record.folder for eff in effs}, [eff.job_id for eff in effs if eff.done],
                              (".exit", ".started", SCRIPT_SUFFIX))
    return with_job_files(effs, lambda job_id, suffix: texts.get(f"{job_id}{suffix}"))


def _print_reports(conn, records, job_ids) -> None:
    """cli_run's reports after a watch, from the cluster's sacct and the job's remote folder."""
    from slurmkit.cli.views import print_reports

    print_reports(job_ids, report=lambda job, retry_for: _sacct_report(conn, job),
                  with_exit_files=lambda job_id, effs: _with_exit_files(conn, effs, records.get(job_id.split("_")[0])),
                  remote=f" --remote {conn.remote.name}",
                  gpu_report=lambda job_id, effs: _with_gpu_samples(conn, effs, records.get(job_id.split("_")[0])))


# ---------------------------------------------------------------------------------- fetch

@click.command("fetch")
@click.argument("job_id", metavar="JOBID", shell_complete=complete_job_ids)
@click.option("--to", "to", type=click.Path(file_okay=False), help="Put them here (default: the spec's folder).")
def fetch_command(job_id, to):
    """Bring a remote job's logs, exit file, script and copied-back outputs here (rsync)."""
    from slurmkit.slurm.registry import find
    from slurmkit.slurm.remote import RemoteError
    from slurmkit.slurm.remote_jobs import fetch

    try:
        record = find([job_id]).get(job_id.split("_")[0])
        if record is None or not record.remote:
            raise SlurmkitError(f"job {job_id} was not submitted with --remote from here: nothing to fetch")
        conn = connect(record.profile, target=record.remote)
        fetched = fetch(conn, record, job_id, Path(to) if to else None)
    except SlurmkitError as error:
        fail(error)
    from slurmkit.core.units import human_size

    what = "logs" + (f" and {', '.join(fetched.outputs)}" if fetched.outputs else "")
    click.echo(f"fetched the {what} of job {job_id} from {conn.remote.host} into {fetched.folder} "
               f"({fetched.files} files, {human_size(fetched.size)}, each checked)")
    if fetched.absent:
        fail(RemoteError(f"job {job_id}'s {', '.join(fetched.absent)} {'is' if len(fetched.absent) == 1 else 'are'} not on "
                         f"{conn.remote.host} (in {PurePosixPath(record.folder).parent}): the job did not save "
                         f"{'it' if len(fetched.absent) == 1 else 'them'} there, or it was removed since (scratch is purged)"))
