"""What the job commands show, here and over ``--remote`` alike: the status table, the live
watch, the efficiency report, and the records they are read from.

The commands (run.py, report.py) and their ``--remote`` variants (remote.py) both print
through these, so a job looks the same wherever it ran; nothing here talks to SLURM.
"""

import time
from pathlib import Path
from typing import Dict

import click

from slurmkit.cli.json_output import emit
from slurmkit.cli.main import pretty_output
from slurmkit.core.errors import SlurmkitError
from slurmkit.core.output import message_line
from slurmkit.slurm.monitor import TERMINAL as TERMINAL_STATES


def submission(job_id: str):
    """slurmkit's record of the job (None for a job it did not submit)."""
    from slurmkit.slurm.registry import find

    return find([job_id]).get(job_id.split("_")[0])


def log_folder(job_id: str):
    """Where slurmkit put the job's logs and exit files (None for a job it did not submit)."""
    record = submission(job_id)
    return record.folder if record else None


def job_profile(job_id: str):
    """The site profile the job was rendered for (its GPUs, MIG slices, GPU counts); None when
    slurmkit did not submit it or the profile is no longer found."""
    record = submission(job_id)
    return profile_named(record.profile if record else None)


def profile_named(name):
    """The profile ``name``, or None when there is no name or it is no longer found."""
    from slurmkit.sites.profiles import load_profile

    try:
        return load_profile(name) if name else None
    except (SlurmkitError, OSError):
        return None


def local_gpu_report(job_id: str, effs, spec_path=None):
    """The report of ``effs`` with the job's GPU samples (gpuuse.full_report), a running job's
    figures so far (live.with_so_far: this host's sstat), its advice within what check accepts
    of the job's spec (``spec_path``, else the one it was submitted from)."""
    from slurmkit.report.gpuuse import full_report
    from slurmkit.report.live import with_so_far

    profile = job_profile(job_id)
    return full_report(with_so_far(effs), log_folder(job_id), profile, floors=job_floors(job_id, spec_path, profile))


def job_floors(job_id: str, spec_path, profile):
    """What check accepts of the job's spec (resolve.Floors); None where no spec can be read."""
    return record_floors(submission(job_id), spec_path, profile)


def record_floors(record, spec_path=None, profile=None):
    """What check accepts of the spec ``spec_path``, else the one ``record`` (the registry's) names; None where none reads."""
    from slurmkit.core.yamlfile import parse_yaml, read_text
    from slurmkit.report.rightsize import spec_floors, spec_profile

    path = spec_path or (record.spec if record is not None else None)
    try:
        data = parse_yaml(read_text(path), path)[0] if path else None
    except (SlurmkitError, OSError):
        return None
    return spec_floors(data, path, spec_profile(data, profile)) if isinstance(data, dict) else None


def show_report(made, as_json: bool) -> None:
    """The report (gpuuse.full_report's) as JSON, gauges on a terminal, or plain text: here and over --remote."""
    from slurmkit.report import efficiency, gauges

    effs = list(made.effs)
    if as_json:
        out = efficiency.as_json(effs)
        if len(effs) == 1:
            out["jobs"][0]["advice"] = [tip.text for tip in made.advice]
        emit(**out, **gauges.as_json(effs), **_gpu_json(made))
    elif pretty_output():
        from rich.console import Console

        Console().print(gauges.rich_report(effs, list(made.figures), [tip.text for tip in made.advice], gpu_rows(made),
                                           spark_rows(made)))
    else:
        from slurmkit.report.efficiency import advice_lines

        lines = [*made.figures, *outlier_lines(effs), *advice_lines([tip.text for tip in made.advice])]
        click.echo("\n".join(lines) + "\n", nl=False)


def submitted_fields(handle, spec, profile, args) -> dict:
    """What ``submit --json`` prints of a submission: its id, array size, chain, log folder and
    each job's log files, the spec and the profile it was rendered for (the registry's record)."""
    record = submission(handle.job_id)
    jobs = getattr(handle, "tasks", None) or getattr(handle, "links", None) or [handle]
    logs = [{"job": job.job_id, "stdout": _path_or_none(job.log_path("stdout")), "stderr": _path_or_none(job.log_path("stderr"))}
            for job in jobs]
    return {"job": handle.job_id, "array_size": getattr(handle, "size", None),
            "chain": [link.job_id for link in getattr(handle, "links", ())], "parts": list(getattr(handle, "parts", ())),
            "log_folder": str(jobs[0].paths.folder),
            "logs": logs, "spec": str(Path(spec).resolve()), "profile": record.profile if record else profile,
            "args": list(args), "recorded": record is not None}


