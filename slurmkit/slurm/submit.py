"""Submitting rendered scripts, and the handles that follow them: submitit's Job, extended.

``submit_script`` records its intent in the registry, runs ``sbatch --parsable`` with a token
of its own (a failure that may have reached the controller is looked up by that token before
sbatch runs again: one job, never two), puts the logs where submitit's ``JobPaths`` looks for
them (``<folder>/<id>_0_log.out``), records the job id, and returns a ``JobHandle``:
submitit's ``SlurmJob`` (``state``, ``done()``, ``wait()``, ``cancel()``, ``stdout()``,
``stderr()``) whose watcher is ``SlurmkitWatcher``, which
asks sacct, then the controller, then the job's exit-status file (monitor.py), so that a job
always ends with its real exit code even when accounting is down.
"""

import os
import re
import time
import uuid
from pathlib import Path, PurePath
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union, cast

from submitit.slurm.slurm import SlurmInfoWatcher, SlurmJob

from slurmkit.core.array_ids import array_ids
from slurmkit.core.errors import SlurmConfigError, SlurmkitError
from slurmkit.core.files import PRIVATE_FILE, make_private_folder, write_atomic
from slurmkit.core.sbatch_options import DEPENDENCY_TYPES, dependency
from slurmkit.core.slurmconf import check_slurm_conf
from slurmkit.slurm.jobfiles import job_log_path
from slurmkit.slurm.monitor import TERMINAL, JobStatus, Poller
from slurmkit.slurm.outcomes import JobFailed, ended_in_turn, joined_logs, script_result, sweep_result, sweep_state, tails_of
from slurmkit.slurm.registry import COMMENT_PREFIX, RegistryError, Submission, adopted, intent, now_iso, query_tokens, record, registry_path
from slurmkit.slurm.slurmcli import SchedulerError, run_slurm

#: the longest wait between two polls of JobHandle.wait() (its Cadence doubles from 0.5 s up to this).
WAIT_CAP_S = 15.0
#: what ``result()`` gives: ``int`` (the exit status) for a script job, the function's return type for a function job.
R = TypeVar("R", covariant=True)
#: a folder as callers give one (submitit's JobPaths takes either).
Folder = Union[str, Path]


class SlurmkitWatcher(SlurmInfoWatcher):
    """submitit's shared watcher with slurmkit's Poller: one query for all registered jobs,
    answers from the controller or exit files when sacct has none, and ended jobs never asked
    about again."""

    def __init__(self, delay_s: int = 30) -> None:
        super().__init__(delay_s=delay_s)
        self.folders: Dict[str, str] = {}
        self.statuses: Dict[str, JobStatus] = {}
        self.poller = Poller(self.folders, waiting=True)   # a wait waits for a staging job's exit file

    def register_folder(self, job_id: str, folder: Path) -> None:
        self.folders[job_id.split("_")[0]] = str(folder)

    def update(self) -> None:
        """One poll of every registered job that has not ended (SlurmUnreachable when SLURM is not answering)."""
        pending = sorted(self._registered - self._finished)
        if not pending:
            return
        self._num_calls += 1
        self._last_status_check = time.time()
        fresh = self.poller.poll(pending)
        self.statuses.update(fresh)
        for job_id, status in fresh.items():
            # submitit's is_done reads this State: an end not yet settled (outputs being saved) is COMPLETING to it
            state = status.state if status.done or status.state not in TERMINAL else "COMPLETING"
            self._info_dict[job_id] = {"JobID": job_id, "State": state, "NodeList": status.nodes,
                                       "ExitCode": "" if status.exit_code is None else f"{status.exit_code}:{status.signal or 0}"}
        for job_id in pending:   # an end only the controller or an exit file told is asked again, until sacct's word
            if self.status_of(job_id).done and job_id not in self.poller.provisional:
                self._finished.add(job_id)

    def is_done(self, job_id: str, mode: str = "standard") -> bool:
        """Whether the job ended, by the poller's word (``JobStatus.done``, what ``wait()`` waits
        for), not by submitit's list of live states: a state that list lacks (ENDING, CONFIGURING,
        SUSPENDED, REQUEUE_HOLD, ...) would count the job finished, never to be asked about again."""
        self.get_state(job_id, mode=mode)   # polls when one is due
        return self.status_of(job_id).done

    def status_of(self, job_id: str) -> JobStatus:
        return self.statuses.get(job_id, JobStatus(job_id, "UNKNOWN"))


