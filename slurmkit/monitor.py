"""Where jobs stand: one query for all tracked jobs, and an answer even without accounting.

``poll(ids)`` asks, in order, until every job has an answer:

1. ``sacct`` (one call for all jobs): the record of every job, if slurmdbd is up;
2. ``scontrol -o show job`` (one call, every job the controller holds): state and exit code
   of running jobs and of jobs that ended within MinJobAge, accounting or not (it says all that
   ``squeue`` would, plus the exit code);
3. the exit-status file each rendered script writes from its EXIT trap
   (``<folder>/<id>.exit``): how a job ended when neither of the above remembers it.

So a job always reaches a terminal state with its real exit code, whether or not accounting
works. submitit's watcher has no such fallback; ``SlurmkitWatcher`` plugs this poller into it.
"""

import re
import time
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence

from .slurmcli import SchedulerError, run_slurm

TERMINAL = frozenset({"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED",
                      "BOOT_FAIL", "DEADLINE", "REVOKED", "SPECIAL_EXIT"})
SUCCESS = "COMPLETED"


class JobStatus(NamedTuple):
    job_id: str                   # "123", or "123_4" for an array task
    state: str                    # SLURM's state word (PENDING, RUNNING, COMPLETED, ...) or UNKNOWN
    exit_code: Optional[int] = None
    signal: Optional[int] = None
    elapsed_s: Optional[int] = None
    nodes: str = ""
    source: str = ""              # sacct | scontrol | exit-file

    @property
    def done(self) -> bool:
        return self.state in TERMINAL

    @property
    def ok(self) -> bool:
        return self.state == SUCCESS


Runner = Callable[[Sequence[str]], str]


def _run(argv: Sequence[str]) -> str:
    return run_slurm(argv, retry_for=15.0).stdout


# -------------------------------------------------------------------------------------- sacct

SACCT_FIELDS = ("JobID", "State", "ExitCode", "ElapsedRaw", "NodeList")


def sacct_command(job_ids: Iterable[str]) -> List[str]:
    ids = sorted({str(j).split("_")[0] for j in job_ids}, key=_numeric)
    return ["sacct", "-n", "-P", "-X", "-o", ",".join(SACCT_FIELDS), "-j", ",".join(ids)]


def parse_sacct(text: str) -> Dict[str, JobStatus]:
    """``sacct -n -P -X`` lines -> statuses; a pending array range ``12_[0-9%2]`` covers its tasks."""
    found: Dict[str, JobStatus] = {}
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < len(SACCT_FIELDS):
            continue
        job, state, exit_code, elapsed, nodes = parts[:5]
        code, signal = _exit_pair(exit_code)
        for task in _expand_ids(job):
            found[task] = JobStatus(task, _state_word(state), code, signal, int_or_none(elapsed), "" if nodes == "None assigned" else nodes, "sacct")
    return found


# ----------------------------------------------------------------------------------- scontrol

def parse_scontrol(text: str) -> Dict[str, JobStatus]:
    """``scontrol -o show job`` (one job a line) -> statuses keyed like sacct's ids."""
    found: Dict[str, JobStatus] = {}
    for line in text.splitlines():
        fields = dict(re.findall(r"(\w+)=(\S*)", line))
        if "JobId" not in fields:
            continue
        array_id, task = fields.get("ArrayJobId"), fields.get("ArrayTaskId")
        if array_id and task:  # a running task "4", or the pending rest of an array "1-2%1"
            names = [f"{array_id}_{task}"] if task.isdigit() else _expand_ids(f"{array_id}_[{task}]")
        else:
            names = [fields["JobId"]]
        code, signal = _exit_pair(fields.get("ExitCode", ""))
        nodes = fields.get("NodeList", "")
        for name in names:
            found[name] = JobStatus(name, _state_word(fields.get("JobState", "UNKNOWN")), code, signal,
                                    _runtime_s(fields.get("RunTime", "")), "" if nodes == "(null)" else nodes, "scontrol")
    return found


# -------------------------------------------------------------------------------- exit files

def exit_file_status(job_id: str, folder: Optional[str]) -> Optional[JobStatus]:
    if not folder:
        return None
    try:
        text = (Path(folder) / f"{job_id}.exit").read_text().strip()
    except OSError:
        return None
    if not text.isdigit():
        return None
    code = int(text)
    return JobStatus(job_id, "COMPLETED" if code == 0 else "FAILED", code, 0, None, "", "exit-file")


# ------------------------------------------------------------------------------------- poll

