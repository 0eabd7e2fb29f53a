"""slurmkit's runtime library (runtime.sh): the machinery a rendered script calls by name.

A script names the library by slurmkit's version and the first 12 hex digits of its sha256
(``slurmkit-runtime-0.1.0-0123456789ab.sh``) and carries the whole hash, which it checks before
it sources the file. So a script keeps the machinery it was rendered with: a later slurmkit
writes a file of another name beside it and never overwrites or removes an old one, and a file
changed by hand is refused (exit RUNTIME_EXIT_CODE) rather than run.

The script looks for the file in ``$SLURM_SUBMIT_DIR``, then in
``${XDG_DATA_HOME:-$HOME/.local/share}/slurmkit/runtime/``, both of which it only reads (Trillium's
compute nodes mount $HOME read-only: reading is all a job does). ``slurmkit submit`` writes it to
the data folder (here, or on the far cluster over the one connection), ``render -o FILE`` beside
FILE, and ``render --standalone`` appends it to the script itself.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from slurmkit.core.records import Record
from slurmkit.core.version import __version__

#: what a script exits with when its runtime is missing or changed (EX_CONFIG: it cannot run as it is).
RUNTIME_EXIT_CODE = 78
#: the line after which ``render --standalone`` appends the library; the script reads itself from there.
APPENDED_MARK = "# ---- slurmkit-runtime: appended by render --standalone"
_SOURCE = Path(__file__).resolve().parent / "runtime.sh"


class Runtime(Record):
    """What a template needs of the library: its file name and hash, and which loader to write
    (``mode``: "file", the versioned file; "appended", render --standalone; "inline", the library
    itself in the script's fence, for verification's trace, which runs no file it did not make)."""
    name: str
    sha256: str
    text: str
    mode: str = "file"
    exit_code: int = RUNTIME_EXIT_CODE


@lru_cache(maxsize=1)
def runtime() -> Runtime:
    """This slurmkit's runtime library (read once)."""
    text = _SOURCE.read_text(encoding="utf-8")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Runtime(f"slurmkit-runtime-{__version__}-{digest[:12]}.sh", digest, text)


def appended(script: str) -> str:
    """``script`` with the library after it, for ``render --standalone``: the script ends before
    it (``exit``), and its loader reads and checks what follows APPENDED_MARK."""
    return f"{script.rstrip(chr(10))}\nexit\n{APPENDED_MARK}\n{runtime().text}"


def runtime_folder() -> Path:
    """Where submit keeps every version of the library: ``$XDG_DATA_HOME/slurmkit/runtime``."""
    from slurmkit.core.folders import data_folder

    return data_folder() / "runtime"


def write_runtime(folder: Path) -> Path:
    """The library in ``folder`` under its versioned name. One already there whole is left as it
    is (never rewritten: jobs may be reading it); one whose content is not its name's is replaced."""
    from slurmkit.core.files import write_atomic

    lib = runtime()
    path = Path(folder) / lib.name
    try:
        if hashlib.sha256(path.read_bytes()).hexdigest() == lib.sha256:
            return path
    except OSError:
        pass
    return write_atomic(path, lib.text, 0o755)  # executable: srun runs it as the task prolog (slurmkit_task_env)