def wait_all(handles: Sequence["JobHandle[object]"], poll_s: float = WAIT_CAP_S, timeout: Optional[float] = None) -> List[JobStatus]:
    """Block until every handle's job ends; their statuses in the same order. The waiting is
    outcomes.ended_in_turn's: one batched poll a round on a Cadence (0.5 s doubling to ``poll_s``),
    an unreachable SLURM tried again on the same back-off, a missing configuration raised at
    once, WaitTimeout when ``timeout`` seconds are gone (the jobs run on)."""
    for _ in ended_in_turn(handles, JobHandle.watcher, poll_s, timeout):
        pass
    return [JobHandle.watcher.status_of(h.job_id) for h in handles]


class JobHandle(SlurmJob[R]):
    """A submitted job (or one array task): submitit's future, plus exit code, elapsed, nodes,
    and what became of its outputs (``status().saved`` / ``unsaved``). Its protocol (state,
    done, wait, result, cancel, stdout, stderr) is every handle's: handles.py."""

    watcher = SlurmkitWatcher(delay_s=30)

    def __init__(self, folder: Folder, job_id: str, tasks: Sequence[int] = (0,), logs: Sequence[str] = ()) -> None:
        """``logs``: the spec's own log names (output[, error]) as the registry records them;
        none: slurmkit's, in ``folder``."""
        super().__init__(folder, job_id, tasks)
        self.logs = tuple(logs)
        self.watcher.register_folder(job_id, Path(folder))

    def log_path(self, stream: str = "stdout") -> Optional[Path]:
        """The file sbatch writes the job's ``stdout`` or ``stderr`` to (None: stderr joins the output log)."""
        return job_log_path(self.paths.folder, self.job_id, stream, self.logs)

    def _get_logs_string(self, name: str) -> Optional[str]:
        """submitit's reader, at the job's own log names where the spec gave them."""
        if not self.logs:
            return super()._get_logs_string(name)
        path = self.log_path(name)
        if path is None or not path.exists():
            return None
        return path.read_text(errors="replace")

    def status(self, force: bool = False) -> JobStatus:
        self.watcher.get_state(self.job_id, mode="force" if force else "standard")
        return self.watcher.status_of(self.job_id)

    @property
    def exit_code(self) -> Optional[int]:
        return self.status().exit_code

    @property
    def elapsed_s(self) -> Optional[int]:
        return self.status().elapsed_s

    @property
    def nodes(self) -> str:
        return self.status().nodes

    def wait(self, poll_s: float = WAIT_CAP_S, *, timeout: Optional[float] = None) -> JobStatus:  # type: ignore[override]
        """Block until the job ends (polling at most every ``poll_s`` seconds); its final status.
        ``timeout`` (seconds; keyword only, since ``wait(0.5)`` has always meant ``poll_s``):
        WaitTimeout when it runs out, the job running on."""
        return wait_all([self], poll_s, timeout)[0]

    @property
    def is_function(self) -> bool:
        """Whether it runs a Python function (submitit pickled the call) rather than a script."""
        return self.paths.submitted_pickle.exists()

    def result(self) -> R:
        """Wait for the job; a function job's return value, or the exception the function raised
        (its own, with the traceback on the node as its cause), or JobFailed where there is
        none to raise (killed, out of memory, cancelled, or not rebuilt here); a script job's
        exit status: 0, or JobFailed with the ends of its logs."""
        status = self.wait()
        if self.is_function:
            return function_result(self, status, super().result)
        return cast(R, script_result(self, status))   # a script job is a JobHandle[int]: submit_script makes it

    def cancel(self, check: bool = True) -> None:
        """scancel through run_slurm, as every other handle's: a configuration SLURM cannot read
        is one error at once, not submitit's scancel retrying it for a minute. ``check`` False
        (submitit's) ignores a refusal."""
        try:
            run_slurm(["scancel", self.job_id])
        except SchedulerError:
            if check:
                raise


