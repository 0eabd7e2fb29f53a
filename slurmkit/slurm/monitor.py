"""Where jobs stand: one batched query per poll, an answer without accounting, and an error
(never a wall of UNKNOWN) when SLURM cannot be asked at all.

A ``Poller`` asks, in order, until every job it follows has an answer:

1. ``sacct`` (one call for all open jobs): the record of every job, if slurmdbd is up. After
   a failure sacct is skipped for a growing number of polls (1, 2, 4, ... 16), so accounting
   being down costs one short attempt now and then, not seconds every poll;
2. ``squeue --jobs=IDS -t all`` (one call, only the jobs sacct did not settle): state, run
   time, nodes and the raw wait status (exit code or signal) of jobs the controller holds,
   which includes those that ended within MinJobAge. squeue takes a list of ids where
   ``scontrol show job`` takes one, and it is never asked about every job on the cluster;
3. the exit file each rendered script writes from its EXIT trap (``<folder>/<id>.exit``): how
   the job ended (its code, ``timeout``, which outputs were saved and which were not). It is
   read for every job that ended, and answers alone when neither of the above remembers.

A job that has ended is not asked about again. When a query failed and some job is left with
no answer at all, ``SlurmUnreachable`` names the commands and SLURM's reasons (and
``SlurmNotConfigured`` says to set SLURM_CONF when no configuration was found). Every query
has a short timeout and no retry: the caller polls again on its ``Cadence``.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

from slurmkit.core.records import Record
from slurmkit.slurm.slurmcli import SchedulerError, run_slurm

TERMINAL = frozenset({"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED",
                      "BOOT_FAIL", "DEADLINE", "REVOKED", "SPECIAL_EXIT"})
SUCCESS = "COMPLETED"

#: seconds one monitoring query may take: a paused controller makes squeue wait 20 s and a
#: paused slurmdbd makes sacct wait 45 s (measured on 22.05); the next poll asks again.
SACCT_TIMEOUT_S = 5.0
SQUEUE_TIMEOUT_S = 8.0
#: at most this many polls skipped after sacct failed (the count doubles from 1).
SACCT_MAX_SKIP = 16
#: an array with at most this many open tasks is asked about task by task; more, by its id.
TASK_IDS_MAX = 64


class JobStatus(Record):
    job_id: str                   # "123", or "123_4" for an array task
    state: str                    # SLURM's state word (PENDING, RUNNING, COMPLETED, ...) or UNKNOWN
    exit_code: Optional[int] = None   # None while the job runs, and when a signal ended it
    signal: Optional[int] = None      # the signal that ended it (9: SIGKILL), else None
    elapsed_s: Optional[int] = None
    nodes: str = ""
    source: str = ""              # sacct | squeue | exit-file
    saved: Tuple[str, ...] = ()   # outputs that arrived whole (their destinations)
    unsaved: Tuple[str, ...] = ()  # "DEST: REASON" for each output that did not
    runs: int = 1                 # this is the job's run N: requeued N - 1 times (sacct -D)

    @property
    def done(self) -> bool:
        return self.state in TERMINAL

    @property
    def ok(self) -> bool:
        return self.state == SUCCESS and not self.unsaved


class SlurmUnreachable(SchedulerError):
    """Neither accounting nor the controller answered, and some job has no other answer."""


class SlurmNotConfigured(SlurmUnreachable):
    """SLURM's commands found no configuration: nothing will answer until SLURM_CONF is set."""


Runner = Callable[[Sequence[str]], str]


def _run(argv: Sequence[str]) -> str:
    """One monitoring query: a short timeout and no retry (the next poll is the retry)."""
    timeout = SACCT_TIMEOUT_S if argv[0] == "sacct" else SQUEUE_TIMEOUT_S
    return run_slurm(argv, retry_for=0.0, timeout=timeout).stdout


# ------------------------------------------------------------------------------------- verdicts

def exit_text(status: JobStatus) -> str:
    """How a job ended, in words: ``exit 0``, ``KILLED by signal 9``; empty while it runs."""
    if not status.done:
        return ""
    if status.signal:
        return f"KILLED by signal {status.signal}"
    return "" if status.exit_code is None else f"exit {status.exit_code}"


