"""Words that name one Python version: ``python3.9 main.py``, ``$VENV/lib/python3.9/site-packages``.

A port that moves the python module (python/3.9 -> python/3.12.4) leaves such words naming a
Python the job no longer has: ``python3.9`` is not on the PATH of the new module or of a
virtualenv made with it ("command not found"), and a venv made with Python 3.12 keeps its
packages under ``lib/python3.12``, so a copy into ``lib/python3.9/...`` writes into nothing.
Each such word is rewritten to the job's new version, and the change is said.
"""

from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple

#: ``python3.N`` as a word of its own or a folder of a path; not ``cpython3.9``, not ``$python3``
_VERSIONED = re.compile(r"(?<![\w.$-])python(3\.\d+)(?![\d]|\.\d)")


def python_version(modules: Sequence[str]) -> Optional[str]:
    """``3.12`` of ``python/3.12.4`` among ``modules``; None where no python module is named."""
    for module in modules:
        family, _, version = module.partition("/")
        match = re.match(r"(3\.\d+)", version)
        if family.lower() == "python" and match:
            return match.group(1)
    return None


def moved_python_words(text: str, version: str) -> Tuple[str, List[str]]:
    """``text`` with each ``python3.N`` of another version written ``python{version}``, and why."""
    reasons: List[str] = []

    def moved(match: "re.Match[str]") -> str:
        if match.group(1) == version:
            return match.group(0)
        where = "a virtualenv's packages folder" if match.string[match.end():match.end() + 1] == "/" else "a command"
        reason = f"python{match.group(1)} ({where}) is python{version}: the job loads Python {version} now"
        if reason not in reasons:
            reasons.append(reason)
        return f"python{version}"

    return _VERSIONED.sub(moved, text), reasons