def function_result(handle: "JobHandle[R]", status: JobStatus, returned: Callable[[], R]) -> R:
    """A function job's end for its caller: what it returned (``returned``: submitit's reading of
    its result file), what it raised (raised.py), else JobFailed with its state and logs."""
    from submitit.core.utils import FailedJobError, UncompletedJobError

    from slurmkit.slurm.raised import read_raised, with_remote_traceback

    raised = read_raised(handle.paths.result_pickle)
    if raised is not None and raised.error is not None:
        raise with_remote_traceback(raised.error, raised.traceback, handle.job_id)
    if raised is not None:
        raise JobFailed(status, tails=tails_of(handle), remote_traceback=raised.traceback, why=raised.why)
    if not status.ok and not handle.paths.result_pickle.exists():   # it died without a word: nothing to wait for
        raise JobFailed(status, tails=tails_of(handle), why="the function returned nothing and raised nothing")
    try:
        return returned()
    except (FailedJobError, UncompletedJobError) as error:   # submitit's words for an end it could not read
        raise JobFailed(status, tails=tails_of(handle), remote_traceback=_submitit_trace(str(error))) from None


def _submitit_trace(message: str) -> str:
    """The traceback in submitit's FailedJobError text (between its dashed lines), else ''."""
    parts = message.split("----------------------\n")
    return parts[1].rstrip() if len(parts) >= 3 else ""


class SweepHandle:
    """An array job: one submission, a handle per task; the handle protocol (handles.py) over all."""

    def __init__(self, folder: Folder, job_id: str, size: int, ids: Sequence[int] = (), logs: Sequence[str] = ()) -> None:
        """``ids``: the tasks' ids where --array named them (array.indices), else 0..size-1."""
        self.job_id, self.size = job_id, size
        self.tasks: List[JobHandle[int]] = [JobHandle(folder, f"{job_id}_{i}", logs=logs) for i in (ids or range(size))]
        self.parts: List[str] = [job_id]   # a split sweep's arrays (arraysplit.py), the first's id its own

    @classmethod
    def joined(cls, parts: Sequence["SweepHandle"]) -> "SweepHandle":
        """One handle for the parts of a split sweep: the first's id, every part's tasks in sweep order."""
        whole = parts[0]
        joined = cls.__new__(cls)
        joined.job_id, joined.size = whole.job_id, sum(part.size for part in parts)
        joined.tasks = [task for part in parts for task in part.tasks]
        joined.parts = [part.job_id for part in parts]
        return joined

    def statuses(self) -> Dict[str, JobStatus]:
        """Every task's status, from one forced poll (the watcher asks for all tasks at once)."""
        if self.tasks:
            self.tasks[0].status(force=True)
        return {t.job_id: JobHandle.watcher.status_of(t.job_id) for t in self.tasks}

    def done(self) -> bool:
        return all(s.done for s in self.statuses().values())

    @property
    def state(self) -> str:
        """The array's state in one word (outcomes.sweep_state): COMPLETED only when every task did."""
        return sweep_state(list(self.statuses().values()))

    def wait(self, poll_s: float = WAIT_CAP_S, *, timeout: Optional[float] = None) -> Dict[str, JobStatus]:
        return {s.job_id: s for s in wait_all(self.tasks, poll_s, timeout)}

    def result(self) -> List[int]:
        """Wait for every task; their exit statuses in task order, or JobFailed naming the failed
        tasks, with the end of the first one's log."""
        return sweep_result(self.tasks, list(self.wait().values()))

    def cancel(self) -> None:
        run_slurm(["scancel", *self.parts])

    def stdout(self) -> Optional[str]:
        """Every task's output log, each under a ``==> 123_4 <==`` line (None before any exists)."""
        return joined_logs(self.tasks, "stdout")

    def stderr(self) -> Optional[str]:
        return joined_logs(self.tasks, "stderr")


