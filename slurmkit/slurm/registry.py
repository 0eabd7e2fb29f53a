"""Every submission slurmkit made, so that ``slurmkit status`` works later, from another shell.

One JSON object a line in ``$XDG_STATE_HOME/slurmkit/jobs.jsonl`` (default
``~/.local/state/slurmkit``; ``$SLURMKIT_REGISTRY`` names another file). A submission writes
two lines: an *intent* (its token, no job id) before sbatch runs and the *job* (the same record
with its id) after, so that a crash in between leaves an intent that ``adopt_interrupted``
finds in SLURM by its token and completes.

Each append is one ``write`` under an exclusive ``flock`` (waited for at most ``LOCK_WAIT_S``;
on a filesystem without flock, under the lock folder ``jobs.jsonl.lock`` beside it, whose
stale-lock rule core/lockfolder.py gives), starts at a line boundary (a torn last line from a
crash stays a line of its own), is fsynced, and is undone (truncated away) when it comes up short. A reader skips a line that is not a
record, with one warning naming the file and line, and never loses the others.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import stat
import sys
import time
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from slurmkit.core import lockfolder
from slurmkit.core.array_ids import TaskIds, array_ids
from slurmkit.core.errors import SlurmConfigError, SlurmkitError
from slurmkit.core.files import NotARegularFile
from slurmkit.core.folders import state_folder
from slurmkit.core.records import Record

LOCK_WAIT_S = 30.0
#: an intent nobody knows after this long never reached SLURM: said once, then no longer looked up.
GIVE_UP_S = 24 * 3600.0
#: an intent from another machine may still be on its way to sbatch for this long.
IN_FLIGHT_S = 15 * 60.0
NEVER_REACHED = "never reached SLURM"
#: a note that keeps the intent open: "not known yet" was said once and is not said again.
NOT_KNOWN_YET = "not known to SLURM yet"


class Submission(Record):
    job_id: str                 # "123" (an array: its array job id); "" in an intent record
    name: str
    folder: str                 # where its logs and exit-status files are
    profile: str
    submitted: str              # ISO time, UTC
    array_size: Optional[int] = None
    spec: Optional[str] = None  # the job.yaml it came from
    after: Optional[str] = None  # the job(s) this one waits for
    chain: Optional[str] = None  # a link of a chain: the chain's first job id
    link: Optional[int] = None   # ... and which link (1-based) of how many
    links: Optional[int] = None
    token: Optional[str] = None  # sbatch --comment=slurmkit:<token>: finds the job if the id was lost
    host: Optional[str] = None   # where the submitting slurmkit ran ...
    pid: Optional[int] = None    # ... and its process (an intent of a live process is in flight)
    note: Optional[str] = None   # an intent given up on: why (NEVER_REACHED); or NOT_KNOWN_YET
    remote: Optional[str] = None  # submitted over ssh (remote.py): the ssh target; folder is on that host
    args: Optional[List[str]] = None  # the words sbatch passed to the script after its name ($1, "$@")
    array_ids: Optional[str] = None  # an array's task ids as --array wrote them, where they are not 0..size-1
    logs: Optional[List[str]] = None  # the spec's own log names (output[, error]): absolute, %x and %u filled in
    rerun_of: Optional[str] = None  # reruns some tasks of this array job (resubmit --failed)
    sweep: Optional[str] = None  # a part of a split sweep after the first: the first part's job id
    offset: Optional[int] = None  # ... the point of the sweep its task 0 runs (0 for the first part)
    parts: Optional[int] = None   # ... and how many parts the sweep has (every part says it)


#: the type each field must have (None is allowed for every optional field).
_TYPES = {"job_id": str, "name": str, "folder": str, "profile": str, "submitted": str, "array_size": int, "array_ids": str,
          "spec": str, "after": str, "chain": str, "link": int, "links": int, "token": str, "host": str,
          "pid": int, "note": str, "remote": str, "args": list, "logs": list,
          "rerun_of": str, "sweep": str, "offset": int, "parts": int}
_REQUIRED = ("job_id", "name", "folder", "profile", "submitted")


class RegistryError(SlurmkitError):
    """The registry file cannot be read or written (full, read-only, a folder, a bad path).

    ``reason`` is the message without the file's name (for messages that name it already)."""

    exit_code = 1

    def __init__(self, message: str, reason: Optional[str] = None):
        super().__init__(message)
        self.reason = reason or self.message


