"""Where jobs stand: one batched query per poll, an answer without accounting, and an error
(never a wall of UNKNOWN) when SLURM cannot be asked at all.

A ``Poller`` asks, in order, until every job it follows has an answer:

1. ``sacct`` (one call for all open jobs): the record of every job, if slurmdbd is up. After
   a failure sacct is skipped for a growing number of polls (1, 2, 4, ... 16), so accounting
   being down costs one short attempt now and then, not seconds every poll. A cancelled job
   whose row and exit file give no signal has its batch step asked for (``-j 12.batch``);
2. ``squeue --jobs=IDS -t all`` (one call, only the jobs sacct did not settle): state, run
   time, nodes and the raw wait status (exit code or signal) of jobs the controller holds,
   which includes those that ended within MinJobAge. squeue takes a list of ids where
   ``scontrol show job`` takes one, and it is never asked about every job on the cluster;
3. the exit file each rendered script writes from its EXIT trap (``<folder>/<id>.exit``): how
   the job ended (its code, ``timeout``, which outputs were saved and which were not). It is
   read for every job that ended, and answers alone when neither of the above remembers.

What each answer means is decided in one place, ``reconcile``: SLURM says which run of the job
this is and whether it ended (a requeued job is not ended, whatever an earlier run's exit file
says), the job's own exit file says its exit code and what became of its outputs, and a job
that stages outputs but left no exit file is waited for (the EXIT trap may still be saving) or
said to have lost them (its batch shell was killed).

A job that has ended is not asked about again. When a query failed and some job is left with
no answer at all, ``SlurmUnreachable`` names the commands and SLURM's reasons (and
``SlurmNotConfigured`` says to set SLURM_CONF when no configuration was found). Every query
has a short timeout and no retry: the caller polls again on its ``Cadence``.
"""

from __future__ import annotations

import re
import time
from typing import Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

from slurmkit.core.array_ids import TaskIds, task_ids
from slurmkit.core.records import Record
from slurmkit.slurm.jobfiles import ExitRecord, StartedRecord, read_exit_file, read_started_file
from slurmkit.slurm.jobfiles import parse_exit_file as parse_exit_file  # jobfiles.py's, here where it has always been
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
#: how long a watch waits, after SLURM says that a job which stages outputs ended, for the exit
#: file that says what became of them (the EXIT trap saves them after SLURM's TERM; SLURM kills
#: what is left after KillWait, 30 s on most clusters). Past it the verdict says so.
OUTCOME_WAIT_S = 60.0
#: SLURM will run a job in these states again: its run is over and the next one is coming.
WILL_RUN_AGAIN = frozenset({"REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED"})
#: ends that SLURM takes back when the job is requeued: accounting shows the old run's row until
#: the next run has one, so the controller is asked whether it holds the job again.
MAY_RUN_AGAIN = frozenset({"NODE_FAIL", "PREEMPTED", "BOOT_FAIL"})
#: the reason given for each output of a job whose batch shell died without its EXIT trap.
SHELL_KILLED = "the batch shell was killed before it could save"


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
    runs: int = 1                 # this is the job's run N: requeued N - 1 times (sacct -D, squeue's RestartCnt)
    killed: bool = False          # the payload did not stop after TERM and was killed before the final copy
    kept: Tuple[str, ...] = ()    # copies that could not be checked, kept beside their destination
    outputs_unknown: Tuple[str, ...] = ()   # outputs whose fate no exit file has told (yet)
    settling: str = ""            # SLURM said it ended, but its end is not known yet: why (not done meanwhile)
    reason: str = ""              # why a PENDING job waits, SLURM's word (Priority, BeginTime, ...); "" otherwise
    time_limit_s: Optional[int] = None   # its time limit (None: unlimited, or not said)

    @property
    def done(self) -> bool:
        return self.state in TERMINAL and not self.settling

    @property
    def ok(self) -> bool:
        return self.state == SUCCESS and not self.settling and not self.unsaved and not self.outputs_unknown


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
    """How a job ended, in words: ``exit 0``, ``KILLED by signal 9``, ``exit 143 (signal 15)``,
    ``by signal 15 (exit 143)`` for a cancelled job; empty while it runs. The code is the job's
    own (its exit file), the signal SLURM's."""
    if not status.done:
        return ""
    if status.signal and status.state == "CANCELLED":   # scancel's TERM: how, then the code the job had
        return f"by signal {status.signal}" + ("" if status.exit_code is None else f" (exit {status.exit_code})")
    if status.signal:
        return f"KILLED by signal {status.signal}" if status.exit_code is None else f"exit {status.exit_code} (signal {status.signal})"
    return "" if status.exit_code is None else f"exit {status.exit_code}"