class ChainHandle:
    """A chain of jobs, each starting after the previous one ended (afterany). As a handle
    (handles.py) it is its current link: the first that has not ended, else the last."""

    def __init__(self, links: List[JobHandle[int]]) -> None:
        self.links = links
        self.job_id = links[0].job_id

    def current(self) -> JobHandle[int]:
        """The link that runs or waits now (the first not ended), else the last link."""
        self.links[0].status(force=True)   # one poll for every link
        return next((link for link in self.links if not JobHandle.watcher.status_of(link.job_id).done), self.links[-1])

    @property
    def state(self) -> str:
        return JobHandle.watcher.status_of(self.current().job_id).state

    def done(self) -> bool:
        current = self.current()
        return current is self.links[-1] and JobHandle.watcher.status_of(current.job_id).done

    def wait(self, poll_s: float = WAIT_CAP_S, *, timeout: Optional[float] = None) -> JobStatus:
        """Wait for every link (one poll for all); the chain's outcome is its last link's."""
        return wait_all(self.links, poll_s, timeout)[-1]

    def result(self) -> int:
        """Wait for every link; the last link's exit status (0), or JobFailed with its log's end."""
        return script_result(self.links[-1], self.wait())

    def stdout(self) -> Optional[str]:
        """The current link's output log."""
        return self.current().stdout()

    def stderr(self) -> Optional[str]:
        return self.current().stderr()

    def cancel(self) -> None:
        run_slurm(["scancel", *(link.job_id for link in self.links)])


class ChainIncomplete(SlurmkitError):
    """A link of a chain failed after the links before it were submitted: their ids are in the
    message, so that none runs unseen."""

    exit_code = 1

    def __init__(self, error: SlurmkitError, handles: List[JobHandle[int]], links: int) -> None:
        ids = " ".join(handle.job_id for handle in handles)
        super().__init__(f"{error.message} (the chain stopped at link {len(handles) + 1} of {links}; links 1-{len(handles)} "
                         f"are jobs {ids}: `slurmkit cancel {ids}` drops them)")
        self.handles = handles


def submit_chain(script_text: str, links: int, folder: Folder, name: str, profile: str, spec: Optional[str] = None,
                 after: Sequence[str] = (), after_type: str = "ok", workdir: Optional[Folder] = None,
                 args: Sequence[str] = (), logs: Sequence[Optional[str]] = ()) -> ChainHandle:
    """Submit ``links`` copies of a chain link, each after the previous one ends (afterany), each
    given the script arguments ``args``."""
    handles: List[JobHandle[int]] = []
    for link in range(1, links + 1):
        previous = (handles[-1].job_id,) if handles else tuple(after)
        try:
            handle = submit_script(script_text, folder, name, profile, spec=spec, after=previous,
                                   after_type="any" if handles else after_type, workdir=workdir, args=args,
                                   chain=(handles[0].job_id if handles else None, link, links), logs=logs)
            handles.append(cast(JobHandle[int], handle))   # no array_size: submit_script made a JobHandle
        except SlurmkitError as error:
            if not handles:
                raise
            raise ChainIncomplete(error, handles, links) from None
    return ChainHandle(handles)


class BadArguments(SlurmkitError):
    """Arguments for the job script that sbatch cannot pass (exit 2: bad input)."""