def registry_path(env=None) -> Path:
    env = os.environ if env is None else env
    override = env.get("SLURMKIT_REGISTRY")
    if override:
        return Path(override)
    return state_folder(env) / "jobs.jsonl"


def _os_problem(path: Path, error: OSError, doing: str) -> RegistryError:
    """One line that names the file, what went wrong and what to do about it."""
    code = error.errno
    if code in (errno.ENOTDIR, errno.EEXIST):
        what = "a folder above it is a file, not a folder; point XDG_STATE_HOME or SLURMKIT_REGISTRY elsewhere"
    elif isinstance(error, NotARegularFile):
        what = f"{error.strerror}; remove it or set SLURMKIT_REGISTRY to a file"
    elif code == errno.EISDIR:
        what = "it is a folder, not a file; remove it or set SLURMKIT_REGISTRY to a file"
    elif code in (errno.ENOSPC, errno.EDQUOT):
        what = f"{error.strerror}; free space there or set SLURMKIT_REGISTRY to a file elsewhere"
    elif code in (errno.EACCES, errno.EPERM, errno.EROFS):
        what = f"{error.strerror}; make it writable or set SLURMKIT_REGISTRY to a file you can write"
    else:
        what = f"{error.strerror or error}; fix that or set SLURMKIT_REGISTRY to another file"
    return RegistryError(f"cannot {doing} the job registry {path}: {what}", reason=what)


#: registries whose filesystem answered flock with one of lockfolder.NO_FLOCK: locked with a folder
_without_flock: Set[str] = set()


@contextlib.contextmanager
def _locked(fd: int, path: Path, kind: int, wait_s: float) -> Iterator[None]:
    """The registry locked (``kind``: flock's LOCK_EX or LOCK_SH) for the block, waited for at
    most ``wait_s``: a stuck holder gives an error, not a hang. A filesystem without flock
    (lockfolder.NO_FLOCK: NFS without lockd, Lustre without ``-o flock``) gets the lock folder
    beside the file instead, said once a process; it is exclusive for readers too."""
    deadline = time.monotonic() + wait_s
    if str(path) not in _without_flock and _flocked(fd, path, kind, deadline, wait_s):
        yield   # closing the file releases it
        return
    lock = lockfolder.lock_folder(path)
    try:
        mine = lockfolder.acquire(lock, max(deadline - time.monotonic(), 0.0))
    except lockfolder.Busy as busy:
        holder = f"its lock folder {lock} is held by {busy.owner.describe()}" if busy.owner else \
            f"{lock} is a folder slurmkit did not make"
        raise RegistryError(f"the job registry {path} stayed locked by another process for {wait_s:.0f}s ({holder}); "
                            f"try again, or remove {lock} if that slurmkit is gone") from None
    except OSError as error:
        fix = f"make {path.parent} writable" if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS) else "fix that"
        reason = (f"cannot make its lock folder {lock}: {error.strerror or error}; {fix} "
                  "or set SLURMKIT_REGISTRY to a file elsewhere")
        raise RegistryError(f"cannot lock the job registry {path}: {reason}", reason=reason) from None
    try:
        yield
    finally:
        lockfolder.release(lock, mine)


