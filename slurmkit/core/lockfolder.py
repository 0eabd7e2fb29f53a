"""A lock for files on filesystems without flock: a folder beside the file.

NFS mounted without lockd answers flock(2) with ENOLCK, Lustre mounted without ``-o flock``
with ENOSYS (others with EOPNOTSUPP or EINVAL): home and project folders on real clusters.
What every one of them does atomically, on the server, is rename(2) of a folder onto a path
that holds a folder that is not empty: it fails. So the lock ``FILE.lock`` is made whole under
a hidden name beside it (``.FILE.lock.NONCE``, holding an ``owner`` file: host, pid, time and
a random nonce) and renamed into place: it never exists without its owner. It is exclusive
(readers take it too) and held for one read or one append: milliseconds.

The stale-lock rule (``stale``): a lock is broken when its owner ran on this host and that
process is gone, or when it was taken more than STALE_S ago (5 minutes, whoever holds it: a
holder that long is taken to be dead, on another host too, where its pid cannot be asked). A
folder at the lock's path without a readable owner is not slurmkit's and is never broken (an
empty one is simply renamed over). Breaking is itself checked: the stale folder is renamed to a
hidden name and removed only if what moved is the lock judged stale (its owner's nonce); one
that is not (another process broke the stale lock and took its own meanwhile) is put back.
Hidden folders left by killed processes (a prepared lock never renamed in, a broken one not yet
removed) are judged by the same rule (one without an owner by its age) and removed by the next
process that takes the lock.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import time
import uuid
from pathlib import Path
from typing import Callable, Optional

from slurmkit.core.files import read_bytes_bounded
from slurmkit.core.records import Record

#: the errnos of a filesystem that has no flock (ENOTSUP is EOPNOTSUPP on Linux, not elsewhere)
NO_FLOCK = frozenset({errno.ENOLCK, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL})
#: a lock taken longer ago than this is stale, whoever holds it
STALE_S = 300.0
OWNER_FILE = "owner"
_STEP_S = 0.05


class Owner(Record):
    host: str
    pid: int
    since: float     # time.time() when it was taken
    nonce: str       # this taking of the lock, and no other

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host} since {time.strftime('%H:%M:%S', time.localtime(self.since))}"


class Busy(Exception):
    """The lock stayed held for the whole wait; ``owner`` (None: a folder that is not a lock) holds it."""

    def __init__(self, lock: Path, owner: Optional[Owner]) -> None:
        super().__init__(str(lock))
        self.lock, self.owner = lock, owner


def lock_folder(path: Path) -> Path:
    """The lock folder of ``path``: ``FILE.lock`` beside it."""
    return path.with_name(path.name + ".lock")


def stale(owner: Optional[Owner], now: float, here: str, alive: Callable[[int], bool]) -> bool:
    """The stale-lock rule (see the module's docstring): may a lock held by ``owner`` be broken?"""
    if owner is None:
        return False
    if owner.host == here and not alive(owner.pid):
        return True
    return now - owner.since > STALE_S


def alive(pid: int) -> bool:
    """Is process ``pid`` running on this host? (One of another user's counts as running.)"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_owner(folder: Path) -> Optional[Owner]:
    """The owner written in a lock (or a hidden) folder; None when there is none that reads whole."""
    try:
        data = json.loads(read_bytes_bounded(folder / OWNER_FILE, 4096, follow_symlinks=False))
        owner = Owner(str(data["host"]), int(data["pid"]), float(data["since"]), str(data["nonce"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return owner if owner.pid > 0 and owner.nonce else None


def acquire(lock: Path, wait_s: float) -> Owner:
    """Take the lock, breaking a stale one; wait at most ``wait_s``, then raise Busy. Returns
    the owner to give back to ``release``. OSError: the folder beside the file cannot be made."""
    mine = Owner(socket.gethostname(), os.getpid(), time.time(), uuid.uuid4().hex)
    prepared = _prepare(lock, mine)
    deadline = time.monotonic() + wait_s
    try:
        tried: Optional[Owner] = None   # the stale lock last broken: one that stays is waited for
        while not _renamed_in(prepared, lock, mine):
            holder = read_owner(lock)
            if holder != tried and stale(holder, time.time(), mine.host, alive):
                _break(lock, holder)
                tried = holder
                continue
            if time.monotonic() >= deadline:
                raise Busy(lock, holder)
            time.sleep(_STEP_S)
    except BaseException:
        shutil.rmtree(prepared, ignore_errors=True)
        raise
    _sweep(lock)
    return mine


def release(lock: Path, mine: Owner) -> None:
    """Give the lock back if it is still ours (one judged stale and broken is someone else's now)."""
    if read_owner(lock) != mine:
        return
    hidden = _hidden(lock)
    try:
        os.rename(lock, hidden)
    except OSError:
        return   # left to the stale-lock rule: its owner is this process, soon gone
    shutil.rmtree(hidden, ignore_errors=True)


def _hidden(lock: Path) -> Path:
    return lock.with_name(f".{lock.name}.{uuid.uuid4().hex[:12]}")


def _prepare(lock: Path, mine: Owner) -> Path:
    """The lock, whole, under a hidden name beside its place."""
    prepared = _hidden(lock)
    os.mkdir(prepared, 0o700)
    try:
        fd = os.open(prepared / OWNER_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, json.dumps(mine._asdict()).encode() + b"\n")
        finally:
            os.close(fd)
    except BaseException:
        shutil.rmtree(prepared, ignore_errors=True)
        raise
    return prepared


def _renamed_in(prepared: Path, lock: Path, mine: Owner) -> bool:
    """Rename the prepared lock into place; False when a lock is there."""
    try:
        os.rename(prepared, lock)
        return True
    except OSError as error:
        if error.errno in (errno.EEXIST, errno.ENOTEMPTY):
            return False
        if error.errno == errno.ENOENT and read_owner(lock) == mine:
            return True   # NFS: the rename was done, its answer lost and the call repeated
        raise


def _break(lock: Path, judged: Optional[Owner]) -> None:
    """Move the stale lock away; remove it if it is the one judged stale, else put it back."""
    hidden = _hidden(lock)
    try:
        os.rename(lock, hidden)
    except OSError:
        return   # gone meanwhile: given back, or broken by another process
    if read_owner(hidden) == judged:
        shutil.rmtree(hidden, ignore_errors=True)
        return
    try:
        os.rename(hidden, lock)
    except OSError:
        pass     # a third process took the lock meanwhile: this one is swept once its owner is stale


def _sweep(lock: Path) -> None:
    """Remove the hidden folders of this lock that killed processes left (stale by the same rule)."""
    prefix, here, now = f".{lock.name}.", socket.gethostname(), time.time()
    try:
        names = [entry.name for entry in os.scandir(lock.parent) if entry.name.startswith(prefix) and entry.is_dir()]
    except OSError:
        return
    for name in names:
        folder = lock.parent / name
        owner = read_owner(folder)
        if stale(owner, now, here, alive) or (owner is None and _age_s(folder, now) > STALE_S):
            shutil.rmtree(folder, ignore_errors=True)


def _age_s(folder: Path, now: float) -> float:
    try:
        return now - os.lstat(folder).st_mtime
    except OSError:
        return 0.0