def script_arguments(args: Iterable[str]) -> Tuple[str, ...]:
    """The words for sbatch to pass after the script's name (its ``$1``.. ``"$@"``), checked: a
    sequence of strings (one string would be split into its letters), no NUL byte (no argv can
    hold one), together no longer than one command may be (sanity.MAX_COMMAND_CHARS)."""
    from slurmkit.core.sanity import MAX_COMMAND_CHARS

    if isinstance(args, (str, bytes)):
        raise BadArguments(f"the job's arguments are a list of words, not one string: give [{str(args)!r}] for one word")
    words = tuple(args)
    for number, word in enumerate(words, 1):
        if not isinstance(word, str):
            raise BadArguments(f"argument {number} of the job is {type(word).__name__} {word!r}, not a string")
        if "\0" in word:
            raise BadArguments(f"argument {number} of the job holds a NUL byte, which no program's arguments can hold")
    total = sum(len(word) + 1 for word in words)
    if total > MAX_COMMAND_CHARS:
        raise BadArguments(f"the job's arguments are {total} characters, more than slurmkit's limit of {MAX_COMMAND_CHARS}: "
                           "put them in a file the job reads")
    return words


def log_pattern(folder: PurePath, array: bool, stream: str) -> str:
    """Where sbatch writes a job's output: submitit's JobPaths naming (``%j_0_log.out``)."""
    return str(folder / (f"%A_%a_0_log.{stream}" if array else f"%j_0_log.{stream}"))


def own_logs(logs: Optional[Sequence[Optional[str]]], name: str, workdir: Folder) -> Tuple[str, ...]:
    """The spec's log names (output, error or None) as submit records them: absolute (a relative
    one is from the job's working folder, as sbatch reads it), the job's name and user filled in."""
    import getpass

    from slurmkit.core.logpatterns import absolute, at_submit

    if not logs:
        return ()
    user = getpass.getuser()
    return tuple(absolute(at_submit(pattern, name, user), str(Path(workdir).resolve())) for pattern in logs if pattern)


def make_log_folders(patterns: Sequence[str]) -> None:
    """The folders of the spec's logs, made before sbatch runs: with a folder that is not there
    the job fails at its start and writes no log at all (Slurm 22.05: FAILED, exit 0:53)."""
    from slurmkit.core.logpatterns import folder_part

    for pattern in patterns:
        folder = Path(folder_part(pattern).replace("%%", "%") or "/")
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise SubmitError(f"nothing was submitted: cannot make the log folder {folder}: {error.strerror or error}; "
                              "make it, or choose another place in logs.output/logs.error") from None


def sbatch_command(script: PurePath, folder: PurePath, array: bool, after: Sequence[str] = (), after_type: str = "ok",
                   test_only: bool = False, token: Optional[str] = None, args: Sequence[str] = (),
                   own_logs: bool = False) -> List[str]:
    """sbatch's argv: its options, the script, then ``args``, which sbatch passes to the script
    (``sbatch [options] script [args...]``): each one word, never read by a shell. ``own_logs``:
    the script names its logs (the spec's logs), which the command line must not override."""
    argv = ["sbatch", "--parsable"]
    if not own_logs:
        argv += [f"--output={log_pattern(folder, array, 'out')}", f"--error={log_pattern(folder, array, 'err')}"]
    if token:
        argv.append(f"--comment={COMMENT_PREFIX}{token}")  # squeue %k, sacct SubmitLine/Comment find it by this
    if after:
        if after_type not in DEPENDENCY_TYPES:
            raise ValueError(f"after_type must be one of {', '.join(DEPENDENCY_TYPES)}")
        argv.append("--dependency=" + dependency(after_type, after))
    if test_only:
        argv.append("--test-only")
    return argv + [str(script), *args]


def parse_job_id(stdout: str) -> str:
    """``sbatch --parsable`` prints ``ID`` or ``ID;CLUSTER``. Anything else may still have made
    a job (transient: look it up by its token before trying again)."""
    match = re.match(r"\s*(\d+)", stdout)
    if not match:
        raise SchedulerError(f"sbatch printed no job id: {stdout.strip()!r}", transient=True)
    return match.group(1)