def _path_or_none(path):
    return None if path is None else str(path)


def say_arguments(job_id: str, record=None) -> None:
    """``job 12 ran with arguments: ...`` above its report, when it was given any (submit -- ARGS)."""
    record = record if record is not None else submission(job_id)
    if record is not None and record.args:
        message_line(f"job {job_id} ran with arguments: {typed_words(record.args)}", err=False)


def _gpu_json(made):
    from slurmkit.report.gpuuse import as_json

    return as_json(made.jobs)


def gpu_rows(made):
    """Per-GPU gauge rows of a single job: (label, mean utilisation as a fraction, the figures)."""
    from slurmkit.report.gpuuse import describe

    if len(made.effs) != 1:
        return []
    job = made.jobs.get(made.effs[0].job_id)
    return [(g.label, None if g.mean_util is None else g.mean_util / 100, describe(g).split(": ", 1)[1])
            for g in (job.gpus if job else ())]


def spark_rows(made):
    """Each GPU of a single job over time (gpuuse.SparkRow), for the terminal."""
    from slurmkit.report.gpuuse import spark_rows as rows

    job = made.jobs.get(made.effs[0].job_id) if len(made.effs) == 1 else None
    return rows(job) if job else []


def outlier_lines(effs):
    """``Outliers (memory): 12_7 (98%)``: the tasks of an array far from the rest, per gauge."""
    from slurmkit.report.gauges import LABELS, spreads

    return [f"Outliers ({LABELS[s.name].lower()}): " + ", ".join(f"{job} ({value:.0%})" for job, value, _ in s.outliers[:10])
            for s in spreads(effs) if s.outliers] if len(effs) > 1 else []


COLUMNS = ("job", "name", "state", "exit", "elapsed_s", "nodes", "source", "elapsed", "limit", "left", "reason", "outputs")

#: the columns of the table on a terminal: the times as one cell with a bar, the reason in the state.
RICH_COLUMNS = ("job", "name", "state", "exit", "time", "nodes", "source", "outputs")


#: more rows than this and `watch` shows counts per state, then only running and failed tasks.
SUMMARY_AT = 20


#: at most this many rows of each kind (running, failed) under the counts.
SUMMARY_ROWS = 15


def _row(job_id, status, record):
    from slurmkit.slurm.monitor import exit_text, outputs_text

    return {"job": job_id, "name": record.name if record else "", "args": list(record.args or []) if record else [],
            "state": status.state, "exit_code": status.exit_code,
            "signal": status.signal, "exit": exit_text(status), "elapsed_s": status.elapsed_s, "nodes": status.nodes,
            "source": status.source, "saved": list(status.saved), "unsaved": list(status.unsaved),
            "outputs": outputs_text(status), "ok": status.ok, "runs": status.runs, "killed": status.killed,
            "kept": list(status.kept), "outputs_unknown": list(status.outputs_unknown), "settling": status.settling,
            "log": _output_log(job_id, record), **_time_fields(status)}


def _time_fields(status):
    """Why it waits and how long it has: SLURM's Reason and its words, the limit and what is left."""
    from slurmkit.slurm.waits import hms, reason_text, time_left_s

    left = None if status.done else time_left_s(status.elapsed_s, status.time_limit_s)
    return {"reason": status.reason, "reason_text": reason_text(status.reason) if status.reason else "",
            "elapsed": hms(status.elapsed_s), "time_limit_s": status.time_limit_s, "time_limit": hms(status.time_limit_s),
            "time_left_s": left, "time_left": hms(left)}


def _output_log(job_id, record):
    """Where the job's output log is (slurmkit's folder, or the spec's logs.output); None for a job slurmkit did not submit."""
    from slurmkit.slurm.jobfiles import job_log_path

    return str(job_log_path(record.folder, job_id, "stdout", record.logs or ())) if record else None


