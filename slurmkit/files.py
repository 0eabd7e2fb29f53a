"""Writing files so that a reader never sees half of one."""

import os
from pathlib import Path
from typing import Union


#: files that hold what a user wrote (their commands, variables, paths) and that slurmkit keeps
#: for itself: only their owner may read them.
PRIVATE_FILE = 0o600
#: folders slurmkit creates for its own records and a job's logs.
PRIVATE_FOLDER = 0o700


def write_atomic(path: Union[str, Path], text: str, mode: int = 0o644) -> Path:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``.

    A crash or a full disk leaves either the old file or none, never a truncated one. ``mode``
    is narrowed by the umask, as for any file a program creates (a user with umask 077 gets
    0600 from 0644); PRIVATE_FILE stays private whatever the umask.
    """
    import tempfile  # here, not at the top: most commands never write a file

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def current_umask() -> int:
    """The process's umask (read by setting it and putting it back at once)."""
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def make_private_folder(folder: Union[str, Path]) -> None:
    """Create ``folder`` and any missing parents as PRIVATE_FOLDER; a folder that already
    exists keeps its mode (the user chose it)."""
    folder = Path(folder)
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for step in reversed(missing):
        try:
            step.mkdir(mode=PRIVATE_FOLDER)
        except FileExistsError:
            pass  # made meanwhile by another process: its mode stays
