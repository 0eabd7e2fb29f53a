"""How much slurmkit says on stderr besides its result: ``-q`` less, ``-v`` more.

- default: the result (stdout), warnings, errors, and notes (``note: using ./templates/...``,
  ``wrote demo/job.yaml``);
- ``-q``/``--quiet``: no notes and no ``wrote`` lines; warnings and errors still show (a warning
  is about the job, and silencing it is how wrong jobs get submitted);
- ``-v``/``--verbose``: also which profile a command took and why, and every SLURM command
  slurmkit runs (sbatch, sacct, squeue, scancel ...) with how long it took.

The level is this process's (set by the ``slurmkit`` group from its flags); ``$SLURMKIT_VERBOSITY``
(``-1``, ``0``, ``1``) sets it for library use and for the commands a test runs.
"""

import os
import sys

QUIET, NORMAL, VERBOSE = -1, 0, 1
_level = None


def level() -> int:
    if _level is not None:
        return _level
    try:
        return max(QUIET, min(VERBOSE, int(os.environ.get("SLURMKIT_VERBOSITY", "0"))))
    except ValueError:
        return NORMAL


def set_level(value) -> None:
    """Set the level for this process (None: back to ``$SLURMKIT_VERBOSITY``)."""
    global _level
    _level = value


def quiet() -> bool:
    return level() <= QUIET


def note(line: str) -> None:
    """A line about what slurmkit did, dropped under ``-q``."""
    if not quiet():
        from slurmkit.core.output import escaped

        sys.stderr.write(escaped(line) + "\n")
        sys.stderr.flush()


def detail(line: str) -> None:
    """A line only ``-v`` shows, marked so that it is not taken for output."""
    if level() >= VERBOSE:
        from slurmkit.core.output import escaped

        sys.stderr.write(f"slurmkit: {escaped(line)}\n")
        sys.stderr.flush()