def status_rows(statuses, records):
    """One row a job; the links of a chain fold into one row for the chain, listing its links."""
    rows, chains = [], {}
    for job_id, status in statuses.items():
        record = records.get(job_id.split("_")[0])
        row = _row(job_id, status, record)
        if record is not None and record.chain:
            chains.setdefault(record.chain, []).append((record.link, row))
        else:
            rows.append(row)
    for chain_id, links in chains.items():
        links = [row for _, row in sorted(links, key=lambda pair: pair[0] or 0)]
        current = next((row for row in links if row["state"] not in TERMINAL_STATES or row["settling"]), links[-1])
        rows.append({**current, "job": chain_id, "name": f"{current['name']} (chain, link {links.index(current) + 1}/{len(links)})",
                     "links": [{"job": row["job"], "state": row["state"], "exit_code": row["exit_code"], "signal": row["signal"]}
                               for row in links]})
    return rows


def _cells(row):
    state = "TIMEOUT (outputs saved)" if row["state"] == "TIMEOUT" and row["outputs"] == "outputs saved" else row["state"]
    notes = [f"run {row['runs']}"] if row.get("runs", 1) > 1 else []   # requeued: this is a later run of the job
    if row.get("settling"):      # SLURM said it ended; what became of it is not known yet
        notes.append(row["settling"])
    if notes:
        state += f" ({', '.join(notes)})"
    cells = {"state": state, "name": row["name"] + _arguments_text(row.get("args")), "limit": row.get("time_limit", ""),
             "left": row.get("time_left", ""), "reason": _reason_cell(row)}
    return [cells[c] if c in cells else "" if row.get(c) is None else str(row[c]) for c in COLUMNS]


def _reason_cell(row) -> str:
    """``BeginTime: not allowed to start before its --begin time``; SLURM's word alone where the table has no words for it."""
    reason, words = row.get("reason", ""), row.get("reason_text", "")
    return f"{reason}: {words}" if words and words != reason else reason


def _time_cell(row):
    """A running job's elapsed/limit as a bar with the times (rich), else its elapsed and limit as text."""
    from rich.progress_bar import ProgressBar
    from rich.table import Table

    limit, elapsed = row.get("time_limit_s"), row.get("elapsed_s")
    said = f"{row.get('elapsed') or '0:00:00'} / {row.get('time_limit') or 'no limit'}"
    if row["state"] != "RUNNING" or not limit:
        return said if elapsed is not None or limit else ""
    grid = Table.grid(padding=(0, 1))
    grid.add_row(ProgressBar(total=limit, completed=min(elapsed or 0, limit), width=12), f"{said}, {row['time_left']} left")
    return grid


def _arguments_text(args) -> str:
    """`` -- 'a b' c``: the words the job's script was given, as bash would read them again."""
    return f" -- {typed_words(args)}" if args else ""


def typed_words(args) -> str:
    """The words on one line as bash reads them: quoted, a newline or another control character
    as ``$'\\n'`` (never a line break in a table)."""
    import shlex

    def typed(word: str) -> str:
        if word.isprintable():
            return shlex.quote(word)
        spelled = "".join(char if char.isprintable() else ascii(char)[1:-1] for char in word.replace("\\", "\\\\").replace("'", "\\'"))
        return f"$'{spelled}'"

    return " ".join(typed(word) for word in args)


def print_table(rows, title=None, statuses=None):
    """The table; on a terminal, a state bar and ETA under it for each array among ``statuses``
    (piped, the table alone: its lines are all rows, for cut and awk)."""
    if not pretty_output():
        click.echo("\t".join(COLUMNS))  # the header, so a pipe knows the columns (cut, awk)
        for row in rows:
            message_line("\t".join(_cells(row)), err=False)
        return
    from rich.console import Console, Group

    Console().print(Group(_rich_table(rows, title), *_array_bars(statuses or {})))


def array_fields(statuses):
    """``status --json``'s ``arrays``: each array's task counts per state, tasks ended, and ETA."""
    from slurmkit.slurm.waits import arrays

    return [progress.as_json() for progress in arrays(statuses, TERMINAL_STATES)]


def _array_bars(statuses):
    """A rich line per array: a bar of the tasks ended, the counts per state, the ETA."""
    from rich.progress_bar import ProgressBar
    from rich.table import Table

    from slurmkit.slurm.waits import arrays

    lines = []
    for progress in arrays(statuses, TERMINAL_STATES):
        grid = Table.grid(padding=(0, 1))
        words = progress.text().split("] ", 1)[1]
        grid.add_row(f"array {progress.job_id}", ProgressBar(total=progress.total or 1, completed=progress.ended, width=30), words)
        lines.append(grid)
    return lines


