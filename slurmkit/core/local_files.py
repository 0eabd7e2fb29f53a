"""Templates and site profiles taken from the current folder: each is announced once on stderr.

``./templates`` and ``./site_profiles`` come first on their search paths, so running slurmkit
inside a cloned repository uses that repository's files. That is a feature (a lab's own
templates), but it must never be a surprise: the first time a process uses such a file it
says so, and which file of the same name it replaces. Inside slurmkit's own checkout the
current folder's ``templates/`` *is* the bundled folder, and nothing is announced.
"""

import os
from pathlib import Path
from typing import Optional, Sequence, Set

#: a registry: the files this process has already announced (by real path).
_ANNOUNCED: Set[str] = set()


def _same(a, b) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def in_current_folder(path: Path, folder: str, bundled: Path) -> bool:
    """Whether ``path`` sits in ``./<folder>`` (and that folder is not the bundled one)."""
    parent = Path(path).parent
    return _same(parent, Path.cwd() / folder) and not _same(parent, bundled)


def _identical(a: Path, b: Optional[Path]) -> bool:
    """Whether ``b`` exists and has the same bytes as ``a``: a copy that changes nothing (a clone of
    slurmkit's own repository, with slurmkit installed from it) is not worth a note."""
    if b is None:
        return False
    try:
        from slurmkit.core.files import read_bytes_bounded  # a pipe in ./templates is not waited on

        return read_bytes_bounded(a, 1 << 20) == read_bytes_bounded(b, 1 << 20)
    except OSError:
        return False


def announce(path: Path, folder: str, replaces: Optional[str], replaced: Optional[Path] = None) -> None:
    """``note: using ./<folder>/<name> from the current folder[, in place of <replaces>]``, once;
    nothing when ``replaced`` (the file it takes the place of) holds the same bytes."""
    key = os.path.realpath(path)
    if key in _ANNOUNCED or _identical(path, replaced):
        return
    _ANNOUNCED.add(key)
    instead = f", in place of {replaces}" if replaces else ""
    from slurmkit.core.verbosity import note

    note(f"note: using ./{folder}/{Path(path).name} from the current folder{instead}")


def announce_template(name: str, filename: str, searchpath: Sequence[str]) -> None:
    """Called with each template Jinja loads; announces one from ``./templates``."""
    from slurmkit.core.bundled import templates_dir

    bundled = templates_dir()
    if not in_current_folder(Path(filename), "templates", bundled):
        return
    folders = [Path(folder) for folder in searchpath]
    here = next(i for i, folder in enumerate(folders) if _same(folder, Path(filename).parent))
    later = [folder / name for folder in folders[here + 1:]]
    other = next((path for path in later if path.is_file()), None)
    replaces = None if other is None else (f"the bundled {name}" if _same(other.parent, bundled) else str(other))
    announce(Path(filename), "templates", replaces, other)
