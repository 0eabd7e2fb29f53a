"""A launch.command that starts a launcher of its own, under a kind whose launcher already starts
the processes: each of the kind's processes would start another launcher (``accelerate launch
... --no_python accelerate launch train.py``: every node's ranks each start a node's worth).

The launcher words are the ones ``slurmkit import`` strips (launch_options.parse: srun, mpirun,
mpiexec, torchrun and ``python -m torch.distributed.run``, horovodrun, ``accelerate launch`` and
its other names); what remains is the program, as import would keep it. A kind run directly
(launcher ``direct``: one process, which may start its own srun step) is left alone.
"""

from __future__ import annotations

import shlex
from typing import List, Optional, Sequence, Tuple

from slurmkit.core import launch_options
from slurmkit.core.launchers import LAUNCHERS

#: how many processes a kind's launcher starts, as the message says it (kinds.py: processes)
_STARTS = {"one": "its process", "per task": "one process per task", "per GPU": "one process per GPU"}


def program_alone(command: Sequence[str]) -> Tuple[Optional[str], List[str]]:
    """The first launcher in ``command`` (None: none) and the program under every launcher, as
    import keeps it (torchrun and accelerate launch run a script with python unless told not to)."""
    first, words = None, list(command)
    while words:
        parsed = launch_options.parse(words)
        if parsed.launcher is None:
            break
        first = first or parsed.launcher
        words = list(parsed.program)
        if parsed.launcher in launch_options.RUN_WITH_PYTHON:
            words = launch_options.python_program(parsed, words)
    return first, words


def nested_launcher_finding(kind, launcher: str, command: Sequence[str], field: str) -> Optional[Tuple[str, str]]:
    """(field, message) where the command starts a launcher and the kind's own launcher is not direct."""
    if not LAUNCHERS[launcher].starts_processes:
        return None
    found, program = program_alone(command)
    if found is None:
        return None
    instead = shlex.join(program) if program else "the program alone, e.g. python train.py"
    return (field, f"the command starts {_spelled(found)!r}, and kind {kind.name!r} already starts {_STARTS[kind.processes]} "
            f"with {_spelled(launcher)}: each process would start another launcher; write the program alone: '{instead}'")


def _spelled(launcher: str) -> str:
    known = LAUNCHERS.get(launcher)
    return known.spelled if known else launcher
