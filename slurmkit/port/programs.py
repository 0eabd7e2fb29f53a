"""Programs a module puts on PATH, when ``port`` moves the module to a new major version.

A new major version may rename what it runs: NAMD 3 ships ``namd3`` where NAMD 2 shipped
``namd2``, so a script ported from namd-multicore/2.14 to namd-multicore/3.0.2 that still runs
``namd2`` dies with "command not found". Where a rename is documented (RENAMED, each with its
source) the port rewrites the program; any other program of a module whose major version the
port changed is a to-do, since the port cannot know it still exists and takes the same words.
A program "of a module" is a command word that starts with the module's name up to its first
``-`` (``namd2`` for namd-multicore): the only link between the two that a script shows.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

#: {module name up to its first "-": (the first major version that renamed it, {old program: new})}.
RENAMED: Dict[str, Tuple[int, Dict[str, str], str]] = {
    # NAMD page of the Alliance wiki: "module load StdEnv/2023 gcc/12.3 namd-multicore/3.0.2" then
    # "namd3 +p$SLURM_CPUS_PER_TASK ..."; the 2.14 examples run namd2.
    "namd": (3, {"namd2": "namd3"}, "https://docs.alliancecan.ca/wiki/NAMD/en"),
}


#: {module name: its programs}, where they do not start with the module's name, or where the
#: name is too short for a prefix to say anything (r's would be run, rm, rsync): R and Rscript
#: are what the r module puts on PATH (docs.alliancecan.ca/wiki/R: "module load r", then R or Rscript).
PROGRAMS: Dict[str, Tuple[str, ...]] = {"r": ("R", "Rscript")}
#: a shorter module name without PROGRAMS names only the program spelled like it
MIN_STEM = 3


def _major(version: str) -> Optional[int]:
    match = re.match(r"\d+", version)
    return int(match.group()) if match else None


def major_moves(old: List[str], new: List[str]) -> Dict[str, Tuple[str, str, int]]:
    """{program stem: (old module, new module, new major)} for each module the port moved to
    another major version (namd-multicore/2.14 -> namd-multicore/3.0.2); StdEnv is a stack, not a program."""
    moved: Dict[str, Tuple[str, str, int]] = {}
    before = {m.partition("/")[0]: m for m in old}
    for module in new:
        family, _, version = module.partition("/")
        was = before.get(family)
        if family == "StdEnv" or not was or was == module:
            continue
        old_major, new_major = _major(was.partition("/")[2]), _major(version)
        if old_major is not None and new_major is not None and old_major != new_major:
            moved[family.split("-")[0].lower()] = (was, module, new_major)
    return moved


def _words(stem: str) -> "re.Pattern[str]":
    """A command word starting with ``stem``, or one of its PROGRAMS: not part of a path, a file
    name or a variable. A stem shorter than MIN_STEM without PROGRAMS names no word."""
    known = PROGRAMS.get(stem)
    if known:
        return re.compile(rf"(?<![\w./$-])(?:{'|'.join(map(re.escape, known))})(?![\w./-])")
    if len(stem) < MIN_STEM:
        return re.compile(rf"(?<![\w./$-]){re.escape(stem)}(?![\w./+-])")
    return re.compile(rf"(?<![\w./$-]){re.escape(stem)}[\w+]*(?![\w./-])")


def program_moves(text: str, moved: Dict[str, Tuple[str, str, int]]) -> Tuple[str, List[str], List[str]]:
    """``text`` with each documented rename made, the reasons of those, and a to-do for each
    other program of a moved module that ``text`` names."""
    reasons: List[str] = []
    todos: List[str] = []
    for stem, (was, module, major) in moved.items():
        since, renames, source = RENAMED.get(stem, (0, {}, ""))
        for word in sorted(set(_words(stem).findall(text))):
            if major >= since and word in renames:
                text = re.sub(rf"(?<![\w./$-]){re.escape(word)}(?![\w./])", renames[word], text)
                reasons.append(f"{was} became {module}, which runs {renames[word]} in place of {word} "
                               f"(https://docs.alliancecan.ca/wiki/NAMD/en)")
            elif word not in renames.values():
                todos.append(f"{was} became {module}, a new major version: check that {word} still exists there "
                             f"and takes the same words ('module load {module}; which {word}')")
    return text, reasons, todos