class NotRecorded(RegistryError):
    """sbatch accepted the job but its id could not be recorded: the caller must still show the id
    (``handle``: the one the submitter made, a local or a remote job's)."""

    def __init__(self, job_id: str, handle: Any, reason: RegistryError, path: Path) -> None:
        super().__init__(f"job {job_id} was submitted but not recorded in {path}: {reason.reason}; "
                         "once that is fixed, `slurmkit status` adopts it from its intent record")
        self.job_id, self.handle = job_id, handle


def record_intent(planned: Submission) -> None:
    """The record written before sbatch runs; when it cannot be written, nothing is submitted."""
    try:
        record(planned)
    except RegistryError as error:
        raise RegistryError(f"nothing was submitted: {error.message}") from None


def record_job(planned: Submission, job_id: str, handle: Any) -> None:
    """The record of the job sbatch accepted; NotRecorded (carrying the handle) when it cannot be written."""
    try:
        record(adopted(planned, job_id))
    except RegistryError as error:
        raise NotRecorded(job_id, handle, error, registry_path()) from None


def retry_window_s() -> float:
    """How long a submission keeps trying a controller that does not answer
    (``$SLURMKIT_SUBMIT_RETRY_S``, default 60 s)."""
    try:
        return max(float(os.environ.get("SLURMKIT_SUBMIT_RETRY_S", "60")), 0.0)
    except ValueError:
        return 60.0


def _lookup_until_answered(token: str, deadline: float, sleep: Callable[[float], None],
                           lookup: Callable[[], Dict[str, str]]) -> Optional[str]:
    """The id of the job with ``token``, or None once the controller answered (twice, a pause
    apart: a request queued in a stopped controller's socket is handled when it resumes) that
    there is none. Raises SchedulerError when it never answers before ``deadline``."""
    delay, answers = 0.5, 0
    while True:
        try:
            known = lookup()
        except SchedulerError:
            if time.monotonic() + delay > deadline:
                raise
            sleep(delay)
            delay = min(delay * 2, 8.0)
            continue
        if token in known:
            return known[token]
        answers += 1
        if answers == 2:
            return None
        sleep(2.0)


#: what sbatch says when it could not open a connection to the controller: nothing was sent.
NEVER_CONNECTED = ("(connect failure)", "Connection refused")


def never_connected(reason: str) -> bool:
    """Whether sbatch's failure says its request never left this host (no connection was made),
    so that no job can exist for it, as one that timed out mid-request may."""
    return any(marker in reason for marker in NEVER_CONNECTED)


def sbatch_once(argv: Sequence[str], token: str, env: Optional[Mapping[str, str]] = None, cwd: Optional[Folder] = None,
                retry_for: Optional[float] = None, sleep: Callable[[float], None] = time.sleep,
                lookup: Optional[Callable[[], Dict[str, str]]] = None, run: Optional[Callable[[], str]] = None,
                adopt: str = "`slurmkit status` adopts it once the controller answers") -> str:
    """Run sbatch and return the job id; never two jobs for one token.

    A failure that may have reached the controller (a timeout, a busy controller) is not
    retried blindly: the job is looked up by its token first, and sbatch runs again only when
    the controller said that no job has it. A controller that never answers within
    ``retry_for`` gives an error that says the job may exist and how to find it (``adopt``).
    ``run`` (one sbatch, its stdout; a SchedulerError, transient or not, when it failed) and
    ``lookup`` (token -> job id) default to this host's SLURM; remote_jobs passes its ssh ones.
    """
    retry_for = retry_window_s() if retry_for is None else retry_for
    since = now_iso()
    lookup = lookup or (lambda: query_tokens(since, retry_for=0.0).jobs)
    run = run or (lambda: run_slurm(argv, retry_for=0.0, env=env, cwd=cwd, failed="sbatch refused the job").stdout)
    deadline = time.monotonic() + retry_for
    reached = False   # whether a failed sbatch may have handed its request over
    while True:
        try:
            return parse_job_id(run())
        except SchedulerError as error:
            if not error.transient:
                raise
            reason = error.message
            reached = reached or not never_connected(reason)
        try:
            job_id = _lookup_until_answered(token, deadline, sleep, lookup)
        except SchedulerError:
            if not reached:
                raise SchedulerError(f"the controller did not answer for {retry_for:.0f}s ({reason}): no job was submitted, "
                                     "as sbatch could not connect to it; submit again once `scontrol ping` says it is up") from None
            raise SchedulerError(f"the controller did not answer for {retry_for:.0f}s ({reason}): the job may have been "
                                 f"submitted (token {token}); {adopt}", transient=True) from None
        if job_id is not None:
            return job_id
        if time.monotonic() >= deadline:
            raise SchedulerError(f"{reason} (no job was submitted; tried for {retry_for:.0f}s)")