def outputs_words(saved: Sequence[str], unsaved: Sequence[str], unknown: Sequence[str] = ()) -> str:
    """What became of a job's outputs: ``NOT saved: DEST: REASON``, ``saved``, ``not yet known: DEST``;
    a batch shell killed before its EXIT trap as one reason for all of them. The status table
    and the efficiency report both say it so."""
    if unsaved:
        reasons = {item.partition(": ")[2] for item in unsaved}
        if len(reasons) == 1 and next(iter(reasons)).startswith(SHELL_KILLED):
            return f"NOT saved: {reasons.pop()}: " + ", ".join(item.partition(": ")[0] for item in unsaved)
        return "NOT saved: " + "; ".join(unsaved)
    if unknown:
        return "not yet known (no exit file yet): " + ", ".join(unknown)
    return "saved" if saved else ""


def outputs_text(status: JobStatus) -> str:
    """What became of the job's outputs: ``outputs NOT saved: DEST: REASON``, ``outputs saved``."""
    words = outputs_words(status.saved, status.unsaved, status.outputs_unknown)
    return f"outputs {words}" if words else ""


def verdict(status: JobStatus) -> str:
    """One line for a job: ``COMPLETED exit 0``, ``TIMEOUT (outputs saved)``, ``FAILED KILLED by signal 9``,
    ``COMPLETED (run 2) exit 0`` (a requeued job's last run);
    for a job not yet ended, its state (``CANCELLED (saving its outputs)``, ``PENDING (run 2)``)."""
    if not status.done:
        return progress_text(status)
    saved_in_time = status.state == "TIMEOUT" and status.saved and not status.unsaved and not status.outputs_unknown
    notes = (["outputs saved"] if saved_in_time else []) + ([f"run {status.runs}"] if status.runs > 1 else [])
    words = [status.state + (f" ({', '.join(notes)})" if notes else "")]
    if not saved_in_time:
        words.append(exit_text(status))
    if status.killed:
        words.append("(the payload was killed after TERM)")
    outputs = "" if saved_in_time else outputs_text(status)
    if outputs:
        words = [word for word in words if word]
        words[-1] += ";"
        words.append(outputs)
    return " ".join(word for word in words if word)


def progress_text(status: JobStatus) -> str:
    """A job's state while it has not ended: ``RUNNING``, ``PENDING (run 2)``, ``CANCELLED (saving its outputs)``."""
    notes = [f"run {status.runs}"] if status.runs > 1 else []
    if status.settling:
        notes.append(status.settling)
    return status.state + (f" ({', '.join(notes)})" if notes else "")


# -------------------------------------------------------------------------------------- sacct

SACCT_FIELDS = ("JobID", "State", "ExitCode", "ElapsedRaw", "NodeList", "Reason", "TimelimitRaw")


def sacct_command(job_ids: Iterable[str]) -> List[str]:
    ids = sorted({str(j) for j in job_ids}, key=_task_order)
    return ["sacct", "-n", "-P", "-X", "-D", "-o", ",".join(SACCT_FIELDS), "-j", ",".join(ids)]


def batch_steps_command(job_ids: Iterable[str]) -> List[str]:
    """sacct for the batch steps alone (``-j 12.batch``): a job's id would list every step, and a
    job of many ``srun`` steps has thousands."""
    ids = sorted({str(j) for j in job_ids}, key=_task_order)
    return ["sacct", "-n", "-P", "-D", "-o", ",".join(SACCT_FIELDS), "-j", ",".join(f"{job}.batch" for job in ids)]


