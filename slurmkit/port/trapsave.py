"""What a copy-back trap's paths hold when it runs, for import to read its copies as stage.outputs.

A trap that saves results at the job's end or its time limit often copies through variables
the script set earlier: ``OUT=$PWD/results``, ``OUT=$(pwd)/out``, ``OUT=$1``. bashtree's
known_values gives the ones of certain text; this module adds what import can tell about the
others. ``$PWD`` and ``$(pwd)`` are the folder the script is in where it reads them (the submit
folder until a ``cd``). A name whose value only the job knows (``OUT=$1``, ``OUT=$(date +%F)``)
is not put in: an output's ``to`` is expanded before environment.setup runs, so it cannot read
a name setup sets, and such a trap stays for the user to carry over.
"""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, List, Optional, Sequence, Set

from slurmkit.port import bashtree

#: the submit folder, where a job starts
SUBMIT_DIR = "$SLURM_SUBMIT_DIR"
_PWD = re.compile(r"\$\{?PWD\}?(?![\w])")
_PWD_SUBSTITUTION = re.compile(r"\$\(\s*pwd\s*\)|`\s*pwd\s*`")


def folder_at(changes: List[bashtree.Command], line: int, values: Dict[str, str]) -> Optional[str]:
    """The folder the script is in at ``line``: the submit folder, or the target of the last
    top-level ``cd`` before it (``changes``: folder_changes); None where a cd's target is not
    plain text or known values."""
    folder: Optional[str] = SUBMIT_DIR
    for command in changes:
        if command.line >= line:
            break
        words = command.argv[1:]
        target = bashtree.substituted(words[0], values) if words else "$HOME"
        folder = _joined(folder, target) if _plain(target) else None
    return folder


def folder_changes(script: bashtree.Script) -> List[bashtree.Command]:
    """The top-level ``cd`` and ``pushd`` of ``script``, in order (found once for folder_at)."""
    return [c for c in bashtree.walk(script.statements, functions=False) if not c.within and c.name in ("cd", "pushd")]


def _joined(folder: Optional[str], target: str) -> Optional[str]:
    if target.startswith(("/", "$", "~")):
        return target.rstrip("/") or target
    return None if folder is None else f"{folder}/{target}".rstrip("/")


def _plain(text: str) -> bool:
    """Text with no expansion but of variables the job has (no glob, substitution, or other)."""
    return not re.search(r"[*?\[`]|\$\(", text)


def values_at_save(script: bashtree.Script, program_line: int) -> Dict[str, str]:
    """bashtree.known_values, with ``$PWD`` (the folder at the program, where the trap runs) and
    the names set once to ``$(pwd)``/``$PWD`` text, read at the line that sets them."""
    values = dict(bashtree.known_values(script.statements))
    once = _set_once(script.statements)
    changes = folder_changes(script)
    for assignment in bashtree.assignments(script.statements):
        if assignment.name not in once or assignment.name in values:
            continue
        text = _PWD_SUBSTITUTION.sub("$PWD", assignment.value.value)
        if not (_PWD.search(text) and _plain(text)):
            continue
        folder = folder_at(changes, assignment.line, values)
        if folder is not None:
            values[assignment.name] = bashtree.substituted(_PWD.sub(folder, text), values)
    here = folder_at(changes, program_line, values)
    for name, value in list(values.items()):
        if _PWD.search(value) and here is not None:
            values[name] = _PWD.sub(here, value)
    if here is not None:
        values["PWD"] = here
    return {name: value for name, value in values.items() if not _SPECIAL.search(value)}


#: a reference to the script's arguments or the shell's own parameters ($1, $@, $#, $$, $!):
#: known_values takes them for text, while their value is the job's alone
_SPECIAL = re.compile(r"\$(\{?[0-9@*#?$!-])")


def _set_once(statements: Sequence[bashtree.Statement]) -> FrozenSet[str]:
    counts: Dict[str, int] = {}
    for assignment in bashtree.assignments(statements):
        counts[assignment.name] = counts.get(assignment.name, 0) + 1
    loops = set(bashtree.assigned(statements)) - set(counts)
    return frozenset(name for name, count in counts.items() if count == 1 and name not in loops)


def made_folders(script: bashtree.Script, values: Dict[str, str]) -> FrozenSet[str]:
    """The folders the script makes (``mkdir [-p] DIR``), as written with known values put in:
    a copy into one goes inside it, as into any folder that exists."""
    made: Set[str] = set()
    for command in bashtree.walk(script.statements):
        if command.name == "mkdir":
            made.update(bashtree.substituted(w, values).rstrip("/") for w in command.argv[1:] if not w.startswith("-"))
    return frozenset(made)