def _close_intent(entry: Submission, why: str) -> None:
    """Mark an intent as one that made no job, so that nothing looks for it (best effort:
    an open intent is only looked up in vain later)."""
    try:
        record(entry._replace(note=why, host=None, pid=None))
    except RegistryError:
        pass


class SubmitError(SlurmkitError):
    """The job could not be handed to sbatch (its script could not be written)."""

    exit_code = 1


def _write_script(folder: Path, name: str, suffix: str, script_text: str) -> Path:
    """The script under a name of its own (concurrent submits of one spec must not rename each
    other's script); an unwritable folder is one line. It holds the spec's values (its
    environment variables among them), so it is private, in a private folder when slurmkit
    makes it; sbatch reads it and never runs the file itself, so it needs no execute bit."""
    from slurmkit.core.files import CannotWrite

    try:
        make_private_folder(folder)
        return write_atomic(folder / f".{name}.{os.getpid()}.{suffix}.sbatch", script_text, PRIVATE_FILE)
    except (OSError, CannotWrite) as error:
        reason = error.message.rsplit("cannot write it: ", 1)[-1] if isinstance(error, CannotWrite) else error.strerror or error
        raise SubmitError(f"nothing was submitted: cannot write the job script in {folder}: "
                          f"{reason}; make that folder writable or choose another (--folder)") from None


def _keep_script(script: Path, job_id: str) -> None:
    """Where submitit's JobPaths looks for it; a folder that refuses the rename keeps the first name."""
    try:
        os.replace(script, script.parent / f"{job_id}_submission.sh")
    except OSError:
        pass


def _sbatch_recorded(planned: Submission, argv: Sequence[str], workdir: Optional[Folder]) -> str:
    """The intent recorded, then sbatch run; the job id. An intent sbatch refused is closed."""
    record_intent(planned)
    env = {**os.environ, "SLURMKIT_JOB_DIR": planned.folder}
    try:
        return sbatch_once(argv, planned.token or "", env=env, cwd=workdir or Path.cwd())
    except (SchedulerError, SlurmConfigError) as error:
        if not getattr(error, "transient", False):
            _close_intent(planned, f"not submitted: {error.message}")
        raise


def write_runtime_for(script_text: str) -> None:
    """The runtime library the script sources, in the data folder (render/runtime.py), where the
    job finds it; a script of another slurmkit version names its own, written when it was."""
    from slurmkit.render.runtime import runtime, runtime_folder, write_runtime

    if runtime().name not in script_text:
        return
    try:
        write_runtime(runtime_folder())
    except SlurmkitError as error:
        raise SubmitError(f"nothing was submitted: cannot write slurmkit's runtime: {error.message}") from None


