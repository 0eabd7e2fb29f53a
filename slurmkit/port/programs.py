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
import shlex
from typing import Dict, FrozenSet, List, Optional, Tuple

#: {module name up to its first "-": (the first major version that renamed it, {old program: new})}.
RENAMED: Dict[str, Tuple[int, Dict[str, str], str]] = {
    # NAMD page of the Alliance wiki: "module load StdEnv/2023 gcc/12.3 namd-multicore/3.0.2" then
    # "namd3 +p$SLURM_CPUS_PER_TASK ..."; the 2.14 examples run namd2.
    "namd": (3, {"namd2": "namd3"}, "https://docs.alliancecan.ca/wiki/NAMD/en"),
    # GROMACS page, "Suffixes": "GROMACS 5 and newer releases consist of only four binaries ... All
    # GROMACS tools from previous versions have been implemented as sub-commands of the gmx
    # binaries" (gmx, gmx_mpi, gmx_d, gmx_mpi_d); 4.6.7's parallel mdrun is mdrun_mpi (mdrun_mpi_d).
    "gromacs": (5, {"mdrun_mpi": "gmx_mpi mdrun", "mdrun_mpi_d": "gmx_mpi_d mdrun", "mdrun": "gmx mdrun",
                    "mdrun_d": "gmx_d mdrun", "grompp": "gmx grompp", "grompp_d": "gmx_d grompp"},
                "https://docs.alliancecan.ca/wiki/GROMACS/en"),
}


#: {module name up to its first "-": (the first version without it, what that version removed,
#: how a job asks for what was removed, the source)}: a move across that version is a to-do that
#: names what went, not a generic "check it still exists".
REMOVED: Dict[str, Tuple[Tuple[int, ...], str, "re.Pattern[str]", str]] = {
    # Nextflow's "Migrating from DSL 1": "In version 22.12.0-edge, DSL1 support was removed".
    "nextflow": ((22, 12), "DSL1, removed in 22.12.0-edge", re.compile(r"NXF_DEFAULT_DSL=['\"]?1\b|-dsl1\b|dsl\s*=\s*1\b"),
                 "https://www.nextflow.io/docs/latest/dsl1.html"),
}


#: {program: (the options it takes in every release the Alliance builds for StdEnv/2023, their
#: sources)}: a program kept by name and options across releases whose versions are years
#: (matlab/2020a -> matlab/2023b.2), so a "new major version" asks nothing of a line that uses
#: only these options.
KEPT: Dict[str, Tuple[FrozenSet[str], str]] = {
    # MathWorks "Commonly Used Startup Options" (-batch, -r, -nojvm, -singleCompThread, -logfile, -c)
    # and "matlab (Linux)" (-nodisplay, -nodesktop, -nosplash, -sd); the Alliance's MATLAB page runs
    # "matlab -nojvm -nodisplay -batch" and "matlab -singleCompThread -batch" under matlab/2023b.2 and 2024b.1.
    "matlab": (frozenset({"-batch", "-r", "-nojvm", "-singleCompThread", "-logfile", "-c", "-nodisplay", "-nodesktop",
                          "-nosplash", "-sd"}),
               "https://www.mathworks.com/help/matlab/matlab_env/commonly-used-startup-options.html, "
               "https://docs.alliancecan.ca/wiki/MATLAB/en"),
}


#: options of a KEPT program whose next word is their value
WITH_VALUE = frozenset({"-batch", "-r", "-logfile", "-c", "-sd"})


#: {module name: its programs}, where they do not start with the module's name, or where the
#: name is too short for a prefix to say anything (r's would be run, rm, rsync): R and Rscript
#: are what the r module puts on PATH (docs.alliancecan.ca/wiki/R: "module load r", then R or Rscript).
PROGRAMS: Dict[str, Tuple[str, ...]] = {"r": ("R", "Rscript"),
                                        # GROMACS before 5.0 (the gmx programs of 5.0 on keep their names)
                                        "gromacs": ("mdrun", "mdrun_mpi", "mdrun_d", "mdrun_mpi_d", "grompp", "grompp_d")}
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


def _kept_as_written(word: str, text: str) -> bool:
    """``word`` is a KEPT program and every option the line gives it is one each release takes
    (the word after one that takes a value, ``-r "run('a.m')"``, is that value)."""
    known = KEPT.get(word)
    words = shlex_words(text)
    if not known or word not in words:
        return False
    after = words[words.index(word) + 1:]
    options = [w for i, w in enumerate(after) if w.startswith("-") and (i == 0 or after[i - 1] not in WITH_VALUE)]
    return all(option in known[0] for option in options)


