"""Science codes a script runs with no module that provides them.

``namd2 +p8 md.namd`` in a script whose module lines are commented out ran the namd2 on the PATH
of the shell it was submitted from (a module loaded there). The job then depends on that shell;
on the new cluster, where nothing loads the module, every run fails with "command not found"
(and a loop around it still ends with exit 0). The programs are known by name, each with the
module families that put it on PATH and the page of the Alliance's wiki that runs it so:
import says so, and port names the module (and version) of the target's stack to load.
"""

from __future__ import annotations

import re
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from slurmkit.port.programs import folder_words
from slurmkit.sites.modulecat import stdenv_builds, version_key
from slurmkit.sites.profiles import SiteProfile

#: {program: (module families that provide it, the major version it belongs to or "", source)}
PROGRAMS: Dict[str, Tuple[Tuple[str, ...], str, str]] = {
    # (then "namd": any other build the older stacks named namd-*, such as namd-mpi, provides them too)
    "namd2": (("namd-multicore", "namd-ucx", "namd-ofi", "namd-verbs", "namd"), "2", "https://docs.alliancecan.ca/wiki/NAMD/en"),
    "namd3": (("namd-multicore", "namd-ucx", "namd-ofi", "namd-verbs", "namd"), "3", "https://docs.alliancecan.ca/wiki/NAMD/en"),
    "gmx": (("gromacs",), "", "https://docs.alliancecan.ca/wiki/GROMACS/en"),
    "gmx_mpi": (("gromacs",), "", "https://docs.alliancecan.ca/wiki/GROMACS/en"),
    "gmx_d": (("gromacs",), "", "https://docs.alliancecan.ca/wiki/GROMACS/en"),
    "gmx_mpi_d": (("gromacs",), "", "https://docs.alliancecan.ca/wiki/GROMACS/en"),
    "lmp": (("lammps-omp", "lammps"), "", "https://docs.alliancecan.ca/wiki/LAMMPS/en"),
    "pw.x": (("quantumespresso",), "", "https://docs.alliancecan.ca/wiki/Quantum_ESPRESSO/en"),
    "ph.x": (("quantumespresso",), "", "https://docs.alliancecan.ca/wiki/Quantum_ESPRESSO/en"),
    "cp2k": (("cp2k",), "", "https://docs.alliancecan.ca/wiki/CP2K/en"),
    "cp2k.popt": (("cp2k",), "", "https://docs.alliancecan.ca/wiki/CP2K/en"),
    "cp2k.psmp": (("cp2k",), "", "https://docs.alliancecan.ca/wiki/CP2K/en"),
}

#: a program of PROGRAMS as a command word (not part of a path, a file name or a variable)
_PROGRAM = re.compile(r"(?<![\w./$-])(" + "|".join(sorted(map(re.escape, PROGRAMS), key=len, reverse=True)) + r")(?![\w.-])")
#: a module line the job's own shell runs (in a block, a function): it may load the program's module
_MODULE_LINE = re.compile(r"\b(?:module|ml)\s+(?:load|add)?\b(.*)")


def unloaded_programs(modules: Sequence[str], texts: Iterable[str]) -> List[str]:
    """The programs of PROGRAMS that ``texts`` (the job's shell lines) run while no module of
    ``modules``, nor a module line among the texts, provides them, in the order first named."""
    texts = list(texts)
    loaded = [m.split("/")[0].lower() for m in modules]
    loaded += [w.split("/")[0].lower() for t in texts for m in _MODULE_LINE.finditer(t) for w in m.group(1).split()]
    found: List[str] = []
    for text in texts:
        for program in _PROGRAM.findall(text):
            families = PROGRAMS[program][0]
            if program not in found and program not in folder_words(text) and not _provided(families, loaded):
                found.append(program)
    return found


def _provided(families: Sequence[str], loaded: Sequence[str]) -> bool:
    """A loaded family is one of ``families`` or a build of one (namd-verbs-smp, gromacs-plumed)."""
    return any(name == family or name.startswith(family + "-") for family in families for name in loaded)


def providing_module(program: str, target: SiteProfile) -> Optional[str]:
    """The newest build of the target's stack that provides ``program`` (of its major version), or None."""
    families, major, _ = PROGRAMS[program]
    builds = stdenv_builds(target.software.stdenv)
    names = list(builds.plain) + list(builds.other) + list(target.software.catalogue)
    for family in families:
        versions = [n.partition("/")[2] for n in names if n.partition("/")[0] == family and n.partition("/")[2].startswith(major)]
        if versions:
            return f"{family}/{max(versions, key=version_key)}"
    return None


def import_note(program: str) -> str:
    """What import says of ``program``, run with no module that provides it."""
    families, _, source = PROGRAMS[program]
    return (f"{program} comes from no module the script loads: it was the one on the PATH of the shell it was submitted "
            f"from (a module that shell loaded, such as {families[0]}); the job needs that module loaded "
            f"(environment.modules) wherever it runs ({source})")


def unloaded_todo(program: str, target: SiteProfile) -> str:
    """The port's to-do for ``program``: the module of the target's stack that provides it."""
    families, _, source = PROGRAMS[program]
    module = providing_module(program, target)
    needs = stdenv_builds(target.software.stdenv).other.get(module or "")
    load = (f"add {module} to environment.modules{f' (after {needs}, which it is built with)' if needs else ''}" if module
            else f"load the {families[0]} module that provides it")
    return (f"environment.modules: {program} comes from no module the job loads, and {target.name}'s shell loads none: "
            f"{load} ({source}), then remove this line")