def _flocked(fd: int, path: Path, kind: int, deadline: float, wait_s: float) -> bool:
    """flock until ``deadline``; False when the filesystem has no flock (said once a process)."""
    while True:
        try:
            fcntl.flock(fd, kind | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise RegistryError(f"the job registry {path} stayed locked by another process for {wait_s:.0f}s; "
                                    "try again, or find the slurmkit that holds it (fuser on the file)") from None
            time.sleep(0.05)
        except OSError as error:
            if error.errno not in lockfolder.NO_FLOCK:
                raise _os_problem(path, error, "lock") from None
            _without_flock.add(str(path))
            from slurmkit.core.output import escaped

            name = errno.errorcode.get(error.errno, str(error.errno))
            sys.stderr.write(escaped(f"slurmkit: the registry's filesystem has no flock ({name}); using a lock folder "
                                     f"beside it: {lockfolder.lock_folder(path)}") + "\n")
            return False


def _line(submission: Submission) -> bytes:
    return (json.dumps(submission._asdict(), sort_keys=True) + "\n").encode()


def _open_for_append(path: Path) -> int:
    """The registry, private: it holds every job's name, folder and spec path. One left
    readable by others (an older slurmkit's, or copied in) is narrowed to 0600 on first write."""
    from slurmkit.core.files import PRIVATE_FILE, make_private_folder

    try:
        make_private_folder(path.parent)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, PRIVATE_FILE)
    except OSError as error:
        raise _os_problem(path, error, "write") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):   # a named pipe would take the records and block
        os.close(fd)
        raise _os_problem(path, NotARegularFile(path), "write")
    os.set_blocking(fd, True)
    try:
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, PRIVATE_FILE)
    except OSError:
        pass  # not ours to change (a shared file set up on purpose): it is still written
    return fd


def _append_locked(fd: int, path: Path, data: bytes) -> None:
    """Append ``data`` with one write at a line boundary; undo a write that failed or came up short."""
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        data = b"\n" + data  # a torn line from a crash stays a line of its own
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(errno.ENOSPC, f"short write ({written} of {len(data)} bytes): {os.strerror(errno.ENOSPC)}")
        os.fsync(fd)
    except OSError as error:
        try:
            os.ftruncate(fd, size)
        except OSError:
            pass
        raise _os_problem(path, error, "write") from None


def record_all(entries: Sequence[Submission], path: Optional[Path] = None, wait_s: float = LOCK_WAIT_S,
               unless: Optional[Callable[[List[Submission]], Sequence[Submission]]] = None) -> List[Submission]:
    """Append ``entries`` (one write, under the lock); return what was written.

    ``unless`` sees the registry's records under the lock and returns the entries still to
    write: a check and its append cannot be split by another process.
    """
    path = path or registry_path()
    fd = _open_for_append(path)
    try:
        with _locked(fd, path, fcntl.LOCK_EX, wait_s):
            if unless is not None:
                entries = list(unless(_parse(_read_fd(fd, path))[0]))
            if entries:
                _append_locked(fd, path, b"".join(_line(entry) for entry in entries))
            return list(entries)
    finally:
        os.close(fd)  # closing releases a flock


def record(submission: Submission, path: Optional[Path] = None, wait_s: float = LOCK_WAIT_S) -> None:
    """Append one record; raises RegistryError (one line) when it could not be written whole."""
    record_all([submission], path, wait_s)


def array_tasks(record: Submission) -> Optional[TaskIds]:
    """An array's tasks as the monitor lists them: its ids where --array named them, else its size."""
    return array_ids(record.array_ids) if record.array_ids else record.array_size


def intent(name: str, folder: str, profile: str, token: str, **fields) -> Submission:
    """The record written before sbatch runs: everything but the job id."""
    return Submission(job_id="", name=name, folder=folder, profile=profile, submitted=now_iso(), token=token,
                      host=socket.gethostname(), pid=os.getpid(), **fields)


def now_iso() -> str:
    import datetime

    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _open_regular_fd(path: Path) -> int:
    """The registry opened for reading, refused (files.NotARegularFile) when it is a named
    pipe or a device: opening one would wait for a writer, reading one would not end."""
    from slurmkit.core.files import open_regular

    with open_regular(path) as handle:
        return os.dup(handle.fileno())