def submit_script(script_text: str, folder: Folder, name: str, profile: str, array_size: Optional[int] = None,
                  spec: Optional[str] = None, after: Sequence[str] = (), after_type: str = "ok", workdir: Optional[Folder] = None,
                  chain: Optional[Tuple[Optional[str], int, int]] = None,
                  args: Sequence[str] = (), array_indices: Optional[str] = None,
                  logs: Sequence[Optional[str]] = (), rerun_of: Optional[str] = None,
                  part: Optional[Tuple[Optional[str], int, int]] = None) -> Union[JobHandle[int], SweepHandle]:
    """Submit ``script_text``; return a JobHandle (a SweepHandle for an array, whose tasks are
    ``array_indices`` where the script's --array names them, else 0..array_size-1).

    ``args``: the words sbatch passes to the script (its ``$1``...), recorded with the intent, so
    that a retry under the same token submits the same job and ``status`` shows them.

    sbatch runs in ``workdir`` (default: the current folder): the job starts there, and
    ``$SLURM_SUBMIT_DIR`` is it. The intent is recorded before sbatch runs (nothing is
    submitted when it cannot be) and the job id after; NotRecorded, carrying the handle, says
    that the job exists but its id could not be recorded.

    ``logs``: the spec's own log names (output, error or None) that the script's #SBATCH lines
    say: their folders are made, sbatch is not given slurmkit's, and the registry records them
    for ``logs`` and the handles. The exit and started files stay in ``folder``.

    ``rerun_of``: the array job some of whose tasks this one reruns, recorded with it.
    ``part``: (the first part's id or None for the first, offset, parts) of a split sweep.
    """
    check_slurm_conf()   # before anything is recorded or written: sbatch could not read it
    folder = Path(folder).resolve()
    args = script_arguments(args)
    token = uuid.uuid4().hex
    patterns = own_logs(logs, name, workdir or Path.cwd())
    planned = intent(name, str(folder), profile, token, array_size=array_size, array_ids=array_indices, spec=spec,
                     after=",".join(after) or None, args=list(args) or None, logs=list(patterns) or None,
                     chain=chain[0] if chain else None, link=chain[1] if chain else None, links=chain[2] if chain else None,
                     rerun_of=rerun_of, sweep=part[0] if part else None, offset=part[1] if part else None,
                     parts=part[2] if part else None)
    make_log_folders(patterns)
    write_runtime_for(script_text)
    script = _write_script(folder, name, token[:8], script_text)
    try:
        job_id = _sbatch_recorded(planned, sbatch_command(script, folder, array_size is not None, after, after_type, token=token,
                                                          args=args, own_logs=bool(patterns)), workdir)
    except BaseException:
        script.unlink(missing_ok=True)   # no job took it: nothing stays behind in the logs folder
        raise
    _keep_script(script, job_id)
    handle: Union[JobHandle[int], SweepHandle] = (
        SweepHandle(folder, job_id, array_size, array_ids(array_indices) if array_indices else (), logs=patterns)
        if array_size is not None else JobHandle(folder, job_id, logs=patterns))
    record_job(planned, job_id, handle)
    return handle


def test_only(script_text: str, folder: Folder, name: str, array: bool = False, workdir: Optional[Folder] = None,
              args: Sequence[str] = ()) -> str:
    """``sbatch --test-only``: where and when the controller would start the job (nothing queued)."""
    folder = Path(folder).resolve()
    made = [p for p in (folder, *folder.parents) if not p.exists()]   # a dry run leaves no folder it made
    script = _write_script(folder, name, f"{uuid.uuid4().hex[:8]}.test-only", script_text)
    try:
        result = run_slurm(sbatch_command(script, folder, array, test_only=True, args=script_arguments(args)), cwd=workdir or Path.cwd(),
                           failed="sbatch refused the job")
    finally:
        script.unlink(missing_ok=True)
        for step in made:   # deepest first; one that holds something now (another submit's) stays
            try:
                step.rmdir()
            except OSError:
                break
    lines = [line.split("sbatch:", 1)[-1].strip() for line in (result.stderr + result.stdout).splitlines() if "to start at" in line]
    return lines[0] if lines else (result.stderr or result.stdout).strip()
