"""The two files a rendered script leaves beside its logs, read back: what the job itself says.

``<folder>/<id>.started`` is written whole just before the payload starts: which run of the
job this is (``run<TAB>N``, N = ``$SLURM_RESTART_COUNT`` + 1) and one ``output<TAB>DEST`` line
per destination the EXIT trap will save. ``<folder>/<id>.exit`` is written whole by the EXIT
trap: line 1 the exit code, then ``timeout``, ``run<TAB>N``, ``killed``, ``saved<TAB>DEST``,
``not-saved<TAB>DEST<TAB>REASON`` and ``kept<TAB>DEST<TAB>PATH`` lines (docs/templates.md).

Files from older scripts lack the newer lines: no ``run`` line is run 1, and an exit file that
is one integer is still whole. Each file is read with a bound, and a pipe or a device put in
its place is not waited on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

from slurmkit.core.array_ids import TaskIds, task_ids
from slurmkit.core.errors import SlurmkitError
from slurmkit.core.records import Record

#: the most of an exit or started file that is read (a job has few outputs; a bigger file is not ours).
MAX_FILE_BYTES = 1 << 20


class JobFolderGone(SlurmkitError):
    """A job's log folder (its logs, exit and started files) is no longer there: nothing will come of following it."""

    exit_code = 1


class ExitRecord(Record):
    """What a job's EXIT trap wrote: its code, then what became of its outputs."""

    code: int
    timeout: bool = False
    saved: Tuple[str, ...] = ()
    unsaved: Tuple[str, ...] = ()     # "DEST: REASON", with "; kept at PATH" where a copy was kept
    run: int = 1                      # the run of the job that wrote it (1 in files without the line)
    killed: bool = False              # the payload did not stop after TERM and was killed before the copy
    kept: Tuple[str, ...] = ()        # where copies that could not be checked were kept (PATH.manifest beside)


class StartedRecord(Record):
    """What a job's script wrote just before its payload started."""

    run: int = 1
    outputs: Tuple[str, ...] = ()     # the destinations the EXIT trap will save
    saved: Tuple[str, ...] = ()       # those its final copy saved so far (a shell killed mid-way saved these)


def _fields(lines: List[str]) -> List[Tuple[str, List[str]]]:
    """``kind<TAB>a<TAB>b`` lines -> (kind, [a, b]); the last field may hold more TABs (a reason)."""
    found = []
    for line in lines:
        kind, _, rest = line.partition("\t")
        found.append((kind.strip(), rest.split("\t", 1) if rest else []))
    return found


def _run_number(values: List[str]) -> Optional[int]:
    try:
        number = int(values[0]) if values else 0
    except ValueError:
        return None
    return number if number >= 1 else None


def parse_exit_file(text: str) -> Optional[ExitRecord]:
    """The exit file's text -> its record; None unless line 1 is an integer (an old file is just that)."""
    lines = text.splitlines()
    try:
        code = int(lines[0].strip()) if lines else None
    except ValueError:
        code = None
    if code is None:
        return None
    facts: Dict[str, object] = {"timeout": False, "killed": False, "run": 1}
    saved: List[str] = []
    unsaved: List[Tuple[str, str]] = []
    kept: Dict[str, str] = {}
    for kind, values in _fields(lines[1:]):
        if kind in ("timeout", "killed"):
            facts[kind] = True
        elif kind == "run":
            facts["run"] = _run_number(values) or 1
        elif kind == "saved" and values:
            saved.append("\t".join(values))
        elif kind == "not-saved" and values:
            dest, _, reason = "\t".join(values).partition("\t")
            unsaved.append((dest, reason or "no reason given"))
        elif kind == "kept" and len(values) == 2:
            kept[values[0]] = values[1]
    reasons = tuple(f"{dest}: {why}" + (f"; kept at {kept[dest]}" if dest in kept else "") for dest, why in unsaved)
    return ExitRecord(code, bool(facts["timeout"]), tuple(saved), reasons, int(str(facts["run"])), bool(facts["killed"]),
                      tuple(kept.values()))


def parse_started_file(text: str) -> StartedRecord:
    """The started file's text -> its record (no ``run`` line: run 1)."""
    run = 1
    outputs: List[str] = []
    saved: List[str] = []
    for kind, values in _fields(text.splitlines()):
        if kind == "run":
            run = _run_number(values) or 1
        elif kind in ("output", "saved") and values:
            (outputs if kind == "output" else saved).append("\t".join(values))
    return StartedRecord(run, tuple(outputs), tuple(dest for dest in saved if dest in outputs))


def job_file_text(job_id: str, folder: Optional[str], suffix: str) -> Optional[str]:
    """The text of ``<folder>/<job_id><suffix>``; None when there is no folder or no such file."""
    if not folder:
        return None
    from slurmkit.core.files import read_bytes_bounded  # a pipe or a device there is not waited on

    try:
        return read_bytes_bounded(Path(folder) / f"{job_id}{suffix}", MAX_FILE_BYTES).decode("utf-8", "replace")
    except OSError:
        return None


def read_exit_file(job_id: str, folder: Optional[str]) -> Optional[ExitRecord]:
    text = job_file_text(job_id, folder, ".exit")
    return None if text is None else parse_exit_file(text)


