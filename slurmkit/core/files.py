"""Writing files so that a reader never sees half of one."""

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, Union

from slurmkit.core.errors import SlurmkitError
from slurmkit.core.units import human_size

#: files that hold what a user wrote (their commands, variables, paths) and that slurmkit keeps
#: for itself: only their owner may read them.
PRIVATE_FILE = 0o600
#: folders slurmkit creates for its own records and a job's logs.
PRIVATE_FOLDER = 0o700


#: a script slurmkit writes (render -o, new): its owner may read and run it, no one else.
PRIVATE_SCRIPT = 0o700


class CannotWrite(SlurmkitError):
    """A file slurmkit was asked to write that it cannot (a missing or read-only folder, /proc,
    a named pipe or a symbolic link in the way): one line, exit 2, nothing written."""


def write_atomic(path: Union[str, Path], text: str, mode: int = PRIVATE_FILE, replace_link: bool = False) -> Path:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``.

    A crash or a full disk leaves either the old file or none, never a truncated one. What
    slurmkit writes holds user values (variables, commands), so ``mode`` is private by default
    (PRIVATE_FILE; scripts PRIVATE_SCRIPT), narrowed further by the umask; an existing file's
    wider mode is not kept (the new file replaces it). Missing folders are made PRIVATE_FOLDER.
    The temporary name is short (``.slurmkit-XXXXXXXX``), so any name the file system takes
    for ``path`` works. A named pipe, device, socket or folder at ``path`` is refused, and a
    symbolic link too unless ``replace_link`` (a command's --force): the link is then replaced,
    never written through (check_destination). Every failure is a CannotWrite line naming ``path``.
    """
    import tempfile  # here, not at the top: most commands never write a file

    path = Path(path)
    check_destination(path, replace_link)
    try:
        make_private_folder(path.parent)
        fd, tmp = tempfile.mkstemp(prefix=".slurmkit-", dir=path.parent)
    except OSError as error:
        raise CannotWrite(f"{path}: cannot write it: {_reason(error)}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fchmod(handle.fileno(), mode & ~current_umask())
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as error:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        if isinstance(error, OSError):
            raise CannotWrite(f"{path}: cannot write it: {_reason(error)}") from None
        raise
    return path


def check_writable(path: Union[str, Path]) -> None:
    """Refuse, before any work, a destination whose folder exists and takes no file (``/sys``,
    ``/proc``, a read-only mount): a file is made there and removed at once. A folder that does
    not exist yet is left for write_atomic to make (nothing is made before the work is done)."""
    import tempfile  # here, not at the top: most commands never write a file

    folder = Path(path).parent
    if not folder.is_dir():
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=".slurmkit-", dir=folder)
    except OSError as error:
        raise CannotWrite(f"{path}: cannot write it: {_reason(error)}") from None
    os.close(fd)
    os.unlink(tmp)


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def check_destination(path: Union[str, Path], replace_link: bool = False, folder: bool = False) -> None:
    """Refuse what a writer must not replace or write into at ``path``, a destination the user
    named, before anything is written: CannotWrite, one line naming ``path``, what it is and
    what to do; nothing is touched. Every writer of such a path calls it (write_atomic does).

    Refused: a named pipe (writing to one blocks, replacing one breaks whoever reads it), a
    socket, a device (as root, replacing ``/dev/full`` would replace the machine's device), a
    symbolic link unless ``replace_link`` (a command's --force: the link itself is replaced,
    never what it points to), a folder where a file is expected, and, with ``folder`` (a
    destination that is a folder, written into or replaced whole), anything but a folder.
    """
    path = Path(path)
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as error:
        raise CannotWrite(f"{path}: cannot write it: {_reason(error)}") from None
    mode, wanted = status.st_mode, "folder" if folder else "file"
    if stat.S_ISLNK(mode):
        if not replace_link:
            raise CannotWrite(f"{path}: a symbolic link: slurmkit does not write through links; "
                              f"remove it or name another {wanted}")
    elif folder:
        if not stat.S_ISDIR(mode):
            what = "a regular file" if stat.S_ISREG(mode) else f"a {_kind_of(mode)}"
            raise CannotWrite(f"{path}: not a folder ({what}): name a folder")
    elif stat.S_ISDIR(mode):
        raise CannotWrite(f"{path}: a folder: name a file")
    elif not stat.S_ISREG(mode):
        raise CannotWrite(f"{path}: not a regular file (a {_kind_of(mode)}): "
                          "slurmkit replaces only regular files; remove it or name another file")


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


class NotARegularFile(OSError):
    """A path that is a named pipe, a device, a socket (or a symbolic link where none is
    allowed): reading one may block for ever or never end, writing over one would replace it."""

    strerror: str   # always what the path is (an OSError's may be None)

    def __init__(self, path: Union[str, Path], what: str = "not a regular file") -> None:
        super().__init__(errno.EINVAL, what, str(path))


def open_regular(path: Union[str, Path], follow_symlinks: bool = True) -> BinaryIO:
    """Open ``path`` for reading if it is a regular file, else raise NotARegularFile (an
    OSError whose strerror is "not a regular file"; a folder raises IsADirectoryError).

    Every file slurmkit reads goes through here: ``open()`` on a named pipe blocks until a
    writer comes, so the file is opened O_NONBLOCK (which never blocks on a FIFO or a device)
    and what it is is asked of the open descriptor (no race with a rename), before one byte
    is read. ``follow_symlinks=False`` refuses a symbolic link itself (O_NOFOLLOW)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP and not follow_symlinks:
            raise NotARegularFile(path, "a symbolic link, not a regular file") from None
        raise
    try:
        kind = os.fstat(fd).st_mode
        if stat.S_ISDIR(kind):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(kind):
            raise NotARegularFile(path, f"not a regular file (a {_kind_of(kind)})")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _kind_of(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "named pipe"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"), (stat.S_ISLNK, "symbolic link")):
        if test(mode):
            return name
    return "special file"


class TooLarge(OSError):
    """A file past the size its reader allows (``/dev/zero`` would otherwise fill memory)."""

    def __init__(self, path, limit: int):
        super().__init__(errno.EFBIG, f"larger than {human_size(limit)}, slurmkit's limit for this file", str(path))
        self.limit = limit


def read_bytes_bounded(path: Union[str, Path], limit: int, follow_symlinks: bool = True) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them, else TooLarge;
    never more than ``limit + 1`` bytes are read."""
    with open_regular(path, follow_symlinks) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(path, limit)
    return data