#: how sacct -D marks a run that ended with the job requeued (efficiency.py reads them too)
REQUEUED_STATES = frozenset({"REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "REQUEUE_CRASH", "PREEMPTED", "NODE_FAIL", "BOOT_FAIL"})


def parse_sacct(text: str) -> Dict[str, JobStatus]:
    """``sacct -n -P -X -D`` lines -> statuses; a pending array range ``12_[0-9%2]`` covers its
    tasks, and a step's row (``12.batch``) only completes its job's (``_batch_step``). A requeued
    job has a row per run, oldest first: its status is the last row's, and ``runs`` says which
    run that is (an older row in another state is another job that had the id). A last row that
    says the job will run again (REQUEUED) stands for the run to come."""
    found: Dict[str, JobStatus] = {}
    ended_runs: Dict[str, int] = {}   # job -> its rows so far that ended in a requeue
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < 5:
            continue
        job, state, exit_code, elapsed, nodes = parts[:5]
        if "." in job:
            _batch_step(found, job, state, exit_code)
            continue
        for task in _expand_ids(job):
            before = found.get(task)
            earlier = ended_runs.get(task, 0) if before is not None and before.state in REQUEUED_STATES else 0
            status = _status(task, state, _exit_pair(exit_code), int_or_none(elapsed), "" if nodes == "None assigned" else nodes, "sacct")
            status = _with_wait(status, *(parts[5:7] + ["", ""])[:2])
            ended_runs[task] = earlier + (status.state in REQUEUED_STATES)
            found[task] = status._replace(runs=earlier + 1 + (status.state in WILL_RUN_AGAIN))
    return found


def _batch_step(found: Dict[str, JobStatus], step: str, state: str, exit_code: str) -> None:
    """A step row: the batch step's signal completes its job's latest row where that row has none
    (a cancelled job's row says ``CANCELLED 0:0``; its batch step ``CANCELLED 0:15``, the TERM
    that ended the shell). sacct prints a code of 128 + N as N, so a step's code is not read."""
    job, _, name = step.partition(".")
    status = found.get(job)
    signal = _exit_pair(exit_code)[1]
    if name == "batch" and status is not None and status.state == "CANCELLED" and not status.signal and signal:
        found[job] = status._replace(signal=signal)


# ------------------------------------------------------------------------------------- squeue

SQUEUE_FIELDS = ("JobArrayID", "State", "exit_code", "TimeUsed", "NodeList", "RestartCnt", "Reason", "TimeLimit")


def squeue_command(job_ids: Iterable[str]) -> List[str]:
    """One squeue call for the given jobs only, finished ones included (``-t all``)."""
    ids = sorted({str(j) for j in job_ids}, key=_task_order)
    return ["squeue", "-h", "-t", "all", f"--jobs={','.join(ids)}", "-O", ",".join(f"{f}:|" for f in SQUEUE_FIELDS)]


def parse_squeue(text: str) -> Dict[str, JobStatus]:
    """``squeue -O JobArrayID:|,State:|,exit_code:|,...`` lines -> statuses keyed like sacct's.

    squeue's exit_code is the raw wait status (22.05 to 24.x print it as one integer): the
    exit code times 256, or the signal number. ``3:0`` is read too, should a release change it.
    RestartCnt (how often the job was requeued; in 22.05) makes ``runs``; a line without it is run 1.
    """
    found: Dict[str, JobStatus] = {}
    for line in text.splitlines():
        parts = [part.strip() for part in line.split("|")]
        if len(parts) < 5:
            continue
        job, state, raw, used, nodes = parts[:5]
        pair = _exit_pair(raw) if ":" in raw else _wait_status(raw)
        restarts = int_or_none(parts[5]) if len(parts) > 5 else None
        for task in _expand_ids(job):
            status = _status(task, state, pair, _runtime_s(used), nodes, "squeue")
            status = _with_wait(status, parts[6] if len(parts) > 6 else "", _limit_minutes(parts[7]) if len(parts) > 7 else "")
            found[task] = status._replace(runs=1 + max(restarts or 0, 0))
    return found


def _with_wait(status: JobStatus, reason: str = "", limit_minutes: str = "") -> JobStatus:
    """A status with its time limit (minutes, as sacct's TimelimitRaw) and, while it pends, why
    (SLURM says ``None`` for a job that waits for nothing)."""
    reason = reason.strip() if status.state == "PENDING" and reason.strip() not in ("", "None", "(null)") else ""
    minutes = int_or_none(limit_minutes)
    return status._replace(reason=reason, time_limit_s=None if minutes is None else minutes * 60)


def _limit_minutes(text: str) -> str:
    """squeue's TimeLimit (``1:00:00``, ``1-00:00:00``, ``UNLIMITED``) in whole minutes, as sacct's TimelimitRaw."""
    seconds = _runtime_s(text.strip())
    return "" if seconds is None else str(seconds // 60)


def _wait_status(text: str) -> Tuple[Optional[int], Optional[int]]:
    status = int_or_none(text)
    if status is None:
        return None, None
    return (None, status & 0x7F) if status & 0x7F else (status >> 8, None)


# ---------------------------------------------------------------------------- reconciling

#: one poll's exit files, job id -> its record (None: the job has none yet), each read once
ExitRecords = Dict[str, Optional[ExitRecord]]


def reconcile(job_id: str, slurm: Optional[JobStatus], record: Optional[ExitRecord], started: Optional[StartedRecord] = None,
              controller: Optional[str] = None, ended_for_s: Optional[float] = None, accounted: bool = False) -> JobStatus:
    """The one word on a job, from what SLURM says and what the job's files say.

    ``slurm``: the answer of sacct or squeue (its state, code, signal and ``runs``, the run SLURM
    is at), None when neither knows the job. ``record``/``started``: its exit and started files.
    ``controller``: squeue's state for the job this poll ("" when squeue answered without it,
    None when squeue was not asked or did not answer). ``ended_for_s``: how long a watcher has
    seen SLURM say the job ended (None: one look, as ``status`` takes). ``accounted``: sacct
    answered this poll (without the job, when ``slurm`` is None).

    The sources, most authoritative first: sacct's job row (state, code, signal), its batch step
    (the signal of a cancelled job), squeue (the live state, the exact wait status), the exit
    file (the code and the outputs). A weaker source's end is kept until a stronger one answers
    (``Poller``); the decisions, row by row, are tests/unit/test_reconcile.py.

    - SLURM is the authority for whether the job ended and for the signal: a job it will run
      again (requeued) has not ended, whatever an earlier run's exit file says. An exit file
      counts only if its run is SLURM's current run or later; one that says the job exited by
      itself (a code below 128) outranks a state that lags (sacct says RUNNING for a moment
      after the end); one that says it was stopped by a signal (143) waits for SLURM's word,
      which may be CANCELLED, TIMEOUT or a requeue: the job is ENDING, never FAILED from the
      file alone while accounting has not answered.
    - A cancelled job shows the signal that ended it (its batch step's, or 128 + N from its
      code) beside the code it really had: ``CANCELLED by signal 15 (exit 143)``.
    - The exit file is the authority for the exit code and the outputs (SLURM's 0:0 right
      after slurmdbd came back is not the job's code).
    - A job SLURM says ended with no exit file of its run, whose started file lists outputs:
      its EXIT trap may still be saving (waited for, up to OUTCOME_WAIT_S), or its batch shell
      was killed without it (a signal, or nothing left running): those outputs are NOT saved.
    """
    if slurm is None:
        if record is None:
            return JobStatus(job_id, "UNKNOWN")
        return ending(job_id, record) if signal_code(record) and not accounted else from_exit_record(job_id, record)
    current = record is not None and record.run >= slurm.runs
    if not slurm.done:
        if current and record is not None and (record.timeout or 0 <= record.code < 128):
            return from_exit_record(job_id, record)._replace(nodes=slurm.nodes, elapsed_s=slurm.elapsed_s, time_limit_s=slurm.time_limit_s)
        if current and record is not None and slurm.state == "RUNNING" and signal_code(record):
            return ending(job_id, record)._replace(nodes=slurm.nodes, elapsed_s=slurm.elapsed_s, time_limit_s=slurm.time_limit_s)
        return slurm
    if slurm.state in MAY_RUN_AGAIN and slurm.source == "sacct" and controller is None:
        return slurm._replace(settling="asking the controller whether SLURM runs it again")
    if current and record is not None:
        return cancelled_by(ended_with_record(slurm, record))
    return cancelled_by(_ended_without_record(slurm, started, controller, ended_for_s))


#: live states of a job that SLURM has started in its run (a COMPLETING job may be requeued next).
STARTED = frozenset({"CONFIGURING", "RUNNING", "SUSPENDED"})
#: how far a live job is within one run: waiting, then running, then completing.
_LIVE_STEPS = {"PENDING": 0, "REQUEUED": 0, "CONFIGURING": 1, "RUNNING": 2, "SUSPENDED": 2, "COMPLETING": 3}


def progress(status: JobStatus) -> Tuple[int, int]:
    """(the run, how far in it) of ``status``: an end is further than any live state of its run.
    Two answers of one poll are ranked by it, so that a lagging source never takes a job back."""
    return status.runs, 4 if status.done else _LIVE_STEPS.get(status.state, 0)


#: a job whose exit file says a signal stopped it, before SLURM has said why (not ended for slurmkit).
ENDING = "ENDING"


def signal_code(record: ExitRecord) -> Optional[int]:
    """The signal an exit file's code says stopped the job (bash exits 128 + N on a signal, as
    the script's ``trap 'exit 143' TERM`` does), else None; a stop at the time limit is TIMEOUT."""
    return record.code - 128 if not record.timeout and 128 < record.code <= 128 + 64 else None


def ending(job_id: str, record: ExitRecord) -> JobStatus:
    """A job stopped by a signal that SLURM has not yet said why (CANCELLED, TIMEOUT, a requeue
    or a failure are SLURM's to say): ENDING, asked about again, never finalised from the file."""
    why = f"its exit file says {record.code}, signal {signal_code(record)}: waiting for SLURM to say why"
    return JobStatus(job_id, ENDING, None, None, None, "", "exit-file", record.saved, record.unsaved, record.run,
                     record.killed, record.kept, settling=why)


def cancelled_by(status: JobStatus) -> JobStatus:
    """A cancelled job's signal from its code (128 + N) where no SLURM source gave one."""
    code = status.exit_code
    if status.state == "CANCELLED" and not status.signal and code is not None and 128 < code <= 128 + 64:
        return status._replace(signal=code - 128)
    return status


def ended_with_record(status: JobStatus, record: ExitRecord) -> JobStatus:
    """An end SLURM reported, completed by the job's exit file: the code and the outputs are the
    file's; COMPLETED and FAILED follow its code, TIMEOUT where the script stopped at its limit."""
    state = status.state
    if state in ("COMPLETED", "FAILED"):
        state = "COMPLETED" if record.code == 0 else "FAILED"
    return status._replace(state=ended_state(state, record), exit_code=record.code, saved=record.saved,
                           unsaved=record.unsaved, killed=record.killed, kept=record.kept, runs=max(status.runs, record.run))


def _ended_without_record(status: JobStatus, started: Optional[StartedRecord], controller: Optional[str],
                          ended_for_s: Optional[float]) -> JobStatus:
    """An end with no exit file of its run: what became of the outputs its started file lists."""
    if started is None or started.run < status.runs or not started.outputs:
        return status
    status = status._replace(saved=started.saved)
    outputs = tuple(dest for dest in started.outputs if dest not in started.saved)
    if not outputs:
        return status
    shell_gone = controller is not None and controller != "COMPLETING"   # nothing of the job left running
    forgotten = controller == ""   # the controller no longer holds it at all: it ended minutes ago (MinJobAge)
    if status.signal or status.state in ("NODE_FAIL", "BOOT_FAIL") or forgotten or (ended_for_s is None and shell_gone):
        return status._replace(unsaved=tuple(f"{dest}: {SHELL_KILLED} (run {status.runs})" for dest in outputs))
    if ended_for_s is not None and ended_for_s >= OUTCOME_WAIT_S:
        if controller == "COMPLETING":   # still at work when the wait ran out
            return status._replace(outputs_unknown=outputs)
        return status._replace(unsaved=tuple(f"{dest}: {SHELL_KILLED} (run {status.runs})" for dest in outputs))
    return status._replace(settling="saving its outputs", exit_code=None)


def from_exit_record(job_id: str, record: ExitRecord) -> JobStatus:
    """The status an exit file alone gives (no SLURM source answered for the job)."""
    state = "TIMEOUT" if record.timeout else "COMPLETED" if record.code == 0 else "FAILED"
    return JobStatus(job_id, state, record.code, None, None, "", "exit-file", record.saved, record.unsaved, record.run,
                     record.killed, record.kept)


def exit_file_status(job_id: str, folder: Optional[str]) -> Optional[JobStatus]:
    record = read_exit_file(job_id, folder)
    return None if record is None else from_exit_record(job_id, record)


def ended_state(state: str, record: ExitRecord) -> str:
    """SLURM's word for an ended job, corrected by its exit file: TIMEOUT where the script was
    stopped at its limit (SLURM says FAILED 124 when the trap saved the outputs and exited)."""
    return "TIMEOUT" if record.timeout and state in ("FAILED", "TIMEOUT") else state


def with_exit_record(status: JobStatus, record: Optional[ExitRecord], started: Optional[StartedRecord] = None) -> JobStatus:
    """A SLURM answer for a job looked at after it ended (``report``), completed by its files:
    ``reconcile`` with nothing of the job left running."""
    if not status.done:
        return status
    return reconcile(status.job_id, status, record, started, controller="")


# ------------------------------------------------------------------------------------- poll

class Round:
    """What one poll learnt: SLURM's answers, the job files read (each once), and the controller's word."""

    __slots__ = ("known", "records", "started", "controller", "accounted")

    def __init__(self) -> None:
        self.known: Dict[str, JobStatus] = {}
        self.records: ExitRecords = {}
        self.started: Dict[str, Optional[StartedRecord]] = {}
        self.controller: Dict[str, str] = {}   # squeue's state for each job it was asked about ("": it had none)
        self.accounted = False   # sacct answered


#: how much each source's word on an ended job counts: a weaker one's end is kept until a stronger one's comes.
SOURCE_RANK = {"sacct": 3, "squeue": 2, "exit-file": 1}


def stronger(fresh: JobStatus, kept: Optional[JobStatus]) -> JobStatus:
    """The better word on a job that an earlier poll saw end: this poll's when it ended too, by
    a source at least as strong; else the one kept."""
    if kept is None or (fresh.done and SOURCE_RANK.get(fresh.source, 0) >= SOURCE_RANK.get(kept.source, 0)):
        return fresh
    return kept


class Poller:
    """Asks SLURM about jobs, one batched query per poll, remembering what lasts between polls:
    jobs that ended (never asked about again once accounting has said so; an end only the
    controller or an exit file told is asked again, and kept until accounting answers) and how
    long to leave a failing sacct alone.

    ``folders`` maps a job id (or array id) to its log folder, for the exit files;
    ``array_sizes`` lets an array that no source knows any more still list its tasks.
    ``waiting``: a watcher that polls until the end (``watch``, ``wait()``), which waits up to
    OUTCOME_WAIT_S for the exit file of a job that stages outputs; one look (``status``) does not.
    After each poll, ``answered`` says whether sacct or squeue answered, ``errors`` what failed.
    """

    def __init__(self, folders: Optional[Mapping[str, str]] = None, array_sizes: Optional[Mapping[str, TaskIds]] = None,
                 run: Runner = _run, waiting: bool = False, clock: Callable[[], float] = time.monotonic) -> None:
        self.folders = folders if folders is not None else {}
        self.sizes = array_sizes or {}
        self.run = run
        self.waiting, self.clock = waiting, clock
        self.final: Dict[str, JobStatus] = {}
        self.provisional: Dict[str, JobStatus] = {}   # ends told by a source weaker than sacct
        self.furthest: Dict[str, JobStatus] = {}      # the furthest live state shown of each job's run
        self.ended_at: Dict[str, float] = {}   # when this poller first heard SLURM say a job ended
        self.sacct_skip = 0      # polls left before sacct is tried again
        self.sacct_backoff = 0   # polls to skip after its next failure
        self.answered = False
        self.errors: Dict[str, SchedulerError] = {}

    def poll(self, job_ids: Sequence[str]) -> Dict[str, JobStatus]:
        """The status of every job in ``job_ids`` (an array id stands for all its tasks)."""
        job_ids = [str(j) for j in job_ids]
        ask = self._open_ids(job_ids)
        seen = Round()
        self.answered, self.errors = False, {}
        if ask:
            self._ask(ask, seen)
        answer = {}
        for job in wanted_ids(job_ids, self.sizes, {**self.provisional, **self.final, **seen.known}):
            status = self.final.get(job) or stronger(self._settle(job, seen), self.provisional.get(job))
            status = self._never_back(job, status)
            if status.done and status.source == "sacct":
                self.final[job] = status
                self.provisional.pop(job, None)
            elif status.done:
                self.provisional[job] = status
            answer[job] = status
        return answer

    def _never_back(self, job: str, status: JobStatus) -> JobStatus:
        """``status``, or the live state shown before when ``status`` is a step back in the same
        run: a job SLURM started does not wait again unless it is requeued, which is a new run
        (sacct can answer PENDING for a moment after a poll saw the job RUNNING)."""
        if status.done:
            return status
        before = self.furthest.get(job)
        if before is not None and status.state == "PENDING" and before.state in STARTED and status.runs == before.runs:
            return before
        self.furthest[job] = status
        return status

    # ---------------------------------------------------------------- one poll's queries

    def _ask(self, ask: List[str], seen: Round) -> None:
        """Fill ``seen`` from sacct then squeue (squeue first while sacct is left alone), each
        asked only about the jobs the one before did not settle."""
        skip_sacct = self.sacct_skip > 0
        self.sacct_skip = max(0, self.sacct_skip - 1)
        for name in ("squeue", "sacct") if skip_sacct else ("sacct", "squeue"):
            pending = [job for job in wanted_ids(ask, self.sizes, seen.known) if not self._settled(job, seen)]
            if seen.known and not pending:
                break
            if name == "sacct" and skip_sacct and "squeue" not in self.errors and self._all_answered(pending, seen):
                continue   # left alone after failing; the controller answered for every job
            ids = ask if not seen.known else _ask_ids(pending, ask)
            try:
                answers = self._query(name, ids)
            except SchedulerError as error:
                self.errors[name] = error
                continue
            self.answered = True
            if name == "sacct":
                seen.accounted = True
                self._batch_signals(answers, seen)
            if name == "squeue":
                seen.controller.update({job: answers[job].state if job in answers else ""
                                        for job in wanted_ids(ids, self.sizes, answers)})
            self._merge(answers, seen)
        if self.errors and not self._all_answered(wanted_ids(ask, self.sizes, seen.known), seen):
            raise unreachable(self.errors)

    def _merge(self, answers: Mapping[str, JobStatus], seen: Round) -> None:
        """A later source's answers into ``seen``: new jobs, and a later run, or a step further in
        the same run, that the earlier one missed (sacct says PENDING for a moment after the
        controller started the job: squeue's RUNNING is the truer word, not a step back)."""
        for job, status in answers.items():
            before = seen.known.get(job)
            if before is None or (not self._settled(job, seen) and progress(status) > progress(before)):
                seen.known[job] = status
            elif status.reason and before.state == status.state == "PENDING":   # accounting never says why a job waits
                seen.known[job] = before._replace(reason=status.reason)

    def _batch_signals(self, answers: Dict[str, JobStatus], seen: Round) -> None:
        """The signal of each cancelled job that neither its row nor its exit file gives (a shell
        without slurmkit's TERM trap), from its batch step: one more sacct, for those only."""
        unsaid = []
        for job, status in answers.items():
            if status.state == "CANCELLED" and not status.signal:
                record = self._record(job, seen.records)
                if record is None or not signal_code(record):
                    unsaid.append(job)
        if not unsaid:
            return
        try:
            text = self.run(batch_steps_command(unsaid))
        except SchedulerError:
            return   # the signal is a detail: the state stands without it
        for line in text.splitlines():
            parts = line.split("|")
            if len(parts) >= 5 and "." in parts[0]:
                _batch_step(answers, parts[0], parts[1], parts[2])

    def _all_answered(self, jobs: Iterable[str], seen: Round) -> bool:
        """Whether every job has an answer from SLURM or an exit file."""
        return all(job in seen.known or self._record(job, seen.records) is not None for job in jobs)

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

    def _folder(self, job: str) -> Optional[str]:
        return self.folders.get(job) or self.folders.get(job.split("_")[0])

    def _record(self, job: str, records: ExitRecords) -> Optional[ExitRecord]:
        """The job's exit file, read once per poll."""
        if job not in records:
            records[job] = read_exit_file(job, self._folder(job))
        return records[job]

    def _started(self, job: str, started: Dict[str, Optional[StartedRecord]]) -> Optional[StartedRecord]:
        """The job's started file, read once per poll (only for a job that ended without an exit file)."""
        if job not in started:
            started[job] = read_started_file(job, self._folder(job))
        return started[job]

    def _settled(self, job: str, seen: Round) -> bool:
        """Answered, and nothing left that the next source (the controller) could change."""
        status = seen.known.get(job)
        return status is not None and not self._needs_controller(job, status, seen)

    def _needs_controller(self, job: str, status: JobStatus, seen: Round) -> bool:
        """Whether the controller should be asked too: an exit file of this run says the job ended
        (sacct lags); an end that a requeue may have taken back; an end with outputs whose exit
        file has not come (squeue says whether the job is still completing); a pending job, whose
        reason to wait the controller knows first (22.05's sacct says ``None``; where it says one,
        accounting may still hold the reason before a hold or a release)."""
        record = self._record(job, seen.records)
        current = record is not None and record.run >= status.runs
        if not status.done:
            return current or (status.state == "PENDING" and status.source == "sacct")
        if status.state in MAY_RUN_AGAIN and status.source == "sacct":
            return True
        if current or status.signal:
            return False
        started = self._started(job, seen.started)
        return started is not None and started.run >= status.runs and bool(started.outputs)

    def _settle(self, job: str, seen: Round) -> JobStatus:
        """The word on one job from this poll's answers and its files (``reconcile``)."""
        answer = seen.known.get(job)
        record = self._record(job, seen.records)
        started = None
        if answer is not None and answer.done and not (record is not None and record.run >= answer.runs):
            started = self._started(job, seen.started)
        ended_for = None
        if self.waiting and answer is not None and answer.done:
            ended_for = self.clock() - self.ended_at.setdefault(job, self.clock())
        return reconcile(job, answer, record, started, seen.controller.get(job), ended_for, seen.accounted)

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
         array_sizes: Optional[Mapping[str, TaskIds]] = None) -> Dict[str, JobStatus]:
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


def wanted_ids(job_ids: Iterable[str], array_sizes: Mapping[str, TaskIds],
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
            wanted += tasks if not size else [f"{job}_{i}" for i in task_ids(size)]
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

#: a watch stops following a job that no source knows (accounting purged it, or it is another
#: cluster's) once this many polls in a row, at least FORGOTTEN_S seconds apart in all, had
#: SLURM answer without it: its state stays UNKNOWN, and the watch ends (exit 1).
FORGOTTEN_POLLS = 3
FORGOTTEN_S = 10.0


class Watch:
    """Poll until every job is done, on one Cadence capped at ``interval``.

    A poll that cannot reach SLURM leaves ``lost`` set to the error (the caller shows it) and
    the previous statuses stand; polling goes on with the same back-off, and ``lost`` is
    cleared by the first poll that sacct or squeue answer (exit files answering alone do not
    clear it). No configuration at all is raised at once. A job that no source knows is given
    up after FORGOTTEN_POLLS polls (``forgotten``).
    """

    def __init__(self, job_ids: Sequence[str], interval: float = 30.0, folders: Optional[Mapping[str, str]] = None,
                 array_sizes: Optional[Mapping[str, TaskIds]] = None, run: Runner = _run,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> None:
        self.job_ids = list(job_ids)
        self.poller = Poller(folders, array_sizes, run, waiting=True, clock=clock)
        self.cadence = Cadence(interval)
        self.sleep, self.clock = sleep, clock
        self.polls = 0
        self.lost: Optional[SlurmUnreachable] = None
        self.unknown_since: Dict[str, Tuple[int, float]] = {}   # job -> (its polls unknown so far, when first)
        self.forgotten: List[str] = []

    def statuses(self) -> Dict[str, JobStatus]:
        self.polls += 1
        return self.poller.poll(self.job_ids)

    def __iter__(self) -> Iterator[Dict[str, JobStatus]]:
        """Yields the statuses after each poll; stops after the poll where all are done (or forgotten)."""
        current: Dict[str, JobStatus] = {}
        while True:
            try:
                current = self.statuses()
                errors = self.poller.errors
                self.lost = unreachable(errors) if errors and not self.poller.answered else None
            except SlurmNotConfigured:
                raise
            except SlurmUnreachable as error:
                self.lost = error
            else:
                self._count_unknown(current)
            yield current
            if current and all(s.done or job in self.forgotten for job, s in current.items()):
                return
            self.sleep(self.cadence.next())

    def _count_unknown(self, current: Mapping[str, JobStatus]) -> None:
        """Count the polls that SLURM answered without a job; past the bound, it is forgotten."""
        for job, status in current.items():
            if status.state not in ("UNKNOWN", ENDING) or not self.poller.answered:
                self.unknown_since.pop(job, None)
                continue
            polls, since = self.unknown_since.get(job, (0, self.clock()))
            self.unknown_since[job] = (polls + 1, since)
            if polls + 1 >= FORGOTTEN_POLLS and self.clock() - since >= FORGOTTEN_S and job not in self.forgotten:
                self.forgotten.append(job)


# ----------------------------------------------------------------------------------- helpers

def _status(job: str, state: str, pair, elapsed, nodes: str, source: str) -> JobStatus:
    """A status with no exit code or signal while the job has not ended (SLURM says 0:0 then),
    nor for an end that SLURM made (CANCELLED, TIMEOUT, ...) with 0:0: that 0 is no exit code
    (the job's exit file has the real one), and ``CANCELLED exit 0`` would read as a success."""
    word = state_word(state)
    code, signal = pair if word in TERMINAL else (None, None)
    if code == 0 and not signal and word not in ("COMPLETED", "FAILED"):
        code = None
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
