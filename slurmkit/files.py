"""Writing files so that a reader never sees half of one."""

import os
from pathlib import Path
from typing import Union


def write_atomic(path: Union[str, Path], text: str, mode: int = 0o644) -> Path:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``.

    A crash or a full disk leaves either the old file or none, never a truncated one.
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
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
