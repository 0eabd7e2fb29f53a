"""What program a command runs: the one place that tells a Python interpreter from the rest."""

from __future__ import annotations

import re
from typing import Sequence

#: the program of a command that is a Python interpreter: python, python3, python3.11 (any folder).
_PYTHON_PROGRAM = re.compile(r"(?:.*/)?python(?:\d+(?:\.\d+)?)?")


def runs_python(command: Sequence[str]) -> bool:
    """Whether the payload is a Python interpreter (the first word that is not VAR=value): such a
    job needs the site's python module, since the OS python on a compute node has none of the
    site's wheels and is not the one the Alliance Python page supports."""
    program = next((word for word in command if not re.match(r"[A-Za-z_][A-Za-z0-9_]*=", word)), "")
    return bool(_PYTHON_PROGRAM.fullmatch(program))