def _rich_table(rows, title=None):
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title)
    for column in RICH_COLUMNS:
        table.add_column(column.replace("_", " "), overflow="fold")
    colours = {"COMPLETED": "green", "RUNNING": "cyan", "PENDING": "yellow"}
    for row in rows:
        plain_cells = dict(zip(COLUMNS, _cells(row)))
        cells = [plain_cells.get(column, "") for column in RICH_COLUMNS]
        colour = "red" if row["unsaved"] else colours.get(row["state"], "red" if row["state"] != "UNKNOWN" else "white")
        colour = "yellow" if row["settling"] else colour
        reason = f"\n[dim]{escape(plain_cells['reason'])}[/]" if plain_cells["reason"] else ""
        cells[2] = f"[{colour}]{escape(cells[2])}[/]{reason}"
        cells[1] = escape(cells[1])   # a job's arguments may hold [ ]: text, not rich markup
        cells[4] = _time_cell(row)
        table.add_row(*cells)
    return table


def _counts(statuses) -> str:
    counts: Dict[str, int] = {}   # state -> jobs in it
    for status in statuses.values():
        counts[status.state] = counts.get(status.state, 0) + 1
    return ", ".join(f"{n} {state}" for state, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def _summary_rows(rows):
    """The rows worth a line when there are many: running ones, then those that ended badly."""
    running = [row for row in rows if row["state"] == "RUNNING"]
    failed = [row for row in rows if row["state"] in TERMINAL_STATES and not row["settling"] and not row["ok"]]
    shown = running[:SUMMARY_ROWS] + failed[:SUMMARY_ROWS]
    hidden = len(running) + len(failed) - len(shown)
    return shown, hidden


def _view(statuses, records, lost, extra=()):
    """What the terminal shows: the table, or counts then running and failed rows when large;
    ``extra`` below it (SoFar's figures so far)."""
    from rich.console import Group
    from rich.text import Text

    rows = status_rows(statuses, records)
    title = f"{sum(s.done for s in statuses.values())}/{len(statuses)} done"
    parts = []
    if lost is not None:
        parts.append(Text(f"lost the controller, retrying: {lost.message}", style="bold red"))
    if len(rows) > SUMMARY_AT:
        shown, hidden = _summary_rows(rows)
        parts.append(Text(f"{title}: {_counts(statuses)}"))
        parts.append(_rich_table(shown, title=f"running and failed ({hidden} more not shown)" if hidden else "running and failed"))
    else:
        parts.append(_rich_table(rows, title=title))
    return Group(*parts, *_array_bars(statuses), *extra)


def live(watch, records, so_far=None):
    """Follow on a terminal: render only when something changed, with no refresh thread;
    ``so_far(statuses, records)``: lines to show below the table (SoFar, for a local watch)."""
    from rich.live import Live

    final, shown = {}, None
    with Live(auto_refresh=False) as live:
        for final in watch:
            key = (tuple(final.values()), watch.lost is not None)
            if key != shown:
                shown = key
                live.update(_view(final, records, watch.lost, so_far(final, records) if so_far else ()), refresh=True)
    return final


#: a watch on a terminal shows figures so far for at most this many running jobs ...
SO_FAR_JOBS = 3
#: ... and asks sstat of each at most this often (sstat asks the job's nodes).
SO_FAR_EVERY_S = 30.0


class SoFar:
    """The figures so far of the running jobs a local watch follows: CPU and memory from sstat,
    each GPU over time from the live sample file, asked at most every SO_FAR_EVERY_S per job, so
    a watch polling every few seconds does not ask the nodes each time."""

    def __init__(self, ask=None, clock=time.monotonic):
        from slurmkit.report.live import so_far

        self.ask, self.clock, self.kept = ask or so_far, clock, {}

    def __call__(self, statuses, records):
        running = [job for job, status in statuses.items() if status.state == "RUNNING"][:SO_FAR_JOBS]
        shown = []
        for job in running:
            when, lines = self.kept.get(job, (None, []))
            if when is None or self.clock() - when >= SO_FAR_EVERY_S:
                record = records.get(job.split("_")[0])
                lines = so_far_lines(job, self.ask(job), record.folder if record else None)
                self.kept[job] = (self.clock(), lines)
            shown += lines
        return shown


def so_far_lines(job_id: str, now, folder):
    """``2078 so far (sstat; not final): CPU 00:01:23, memory peak 618M`` and its GPUs over time."""
    from rich.text import Text

    from slurmkit.report.efficiency import clock_time, format_mem
    from slurmkit.report.gauges import spark_lines
    from slurmkit.report.gpuuse import read_job, spark_rows

    if now is None:
        said = "CPU and memory not known yet (sstat has no running step of it)"
    else:
        said = f"CPU {clock_time(now.cpu_s)}, memory peak " + (format_mem(now.peak_mib) if now.peak_mib is not None else "not reported")
    gpus = read_job(job_id, folder) if folder else None
    return [Text(f"{job_id} so far (sstat, live GPU samples; not final): {said}"),
            *(spark_lines(spark_rows(gpus)) if gpus is not None and gpus.gpus else [])]


def plain(watch, records):
    """Follow piped: a line per change; many jobs as a counts line and a line per bad ending."""
    from slurmkit.slurm.monitor import verdict

    final, seen, lost, counts, said_arrays = {}, {}, None, None, {}
    for final in watch:
        now = time.strftime("%H:%M:%S")
        if (watch.lost is None) != (lost is None):
            message_line(f"{now} lost the controller, retrying: {watch.lost.message}" if watch.lost
                         else f"{now} the controller answers again", err=False)
        lost = watch.lost
        summary = len(final) > SUMMARY_AT
        _array_lines(final, now, said_arrays)
        all_arrays = all("_" in job_id for job_id in final)   # the array lines have said the counts
        if summary and not all_arrays and _counts(final) != counts:
            counts = _counts(final)
            click.echo(f"{now} {len(final)} jobs: {counts}")
        for job_id, status in final.items():
            line = verdict(status)
            if seen.get(job_id) != line:
                seen[job_id] = line
                if not summary or (status.done and not status.ok):
                    message_line(f"{now} {job_id} {line}", err=False)
    return final


def _array_lines(statuses, now: str, said) -> None:
    """``12:00:05 array 12: [####....] 40/100 ended: ...; ETA 0:20:00`` when an array's counts change."""
    from slurmkit.slurm.waits import arrays

    for progress in arrays(statuses, TERMINAL_STATES):
        if said.get(progress.job_id) != progress.counts:
            said[progress.job_id] = progress.counts
            click.echo(f"{now} {progress.text()}")


def json_line(event: str, **fields) -> None:
    """One line of ``watch --json`` (json_output.emit_line)."""
    from slurmkit.cli.json_output import emit_line

    emit_line(event, **fields)


def error_fields(error) -> dict:
    from slurmkit.cli.json_output import error_object

    return error_object(error)


def json_lines(watch, records):
    """Follow as JSON Lines: a ``state`` line (status --json's row of the job) each time a job's
    state changes, ``lost``/``back`` for the controller, then one ``end`` line with every final row."""
    from slurmkit.slurm.monitor import verdict

    final, seen, lost = {}, {}, None
    for final in watch:
        if (watch.lost is None) != (lost is None):
            json_line("lost", message=watch.lost.message) if watch.lost else json_line("back")
        lost = watch.lost
        rows = {row["job"]: row for row in status_rows(final, records)}
        for job_id, status in final.items():
            key = (verdict(status), status.reason)
            if seen.get(job_id) != key:
                seen[job_id] = key
                json_line("state", **rows.get(job_id, _row(job_id, status, records.get(job_id.split("_")[0]))))
    json_line("end", ok=bool(final) and all(s.ok for s in final.values()), forgotten=list(watch.forgotten),
              jobs=status_rows(final, records))
    return final


def forgotten_lines(watch):
    """What a watch says of the jobs it gave up on: no source knew them (Watch.forgotten)."""
    return [f"error: job {job_id}: neither accounting nor the controller knows it (purged, or submitted on another "
            "cluster): stopped watching it" for job_id in watch.forgotten]


def still_running(job_ids) -> str:
    """What Ctrl-C during a watch says: the jobs run on, and the commands that follow or end them."""
    ids = " ".join(job_ids)
    if not ids:
        return "stopped watching; the jobs run on: `slurmkit status` shows them"
    which = f"job {ids} keeps" if len(job_ids) == 1 else f"jobs {ids} keep"
    return (f"stopped watching; {which} running: follow with `slurmkit watch {ids}`, "
            f"cancel with `slurmkit cancel {ids}`")


def print_reports(job_ids, report=None, with_exit_files=None, remote: str = "", gpu_report=None) -> None:
    """The efficiency report of each job once accounting has its end (or marked preliminary).
    ``report(job_id, retry_for)``, ``with_exit_files(job_id, effs)`` and ``gpu_report(job_id,
    effs)`` default to this host's sacct and the job's local folder; cli_remote passes its ssh
    ones and ``--remote NAME``."""
    from slurmkit.report import efficiency

    if gpu_report is None:
        gpu_report = local_gpu_report
    with_exit_files = with_exit_files or (lambda job_id, effs: efficiency.with_exit_files(effs, log_folder(job_id)))
    for job_id in job_ids:
        try:
            effs, settled = efficiency.settled_report(job_id, report=report)
            effs = with_exit_files(job_id, effs)
        except SlurmkitError as error:
            message_line(f"no efficiency report for {job_id}: {error.message}")
            continue
        if not settled:
            message_line(f"preliminary report for {job_id}: accounting has not recorded its end yet "
                         f"(run `slurmkit report {job_id}{remote}` later for the final one)", err=False)
        say_arguments(job_id)
        try:
            text = gpu_report(job_id, effs).text
        except SlurmkitError as error:
            message_line(f"no GPU figures for {job_id}: {error.message}")
            text = efficiency.format_report(effs)
        click.echo(text, nl=False)


#: the failed jobs whose logs' ends a watch shows; the others are named with `slurmkit logs`.
SHOWN_FAILURES = 3


def failed_ids(statuses):
    """The jobs that ended and did not complete: not one that completed and lost an output (its
    verdict says which and why), nor a cancelled one (the user's own doing)."""
    return [job_id for job_id, status in statuses.items() if status.done and status.state not in ("COMPLETED", "CANCELLED")]


def failure_lines(statuses, records, shown: int = SHOWN_FAILURES, read=None, logs: str = "slurmkit logs"):
    """Where a watch ends with failures: each failed job's verdict, then the last lines of its
    stderr and stdout with their files (the spec's own log names where it gave them). ``read``:
    how a log's end is read (jobfiles.read_tail here; over ssh for --remote)."""
    from slurmkit.slurm.jobfiles import log_tails, read_tail, tail_lines
    from slurmkit.slurm.monitor import verdict

    failed, lines = failed_ids(statuses), []
    for job_id in failed[:shown]:
        record = records.get(job_id.split("_")[0])
        lines.append(f"job {job_id} {verdict(statuses[job_id])}")
        lines.extend(tail_lines(log_tails(record.folder, job_id, getattr(record, "logs", None) or (), read=read or read_tail))
                     if record else
                     ["(not submitted with slurmkit here: its logs are where its --output says)"])
    if len(failed) > shown:
        more = " ".join(failed[shown:shown + 10]) + (" ..." if len(failed) > shown + 10 else "")
        lines.append(f"{len(failed) - shown} more failed ({more}): `{logs} ID` and `{logs} ID --err` show each one's")
    return lines


def failure_hint(job_ids, statuses):
    """Under `status` of one job that failed: where its output and error are (None otherwise).
    Of that job only (its array tasks too): what was polled with it is not what was asked."""
    asked = str(job_ids[0]).split("_")[0] if len(job_ids) == 1 else None
    failed = [job_id for job_id in failed_ids(statuses) if job_id.split("_")[0] == asked]
    if not failed:
        return None
    return f"hint: job {failed[0]} failed: its error and output: `slurmkit logs {failed[0]} --err`, `slurmkit logs {failed[0]}`"


def cancel_verdicts(job_ids, statuses):
    """Each given id -> "live" (something to cancel), "unknown", or the verdict of how it ended."""
    from slurmkit.slurm.monitor import verdict

    found = {}
    for job_id in job_ids:
        mine = [s for key, s in statuses.items() if key == job_id or key.startswith(job_id + "_")]
        if not mine or all(s.state == "UNKNOWN" for s in mine):
            found[job_id] = "unknown"
        elif any(not s.done and not s.settling for s in mine):   # settling: SLURM already ended it
            found[job_id] = "live"
        else:
            found[job_id] = verdict(mine[0]) if len(mine) == 1 else f"every task ended ({_counts({s.job_id: s for s in mine})})"
    return found