def poll(job_ids: Sequence[str], folders: Optional[Mapping[str, str]] = None, run: Runner = _run,
         array_sizes: Optional[Mapping[str, int]] = None) -> Dict[str, JobStatus]:
    """The status of every job in ``job_ids`` (an array id stands for all its tasks).

    While accounting answers, that is one sacct call; the controller is asked only about jobs
    sacct does not know, or whose exit file says they ended while sacct still says otherwise. ``folders`` maps a job id (or array id) to its log folder, for the exit-status files;
    ``array_sizes`` lets an array that no source knows any more still list its tasks.
    """
    folders, sizes = folders or {}, array_sizes or {}
    sources = (lambda: parse_sacct(run(sacct_command(job_ids))),
               lambda: parse_scontrol(run(["scontrol", "-o", "show", "job"])))
    known: Dict[str, JobStatus] = {}
    exit_files: Dict[str, Optional[JobStatus]] = {}

    def exit_file(job: str) -> Optional[JobStatus]:
        """The job's exit file, read once per poll."""
        if job not in exit_files:
            exit_files[job] = exit_file_status(job, folders.get(job) or folders.get(job.split("_")[0]))
        return exit_files[job]

    def settled(job: str) -> bool:
        """Answered, and not contradicted by an exit file (sacct lags behind a job that just ended)."""
        return job in known and (known[job].done or exit_file(job) is None)

    for source in sources:  # the next source only for jobs the previous one could not settle
        if known and all(settled(job) for job in _wanted_ids(job_ids, sizes, known)):
            break
        try:
            answers = source()
        except SchedulerError:
            continue
        for job in _wanted_ids(job_ids, sizes, {**answers, **known}):
            if job in answers and (job not in known or (not settled(job) and answers[job].done)):
                known[job] = answers[job]
    wanted = _wanted_ids(job_ids, sizes, known)
    for job in wanted:
        if job not in known or not known[job].done:
            from_file = exit_file(job)
            if from_file:  # the file knows how it ended; a stale answer may still know where it ran
                earlier = known.get(job)
                known[job] = from_file._replace(nodes=earlier.nodes, elapsed_s=earlier.elapsed_s) if earlier else from_file
    return {job: known.get(job, JobStatus(job, "UNKNOWN")) for job in wanted}


def _wanted_ids(job_ids, array_sizes, known=None) -> List[str]:
    """Single jobs as given; an array id as its tasks (from the answers, or from its size)."""
    wanted = []
    for job in job_ids:
        job = str(job)
        tasks = sorted((k for k in (known or {}) if k.startswith(job + "_")), key=_task_order)
        if "_" in job or not (tasks or job in array_sizes):
            wanted.append(job)
        else:
            size = array_sizes.get(job)
            wanted += tasks if not size else [f"{job}_{i}" for i in range(size)]
    return list(dict.fromkeys(wanted))


# ------------------------------------------------------------------------------------- watch

class Watch:
    """Poll until every job is done: often while jobs are young, less often later, never less
    often than every ``interval`` seconds. Errors of one poll are retried at the next."""

    def __init__(self, job_ids: Sequence[str], interval: float = 30.0, folders=None, array_sizes=None,
                 run: Runner = _run, clock=time.monotonic, sleep=time.sleep):
        self.job_ids, self.interval = list(job_ids), interval
        self.folders, self.array_sizes, self.run = folders or {}, array_sizes or {}, run
        self.clock, self.sleep = clock, sleep
        self.started = clock()
        self.polls = 0

    def delay(self) -> float:
        age = self.clock() - self.started
        return max(0.5, min(self.interval, age / 4))

    def statuses(self) -> Dict[str, JobStatus]:
        self.polls += 1
        return poll(self.job_ids, self.folders, self.run, self.array_sizes)

    def __iter__(self):
        """Yields the statuses after each poll; stops after the poll where all are done."""
        while True:
            current = self.statuses()
            yield current
            if current and all(s.done for s in current.values()):
                return
            self.sleep(self.delay())


# ----------------------------------------------------------------------------------- helpers

def _state_word(state: str) -> str:
    return (state.split() or ["UNKNOWN"])[0].rstrip("+").upper()


def _exit_pair(text: str):
    code, _, signal = text.partition(":")
    return (int_or_none(code), int_or_none(signal)) if code else (None, None)


def int_or_none(text) -> Optional[int]:
    """SLURM's integer fields, which may be empty or "Unknown": the number, or None."""
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def _runtime_s(text: str) -> Optional[int]:
    match = re.fullmatch(r"(?:(\d+)-)?(\d+):(\d+):(\d+)", text)
    if not match:
        return None
    days, hours, minutes, seconds = (int(g or 0) for g in match.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def _expand_ids(job: str) -> List[str]:
    """``12`` -> [12]; ``12_3`` -> [12_3]; ``12_[0-2,5%2]`` -> [12_0, 12_1, 12_2, 12_5]."""
    match = re.fullmatch(r"(\d+)_\[([^\]]*)\]", job)
    if not match:
        return [job]
    base, ranges = match.group(1), match.group(2).split("%")[0]
    tasks = []
    for part in ranges.split(","):
        first, _, last = part.partition("-")
        if first.isdigit():
            tasks += [f"{base}_{i}" for i in range(int(first), int(last or first) + 1)]
    return tasks


def _numeric(job: str):
    return (len(job), job)


def _task_order(job: str):
    head, _, task = job.partition("_")
    return (_numeric(head), int(task) if task.isdigit() else -1)