def shlex_words(text: str) -> List[str]:
    """The words of a shell line as the shell splits them (quotes kept together), or its
    blank-separated words where it does not parse."""
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


#: commands whose words name folders, never programs (``mkdir gurobipy; cd gurobipy``)
FOLDER_COMMANDS = frozenset(("mkdir", "cd", "pushd", "rmdir"))


def folder_words(text: str) -> FrozenSet[str]:
    """The words of ``text`` that a FOLDER_COMMANDS command names: a folder the script makes or
    enters is not a program, though it may share a module's name."""
    words: List[str] = []
    for line in text.splitlines():
        tokens = re.split(r"\s*(?:;|&&|\|\|?)\s*", line)
        for command in tokens:
            parts = shlex_words(command)
            if parts and parts[0] in FOLDER_COMMANDS:
                words += [word.rstrip("/") for word in parts[1:] if not word.startswith("-")]
    return frozenset(words)


#: ``gmx_mpi mdrun``: the subcommand of a gmx program (GROMACS 5 on), not a program of its own
_GMX_SUBCOMMAND = re.compile(r"(?<![\w./$-])gmx\w*\s+[\w-]+")


def program_moves(text: str, moved: Dict[str, Tuple[str, str, int]], own_build: str = "") -> Tuple[str, List[str], List[str]]:
    """``text`` with each documented rename made, the reasons of those, and a to-do for each
    other program of a moved module that ``text`` names. ``own_build``: a file the job sources
    (``$HOME/gromacs-4.6.7/bin/GMXRC``), which may put the user's own build of the program first
    on PATH: the rename would run the module's instead, so it is a to-do."""
    reasons: List[str] = []
    todos: List[str] = []
    for stem, (was, module, major) in moved.items():
        since, renames, source = RENAMED.get(stem, (0, {}, ""))
        crossed = major >= since > (_major(was.partition("/")[2]) or 0)   # the move crosses the renaming version
        commands = _GMX_SUBCOMMAND.sub(" ", text) if stem == "gromacs" else text   # gmx mdrun: mdrun is gmx's word
        for word in sorted(set(_words(stem).findall(commands)) - folder_words(text)):
            if crossed and word in renames and own_build:
                todos.append(f"{was} became {module}, which runs {renames[word]} in place of {word} ({source}); the job "
                             f"also sources {own_build}, which may put a build of your own first: run {renames[word]} for "
                             f"{module}'s, or rebuild yours for the new cluster and keep {word}")
            elif crossed and word in renames:
                text = re.sub(rf"(?<![\w./$-]){re.escape(word)}(?![\w./])", renames[word], text)
                reasons.append(f"{was} became {module}, which runs {renames[word]} in place of {word} ({source})")
            elif stem == word and _removed(stem, was, module):
                todos.append(_removed_todo(stem, was, module, text))
            elif word not in renames.values() and not _kept_as_written(word, text) and _runs(word, text):
                todos.append(f"{was} became {module}, a new major version: check that {word} still exists there "
                             f"and takes the same words ('module load {module}; which {word}')")
    return text, reasons, todos


def _runs(word: str, text: str) -> bool:
    """Whether ``text`` runs ``word`` as a program, not only names it as an option's value
    (LAMMPS's ``-sf intel`` selects its intel package: no program called intel runs)."""
    from slurmkit.port.bashtree import command_names

    return word in command_names(text)


def _version(module: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", module.partition("/")[2])[:3])


def _removed(stem: str, was: str, module: str) -> bool:
    """Whether the move from ``was`` to ``module`` crosses a version that removed something (REMOVED)."""
    return stem in REMOVED and _version(was) < REMOVED[stem][0] <= _version(module)


def _removed_todo(stem: str, was: str, module: str, text: str) -> str:
    since, what, asked, source = REMOVED[stem]
    found = asked.search(text)
    how = f"the job asks for it ({found.group()})" if found else "a pipeline that still uses it stops at once"
    return (f"{was} became {module}, which has no {what} ({source}): {how}; move the pipeline off it, or load "
            f"a {stem} older than {'.'.join(map(str, since))} if the site still has one ('module spider {stem}')")