#: a record is a few hundred bytes (a 128 KiB command at most): a longer line is not one, and
#: is skipped unread rather than decoded (a 300 MB line would fill memory as JSON).
MAX_RECORD_BYTES = 1 << 20


def _read_fd(fd: int, path: Path) -> bytes:
    try:
        return os.pread(fd, os.fstat(fd).st_size, 0)
    except OSError as error:
        raise _os_problem(path, error, "read") from None


def _as_record(data) -> Optional[Submission]:
    """A Submission from one decoded line, or None when it is not one (a list, a wrong type)."""
    if not isinstance(data, dict) or any(field not in data for field in _REQUIRED):
        return None
    values = {field: data.get(field) for field in Submission._fields}
    for field, value in values.items():
        wanted = _TYPES[field]
        if value is None and field not in _REQUIRED:
            continue
        if not isinstance(value, wanted) or isinstance(value, bool):
            return None
        if isinstance(value, list) and not all(isinstance(word, str) for word in value):
            return None
    return Submission._make(values.values())


def _parse(raw: bytes) -> Tuple[List[Submission], List[int]]:
    """Every record in ``raw`` and the numbers of the lines that are not records."""
    found, bad = [], []
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        if len(line) > MAX_RECORD_BYTES:
            bad.append(number)
            continue
        try:
            entry = _as_record(json.loads(line.decode("utf-8")))
        except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past the parser's depth
            entry = None
        if entry is None:
            bad.append(number)
        else:
            found.append(entry)
    return found, bad


#: (file, bad lines) already reported by this process: one warning, however often it is read
_warned: Set[Tuple[str, Tuple[int, ...]]] = set()


def _warn_once(path: Path, bad: List[int]) -> None:
    key = (str(path), tuple(bad))
    if bad and key not in _warned:
        _warned.add(key)
        shown = ", ".join(map(str, bad[:10])) + (f" and {len(bad) - 10} more" if len(bad) > 10 else "")
        what = f"line {shown} is not a slurmkit record" if len(bad) == 1 else f"lines {shown} are not slurmkit records"
        from slurmkit.core.output import escaped

        sys.stderr.write(escaped(f"warning: {path}: {what} and {'was' if len(bad) == 1 else 'were'} skipped") + "\n")


def all_records(path: Optional[Path] = None) -> List[Submission]:
    """Every record, intents included, oldest first (bad lines skipped, with one warning)."""
    path = path or registry_path()
    try:
        fd = _open_regular_fd(path)
    except FileNotFoundError:
        return []
    except OSError as error:
        raise _os_problem(path, error, "read") from None
    try:
        with _locked(fd, path, fcntl.LOCK_SH, LOCK_WAIT_S):
            raw = _read_fd(fd, path)
    finally:
        os.close(fd)
    found, bad = _parse(raw)
    _warn_once(path, bad)
    return found


def submissions(path: Optional[Path] = None) -> List[Submission]:
    """All recorded jobs, oldest first (a job recorded twice appears once; intents are not jobs)."""
    seen, jobs = set(), []
    for entry in all_records(path):
        if entry.job_id and entry.job_id not in seen:
            seen.add(entry.job_id)
            jobs.append(entry)
    return jobs


def open_intents(records: Iterable[Submission]) -> List[Submission]:
    """The intents that no job record (nor a note that gives up on them) with the same token follows."""
    records = list(records)
    closed = {r.token for r in records if r.token and (r.job_id or (r.note and r.note != NOT_KNOWN_YET))}
    open_: Dict[str, Submission] = {}
    for entry in records:
        if entry.token and not entry.job_id and not entry.note and entry.token not in closed:
            open_.setdefault(entry.token, entry)
    return list(open_.values())


def _said_unknown(records: Iterable[Submission]) -> set:
    return {r.token for r in records if r.note == NOT_KNOWN_YET}