def read_started_file(job_id: str, folder: Optional[str]) -> Optional[StartedRecord]:
    text = job_file_text(job_id, folder, ".started")
    return None if text is None else parse_started_file(text)


def log_owner(job_id: str) -> str:
    """The id whose logs a job id's are: a het job's component (``123+1``) is its job's (one batch
    script, one set of logs, named by the het job's id); a job or an array task is its own."""
    return job_id.split("+")[0]


def job_log_ids(job_id: str, tasks: Optional[TaskIds], task: Optional[int] = None) -> List[str]:
    """The ids whose logs ``slurmkit logs JOB_ID [--task N]`` shows: an array's id stands for
    every task (``tasks``: the array's, as the registry records them; None: not an array), an
    array task or a het component for its own. SlurmkitError (exit 2) for a task the array lacks."""
    owner = log_owner(job_id)
    if task is not None and ("_" in owner or tasks is None):
        what = f"{owner} is one task already" if "_" in owner else f"job {owner} is not an array"
        raise SlurmkitError(f"--task {task}: {what}: give --task only with an array's id")
    if "_" in owner or tasks is None:
        return [owner]
    ids = list(task_ids(tasks))
    if task is None:
        return [f"{owner}_{i}" for i in ids]
    if task not in ids:
        raise SlurmkitError(f"--task {task}: array {owner} has no such task (its tasks: {task_list(ids)})")
    return [f"{owner}_{task}"]


def task_list(ids: Sequence[int]) -> str:
    """``0, 1, 2`` or ``0, 1, 2, ... 999`` (the first three and the last of many)."""
    shown = [str(i) for i in ids[:3]] + (["...", str(ids[-1])] if len(ids) > 4 else [str(i) for i in ids[3:]])
    return ", ".join(shown)


def job_log_path(folder: Union[str, Path], job_id: str, stream: str, logs: Sequence[str] = ()) -> Optional[Path]:
    """The file of a job's (``123``, ``123_4``) ``stdout`` or ``stderr``: slurmkit's in ``folder``,
    or the spec's own names (``logs``: output[, error], as recorded); None for stderr where the
    spec names only the output (sbatch joins stderr to it)."""
    from slurmkit.core.logpatterns import log_file

    if not logs:
        return Path(folder) / f"{job_id}_0_log.{'err' if stream == 'stderr' else 'out'}"
    pattern = logs[0] if stream != "stderr" else (logs[1] if len(logs) > 1 else None)
    return Path(log_file(pattern, job_id)) if pattern else None


#: the most of a log's end that is read to show its last lines (a log may be gigabytes).
TAIL_BYTES = 64 * 1024


class LogTail(Record):
    """The last lines of one of a job's logs, where the failure is reported: which stream
    (``stdout``, ``stderr``, or ``output`` where stderr joins it), the file, and its end
    (``None``: no such file; ``""``: the file is empty)."""

    stream: str
    path: str
    text: Optional[str]


def read_tail(path: Union[str, Path], lines: int) -> Optional[str]:
    """The last ``lines`` lines of the file ``path``, read from its last TAIL_BYTES; None when
    it is not there or not a regular file (a pipe put in its place is not waited on)."""
    from slurmkit.core.files import open_regular

    try:
        with open_regular(path) as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - TAIL_BYTES))
            data = handle.read(TAIL_BYTES)
    except OSError:
        return None
    text = data.decode("utf-8", "replace").rstrip("\n")
    return "\n".join(text.splitlines()[-lines:]) if text.strip() else ""


def log_tails(folder: Union[str, Path], job_id: str, logs: Sequence[str] = (), lines: int = 20,
              read: Callable[[str, int], Optional[str]] = read_tail) -> Tuple[LogTail, ...]:
    """The ends of the job's stderr and stdout (the spec's own log names where it gave them):
    one ``output`` tail where the spec names no error log, since sbatch joins stderr to the output.
    ``read(path, lines)``: this host's files, or a cluster's over ssh (cli/remote.py)."""
    err = job_log_path(folder, job_id, "stderr", logs)
    out = job_log_path(folder, job_id, "stdout", logs)
    assert out is not None, "an output log always has a path"
    if err is None or err == out:
        return (LogTail("output", str(out), read(str(out), lines)),)
    return LogTail("stderr", str(err), read(str(err), lines)), LogTail("stdout", str(out), read(str(out), lines))


def tail_lines(tails: Sequence[LogTail], lines: int = 20) -> List[str]:
    """The tails as text to show: a labelled header with the file, then its lines (a missing or
    empty log said so in its header)."""
    shown: List[str] = []
    for tail in tails:
        if tail.text is None:
            shown.append(f"--- {tail.stream}: no log at {tail.path} ---")
        elif not tail.text:
            shown.append(f"--- {tail.stream}: {tail.path} is empty ---")
        else:
            end = tail.text.splitlines()[-lines:]
            shown.append(f"--- {tail.stream} ({tail.path}), its last {len(end)} line{'s' if len(end) != 1 else ''} ---")
            shown.extend(end)
    return shown
