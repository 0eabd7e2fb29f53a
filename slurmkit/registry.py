"""Every submission slurmkit made, so that ``slurmkit status`` works later, from another shell.

One JSON object a line in ``$XDG_STATE_HOME/slurmkit/jobs.jsonl`` (default
``~/.local/state/slurmkit``). Each record is appended with one ``write`` under an exclusive
``flock``: concurrent submits never interleave or lose a line, and a reader never sees half of
one (a torn last line from a crash is skipped).
"""

import fcntl
import json
import os
from pathlib import Path
from typing import Dict, Iterable, List, NamedTuple, Optional


class Submission(NamedTuple):
    job_id: str                 # "123" (an array: its array job id)
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


def registry_path(env=None) -> Path:
    env = os.environ if env is None else env
    override = env.get("SLURMKIT_REGISTRY")
    if override:
        return Path(override)
    state = env.get("XDG_STATE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".local", "state")
    return Path(state) / "slurmkit" / "jobs.jsonl"


def record(submission: Submission, path: Optional[Path] = None) -> None:
    """Append one submission (atomically with respect to other slurmkit processes)."""
    path = path or registry_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(submission._asdict(), sort_keys=True) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the lock


def submissions(path: Optional[Path] = None) -> List[Submission]:
    """All recorded submissions, oldest first (unreadable lines skipped)."""
    path = path or registry_path()
    try:
        with open(path, "rb") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
            raw = handle.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return []
    found = []
    for line in raw.splitlines():
        try:
            data = json.loads(line)
            found.append(Submission(**{k: data.get(k) for k in Submission._fields}))
        except (ValueError, TypeError):
            continue
    return found


def find(job_ids: Iterable[str], path: Optional[Path] = None) -> Dict[str, Submission]:
    """The submissions of ``job_ids`` (an array task id finds its array's record; a chain's
    first id finds all its links)."""
    wanted = {str(j).split("_")[0] for j in job_ids}
    return {s.job_id: s for s in submissions(path) if s.job_id in wanted or s.chain in wanted}