def find(job_ids: Iterable[str], path: Optional[Path] = None) -> Dict[str, Submission]:
    """The submissions of ``job_ids`` (an array task id finds its array's record; a chain's
    first id finds all its links, a split sweep's all its parts)."""
    wanted = {str(j).split("_")[0] for j in job_ids}
    return {s.job_id: s for s in submissions(path) if s.job_id in wanted or s.chain in wanted or s.sweep in wanted}


# --- finding a submission in SLURM by its token ---------------------------------------------

COMMENT_PREFIX = "slurmkit:"


def token_in(text: str) -> Optional[str]:
    """The slurmkit token in a comment or a submit line (``--comment=slurmkit:<token>``)."""
    import re

    match = re.search(COMMENT_PREFIX + r"([0-9A-Za-z_-]+)", text)
    return match.group(1) if match else None


def _job_id_of(field: str) -> Optional[str]:
    """``123``, ``123_4``, ``123_[0-9]`` or ``123+0`` -> ``123``."""
    digits = ""
    for char in field.strip():
        if not char.isdigit():
            break
        digits += char
    return digits or None


def parse_token_lines(stdout: str) -> Dict[str, str]:
    """token -> job id, from ``ID|TEXT...`` lines (squeue ``%i|%k``, sacct ``JobID|SubmitLine|Comment``)."""
    found: Dict[str, str] = {}
    for line in stdout.splitlines():
        job_field, _, rest = line.partition("|")
        job_id, token = _job_id_of(job_field), token_in(rest)
        if job_id and token:
            found.setdefault(token, job_id)
    return found


class Known(Record):
    """What SLURM knows of slurmkit's tokens."""

    jobs: Dict[str, str]  # token -> job id
    complete: bool        # accounting answered too (the controller forgets a job minutes after it ends)


def query_tokens(since: Optional[str] = None, retry_for: float = 0.0) -> Known:
    """Every job with a slurmkit token that the controller (then accounting, from ``since`` on)
    knows. Raises SchedulerError when the controller does not answer; accounting being away
    only leaves its jobs out (``complete`` False)."""
    from slurmkit.slurm.slurmcli import SchedulerError, run_slurm

    found = parse_token_lines(run_slurm(["squeue", "--me", "-h", "-t", "all", "-o", "%i|%k"], retry_for=retry_for,
                                        timeout=30.0).stdout)
    argv = ["sacct", "-X", "-n", "-P", "-o", "JobID,SubmitLine,Comment"] + (["-S", sacct_time(since)] if since else [])
    try:
        accounted = parse_token_lines(run_slurm(argv, retry_for=0.0, timeout=30.0).stdout)
    except SchedulerError:
        return Known(found, complete=False)
    return Known({**accounted, **found}, complete=True)


def sacct_time(iso: str) -> str:
    """The ``sacct -S`` value for "submitted since ``iso``" (UTC), for every caller that looks
    up tokens in accounting, here or on a cluster over ssh. sacct -S reads the local time of the
    machine it runs on: an hour before ``iso``, written in local time, so that clock skew
    between hosts hides nothing."""
    import datetime

    try:
        moment = datetime.datetime.fromisoformat(iso)
    except ValueError:
        moment = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=GIVE_UP_S)
    return (moment - datetime.timedelta(hours=1)).astimezone().strftime("%Y-%m-%dT%H:%M:%S")


def _age_s(entry: Submission) -> float:
    import datetime

    try:
        then = datetime.datetime.fromisoformat(entry.submitted)
    except ValueError:
        return GIVE_UP_S
    return (datetime.datetime.now(datetime.timezone.utc) - then).total_seconds()