def outputs_text(status: JobStatus) -> str:
    """What became of the job's outputs: ``outputs NOT saved: DEST: REASON``, ``outputs saved``."""
    if status.unsaved:
        return "outputs NOT saved: " + "; ".join(status.unsaved)
    return "outputs saved" if status.saved else ""


def verdict(status: JobStatus) -> str:
    """One line for a job: ``COMPLETED exit 0``, ``TIMEOUT (outputs saved)``, ``FAILED KILLED by signal 9``."""
    if status.state == "TIMEOUT" and status.saved and not status.unsaved:
        return "TIMEOUT (outputs saved)"
    words = [status.state, exit_text(status)]
    if status.unsaved:
        words[-1] += ";"
        words.append(outputs_text(status))
    return " ".join(word for word in words if word)


# -------------------------------------------------------------------------------------- sacct

SACCT_FIELDS = ("JobID", "State", "ExitCode", "ElapsedRaw", "NodeList")


def sacct_command(job_ids: Iterable[str]) -> List[str]:
    ids = sorted({str(j) for j in job_ids}, key=_task_order)
    return ["sacct", "-n", "-P", "-X", "-D", "-o", ",".join(SACCT_FIELDS), "-j", ",".join(ids)]


#: how sacct -D marks a run that ended with the job requeued (efficiency.py reads them too)
REQUEUED_STATES = frozenset({"REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "REQUEUE_CRASH", "PREEMPTED", "NODE_FAIL", "BOOT_FAIL"})


def parse_sacct(text: str) -> Dict[str, JobStatus]:
    """``sacct -n -P -X -D`` lines -> statuses; a pending array range ``12_[0-9%2]`` covers its
    tasks. A requeued job has a row per run, oldest first: its status is the last run's, and
    ``runs`` counts the requeued runs just before it (an older row in another state is another
    job that had the id)."""
    found: Dict[str, JobStatus] = {}
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < len(SACCT_FIELDS):
            continue
        job, state, exit_code, elapsed, nodes = parts[:5]
        for task in _expand_ids(job):
            before = found.get(task)
            runs = before.runs + 1 if before is not None and before.state in REQUEUED_STATES else 1
            found[task] = _status(task, state, _exit_pair(exit_code), int_or_none(elapsed),
                                  "" if nodes == "None assigned" else nodes, "sacct")._replace(runs=runs)
    return found


# ------------------------------------------------------------------------------------- squeue

SQUEUE_FIELDS = ("JobArrayID", "State", "exit_code", "TimeUsed", "NodeList")


def squeue_command(job_ids: Iterable[str]) -> List[str]:
    """One squeue call for the given jobs only, finished ones included (``-t all``)."""
    ids = sorted({str(j) for j in job_ids}, key=_task_order)
    return ["squeue", "-h", "-t", "all", f"--jobs={','.join(ids)}", "-O", ",".join(f"{f}:|" for f in SQUEUE_FIELDS)]


def parse_squeue(text: str) -> Dict[str, JobStatus]:
    """``squeue -O JobArrayID:|,State:|,exit_code:|,...`` lines -> statuses keyed like sacct's.

    squeue's exit_code is the raw wait status (22.05 to 24.x print it as one integer): the
    exit code times 256, or the signal number. ``3:0`` is read too, should a release change it.
    """
    found: Dict[str, JobStatus] = {}
    for line in text.splitlines():
        parts = [part.strip() for part in line.split("|")]
        if len(parts) < len(SQUEUE_FIELDS):
            continue
        job, state, raw, used, nodes = parts[:5]
        pair = _exit_pair(raw) if ":" in raw else _wait_status(raw)
        for task in _expand_ids(job):
            found[task] = _status(task, state, pair, _runtime_s(used), nodes, "squeue")
    return found


def _wait_status(text: str) -> Tuple[Optional[int], Optional[int]]:
    status = int_or_none(text)
    if status is None:
        return None, None
    return (None, status & 0x7F) if status & 0x7F else (status >> 8, None)


# -------------------------------------------------------------------------------- exit files

class ExitRecord(Record):
    """What a job's EXIT trap wrote (contract 1): its code, then ``timeout``/``saved``/``not-saved`` lines."""

    code: int
    timeout: bool = False
    saved: Tuple[str, ...] = ()
    unsaved: Tuple[str, ...] = ()


#: one poll's exit files, job id -> its record (None: the job has none yet), each read once
ExitRecords = Dict[str, Optional[ExitRecord]]


def parse_exit_file(text: str) -> Optional[ExitRecord]:
    """The exit file's text -> its record; None unless line 1 is an integer (an old file is just that)."""
    lines = text.splitlines()
    code = int_or_none(lines[0].strip()) if lines else None
    if code is None:
        return None
    timeout, saved, unsaved = False, [], []
    for line in lines[1:]:
        kind, _, rest = line.partition("\t")
        if kind == "timeout":
            timeout = True
        elif kind == "saved" and rest:
            saved.append(rest)
        elif kind == "not-saved" and rest:
            dest, _, reason = rest.partition("\t")
            unsaved.append(f"{dest}: {reason or 'no reason given'}")
    return ExitRecord(code, timeout, tuple(saved), tuple(unsaved))


def read_exit_file(job_id: str, folder: Optional[str]) -> Optional[ExitRecord]:
    if not folder:
        return None
    try:
        from slurmkit.core.files import read_bytes_bounded  # a pipe or a device there is not waited on

        text = read_bytes_bounded(Path(folder) / f"{job_id}.exit", 1 << 20).decode("utf-8", "replace")
        return parse_exit_file(text)
    except OSError:
        return None


def exit_file_status(job_id: str, folder: Optional[str]) -> Optional[JobStatus]:
    record = read_exit_file(job_id, folder)
    return None if record is None else from_exit_record(job_id, record)


def from_exit_record(job_id: str, record: ExitRecord) -> JobStatus:
    state = "TIMEOUT" if record.timeout else "COMPLETED" if record.code == 0 else "FAILED"
    return JobStatus(job_id, state, record.code, None, None, "", "exit-file", record.saved, record.unsaved)


def ended_state(state: str, record: ExitRecord) -> str:
    """SLURM's word for an ended job, corrected by its exit file: TIMEOUT where the script was
    stopped at its limit (SLURM says FAILED 124 when the trap saved the outputs and exited)."""
    return "TIMEOUT" if record.timeout and state in ("FAILED", "TIMEOUT") else state


def with_exit_record(status: JobStatus, record: Optional[ExitRecord]) -> JobStatus:
    """A SLURM answer for an ended job, completed by its exit file: its true state and its outputs."""
    if record is None or not status.done:
        return status
    return status._replace(state=ended_state(status.state, record), saved=record.saved, unsaved=record.unsaved)


# ------------------------------------------------------------------------------------- poll

class Poller:
    """Asks SLURM about jobs, one batched query per poll, remembering what lasts between polls:
    jobs that ended (never asked about again) and how long to leave a failing sacct alone.

    ``folders`` maps a job id (or array id) to its log folder, for the exit files;
    ``array_sizes`` lets an array that no source knows any more still list its tasks.
    """

    def __init__(self, folders: Optional[Mapping[str, str]] = None, array_sizes: Optional[Mapping[str, int]] = None,
                 run: Runner = _run) -> None:
        self.folders = folders if folders is not None else {}
        self.sizes = array_sizes or {}
        self.run = run
        self.final: Dict[str, JobStatus] = {}
        self.sacct_skip = 0      # polls left before sacct is tried again
        self.sacct_backoff = 0   # polls to skip after its next failure

    def poll(self, job_ids: Sequence[str]) -> Dict[str, JobStatus]:
        """The status of every job in ``job_ids`` (an array id stands for all its tasks)."""
        job_ids = [str(j) for j in job_ids]
        ask = self._open_ids(job_ids)
        known: Dict[str, JobStatus] = {}
        records: ExitRecords = {}
        if ask:
            self._ask(ask, known, records)
        answer = {}
        for job in wanted_ids(job_ids, self.sizes, {**self.final, **known}):
            status = self.final.get(job) or self._settle(job, known.get(job), records)
            if status.done:
                self.final[job] = status
            answer[job] = status
        return answer

    # ---------------------------------------------------------------- one poll's queries

    def _ask(self, ask: List[str], known: Dict[str, JobStatus], records: ExitRecords) -> None:
        """Fill ``known`` from sacct then squeue (squeue first while sacct is left alone), each
        asked only about the jobs the one before did not settle."""
        skip_sacct = self.sacct_skip > 0
        self.sacct_skip = max(0, self.sacct_skip - 1)
        errors: Dict[str, SchedulerError] = {}
        for name in ("squeue", "sacct") if skip_sacct else ("sacct", "squeue"):
            pending = [job for job in wanted_ids(ask, self.sizes, known) if not self._settled(job, known, records)]
            if known and not pending:
                break
            if name == "sacct" and skip_sacct and "squeue" not in errors and self._all_answered(pending, known, records):
                continue   # left alone after failing; the controller answered for every job
            try:
                answers = self._query(name, ask if not known else _ask_ids(pending, ask))
            except SchedulerError as error:
                errors[name] = error
                continue
            self._merge(answers, known, records)
        if errors and not self._all_answered(wanted_ids(ask, self.sizes, known), known, records):
            raise unreachable(errors)

    def _merge(self, answers: Mapping[str, JobStatus], known: Dict[str, JobStatus], records: ExitRecords) -> None:
        """A later source's answers into ``known``: new jobs, and an end the earlier one missed."""
        for job, status in answers.items():
            if job not in known or (not self._settled(job, known, records) and status.done):
                known[job] = status

    def _all_answered(self, jobs: Iterable[str], known: Mapping[str, JobStatus], records: ExitRecords) -> bool:
        """Whether every job has an answer from SLURM or an exit file."""
        return all(job in known or self._record(job, records) is not None for job in jobs)

    def _query(self, name: str, ids: List[str]) -> Dict[str, JobStatus]:
        if name == "sacct":
            try:
                answers = parse_sacct(self.run(sacct_command(ids)))
            except SchedulerError:
                self.sacct_skip = self.sacct_backoff = min(SACCT_MAX_SKIP, max(1, self.sacct_backoff * 2))
                raise
            self.sacct_backoff = 0
            return answers
        try:
            return parse_squeue(self.run(squeue_command(ids)))
        except SchedulerError as error:
            if "Invalid job id" in error.message:   # squeue's answer when it knows none of them
                return {}
            raise

    # ------------------------------------------------------------------------- helpers

    def _record(self, job: str, records: ExitRecords) -> Optional[ExitRecord]:
        """The job's exit file, read once per poll."""
        if job not in records:
            records[job] = read_exit_file(job, self.folders.get(job) or self.folders.get(job.split("_")[0]))
        return records[job]

    def _settled(self, job: str, known: Mapping[str, JobStatus], records: ExitRecords) -> bool:
        """Answered, and not contradicted by an exit file (sacct lags behind a job that just ended)."""
        return job in known and (known[job].done or self._record(job, records) is None)

    def _settle(self, job: str, answer: Optional[JobStatus], records: ExitRecords) -> JobStatus:
        """The final word on one job from this poll's answer and its exit file."""
        record = self._record(job, records)
        if answer is not None and answer.done:
            return with_exit_record(answer, record)
        if record is not None:   # it ended; a stale answer may still know where it ran
            status = from_exit_record(job, record)
            return status._replace(nodes=answer.nodes, elapsed_s=answer.elapsed_s) if answer else status
        return answer or JobStatus(job, "UNKNOWN")

    def _open_ids(self, job_ids: List[str]) -> List[str]:
        """What to ask SLURM: jobs not yet ended; an array by its open tasks when they are few."""
        ask = []
        for job in job_ids:
            tasks = [t for t in wanted_ids([job], self.sizes, self.final) if t != job]
            if not tasks:
                if job not in self.final:
                    ask.append(job)
                continue
            still_open = [t for t in tasks if t not in self.final]
            if len(still_open) > TASK_IDS_MAX:
                ask.append(job)
            else:
                ask += still_open
        return ask


def poll(job_ids: Sequence[str], folders: Optional[Mapping[str, str]] = None, run: Runner = _run,
         array_sizes: Optional[Mapping[str, int]] = None) -> Dict[str, JobStatus]:
    """One poll of ``job_ids`` by a fresh Poller (``slurmkit status``): see Poller."""
    return Poller(folders, array_sizes, run).poll(job_ids)


def _ask_ids(pending: List[str], asked: List[str]) -> List[str]:
    """The ids to ask the next source: the unsettled jobs, an array by its id when many are open."""
    by_array: Dict[str, List[str]] = {}
    for job in pending:
        by_array.setdefault(job.split("_")[0], []).append(job)
    ids = []
    for base, jobs in by_array.items():
        ids += [base] if base in asked and len(jobs) > TASK_IDS_MAX else jobs
    return ids


def wanted_ids(job_ids: Iterable[str], array_sizes: Mapping[str, int],
               known: Optional[Mapping[str, JobStatus]] = None) -> List[str]:
    """The jobs a poll answers for: single jobs as given; an array id as its tasks (from the
    answers in ``known``, or from its size). Shared with the poller that reads exit files on a
    cluster, which must know the same jobs before it asks."""
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


# ------------------------------------------------------------------------ unreachable SLURM

NOT_CONFIGURED = ("Could not establish a configuration source", "Unable to process configuration file",
                  "ClusterName needs to be specified")


def unreachable(errors: Mapping[str, SchedulerError]) -> SlurmUnreachable:
    """One line for SLURM not answering: no configuration (set SLURM_CONF), or each command's reason."""
    import os

    reasons = " ".join(error.message for error in errors.values())
    if any(marker in reasons for marker in NOT_CONFIGURED):
        conf = os.environ.get("SLURM_CONF")
        where = f"SLURM_CONF={conf} is not a readable slurm.conf" if conf else "SLURM_CONF is unset and none was found"
        return SlurmNotConfigured(f"SLURM's commands found no configuration ({where}): set SLURM_CONF or run on a login node")
    said = "; ".join(errors[name].message for name in sorted(errors))
    return SlurmUnreachable(f"SLURM is not answering ({said}): check `scontrol ping`, or try again when the controller is back")


# ------------------------------------------------------------------------------------- cadence

class Cadence:
    """How long to wait before the next poll: 0.5 s, doubling up to ``cap`` seconds.

    Young jobs are seen quickly; a long one costs one query every ``cap`` seconds. A 60 s
    job polled with cap 15 s is asked about at 0, 0.5, 1.5, 3.5, 7.5, 15.5, 30.5, 45.5, 60.5 s.
    """

    FIRST_S = 0.5

    def __init__(self, cap: float = 30.0) -> None:
        self.cap = max(cap, 0.01)
        self.current = min(self.FIRST_S, self.cap)

    def next(self) -> float:
        delay, self.current = self.current, min(self.current * 2, self.cap)
        return delay


# ------------------------------------------------------------------------------------- watch

class Watch:
    """Poll until every job is done, on one Cadence capped at ``interval``.

    A poll that cannot reach SLURM leaves ``lost`` set to the error (the caller shows it) and
    the previous statuses stand; polling goes on with the same back-off, and ``lost`` is
    cleared by the first poll that answers. No configuration at all is raised at once.
    """

    def __init__(self, job_ids: Sequence[str], interval: float = 30.0, folders: Optional[Mapping[str, str]] = None,
                 array_sizes: Optional[Mapping[str, int]] = None, run: Runner = _run,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.job_ids = list(job_ids)
        self.poller = Poller(folders, array_sizes, run)
        self.cadence = Cadence(interval)
        self.sleep = sleep
        self.polls = 0
        self.lost: Optional[SlurmUnreachable] = None

    def statuses(self) -> Dict[str, JobStatus]:
        self.polls += 1
        return self.poller.poll(self.job_ids)

    def __iter__(self) -> Iterator[Dict[str, JobStatus]]:
        """Yields the statuses after each poll; stops after the poll where all are done."""
        current: Dict[str, JobStatus] = {}
        while True:
            try:
                current, self.lost = self.statuses(), None
            except SlurmNotConfigured:
                raise
            except SlurmUnreachable as error:
                self.lost = error
            yield current
            if current and self.lost is None and all(s.done for s in current.values()):
                return
            self.sleep(self.cadence.next())


# ----------------------------------------------------------------------------------- helpers

def _status(job: str, state: str, pair, elapsed, nodes: str, source: str) -> JobStatus:
    """A status with no exit code or signal while the job has not ended (SLURM says 0:0 then)."""
    word = state_word(state)
    code, signal = pair if word in TERMINAL else (None, None)
    return JobStatus(job, word, None if signal else code, signal or None, elapsed, nodes, source)


def state_word(state: str) -> str:
    """sacct's state as one word: ``CANCELLED by 0`` -> CANCELLED, ``RUNNING+`` -> RUNNING."""
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
    """``1-02:03:04``, ``02:03:04`` (scontrol) or ``3:04`` (squeue's TimeUsed) -> seconds."""
    match = re.fullmatch(r"(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)", text)
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