def in_flight(entry: Submission) -> bool:
    """Is the slurmkit that wrote this intent perhaps still submitting it? Not when it ran here
    and has ended; else for IN_FLIGHT_S (its sbatch retry window, with room to spare)."""
    if entry.host == socket.gethostname() and entry.pid is not None:
        try:
            os.kill(entry.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
    return _age_s(entry) < IN_FLIGHT_S


def adopted(entry: Submission, job_id: str) -> Submission:
    """The job record that an intent becomes once its job id is known."""
    chain = entry.chain or (job_id if entry.link == 1 else None)
    return entry._replace(job_id=job_id, chain=chain, host=None, pid=None)


def adopt_interrupted(say: Callable[[str], None], path: Optional[Path] = None,
                      lookup: Callable[[Optional[str]], Known] = query_tokens,
                      on_error: Optional[Callable[[SlurmkitError], None]] = None,
                      which: Callable[[Submission], bool] = lambda entry: not entry.remote) -> List[Submission]:
    """Complete the intents that an interrupted slurmkit left: each one SLURM knows by its token
    becomes a job record ("adopted job N"). One that nobody knows is said once to be unknown and
    kept (looked up again each time); after GIVE_UP_S, with accounting answering, it is closed
    as NEVER_REACHED, said once. Returns the records written.

    A registry that cannot be read goes to ``on_error`` (raised without one), and so does a
    SLURM configuration that cannot be read (nothing will answer); a registry that cannot be
    written only loses the adoption for now, with a warning. ``which`` picks the intents that
    ``lookup`` can answer: local ones by default; ``--remote`` passes one cluster's (looked up there).
    """
    path = path or registry_path()
    try:
        records = all_records(path)
    except RegistryError as error:
        if on_error is None:
            raise
        on_error(error)
        return []
    waiting = [entry for entry in open_intents(records) if which(entry) and not in_flight(entry)]
    if not waiting:
        return []
    try:
        answer = lookup(min(entry.submitted for entry in waiting))
    except SlurmConfigError as error:
        if on_error is None:
            raise
        on_error(error)
        return []
    except SlurmkitError as error:
        say(f"warning: {len(waiting)} interrupted submission(s) not looked up: {error.message}")
        return []
    written = _record_still_open([_outcome(entry, answer) for entry in waiting], path, say, _said_unknown(records))
    for entry in written:
        say(_said(entry))
    return written


def _outcome(entry: Submission, answer: Known) -> Submission:
    """The record that an open intent gets from a lookup."""
    if entry.token in answer.jobs:
        return adopted(entry, answer.jobs[entry.token])
    note = NEVER_REACHED if answer.complete and _age_s(entry) >= GIVE_UP_S else NOT_KNOWN_YET
    return entry._replace(note=note, host=None, pid=None)


def _said(entry: Submission) -> str:
    what = f"the submission of {entry.name} at {entry.submitted} (token {entry.token})"
    if entry.job_id:
        return f"adopted job {entry.job_id} (submitted by an interrupted slurmkit)"
    if entry.note == NEVER_REACHED:
        return f"{what} {NEVER_REACHED}; it is no longer looked up"
    return (f"warning: {what} is {NOT_KNOWN_YET}; slurmkit status keeps looking, and reports it as {NEVER_REACHED} "
            "if it is still unknown a day after it was made")


def _record_still_open(fresh: List[Submission], path: Path, say: Callable[[str], None], said: set) -> List[Submission]:
    """Append the records that close intents still open under the lock (another slurmkit may
    have closed them since): each job is adopted once, and "not known yet" is said once."""
    def news(records, said):
        tokens = {entry.token for entry in open_intents(records)}
        return [e for e in fresh if e.token in tokens and not (e.note == NOT_KNOWN_YET and e.token in said)]

    if all(entry.note == NOT_KNOWN_YET and entry.token in said for entry in fresh):
        return []   # nothing new to write or say
    try:
        return record_all(fresh, path, unless=lambda records: news(records, said | _said_unknown(records)))
    except RegistryError as error:
        say(f"warning: {len(fresh)} interrupted submission(s) not adopted: {error.message}")
        return []
