"""Paths into an old software stack that a job names by hand.

Scripts of the StdEnv/2016-2020 days reach into the stack's own folders:
``LD_PRELOAD=/cvmfs/soft.computecanada.ca/easybuild/software/2017/.../openmpi/3.1.2/lib/libmpi.so``,
``cp /cvmfs/restricted.computecanada.ca/easybuild/software/2020/Core/gurobi/9.1.0/setup.py .``.
On a cluster whose stack is StdEnv/2023 those files belong to a stack the job no longer loads
(and may be gone): a library of it mixed with the 2023 modules breaks at run time, not at
submission. Neither port nor check can rewrite such a path (the 2023 layout differs), so each is
a to-do naming the path, its stack year, and what replaces it: the module's ``EBROOT<NAME>``
variable, which Lmod sets to the loaded version's folder, or the module's 2023 version.
"""

from __future__ import annotations

import re
from typing import Any, List, Optional, Sequence, Tuple

from slurmkit.core.records import Record
from slurmkit.sites.profiles import SiteProfile

#: An absolute path into a year's EasyBuild tree of the Alliance stack (public or restricted).
STACK_PATH = re.compile(r"/cvmfs/(?:soft|restricted)\.computecanada\.ca/easybuild/software/(\d{4})(?:\.\d+)?(/[^\s'\"`;|&)(<>]*)?")


class OldPath(Record):
    """``path`` (in ``field``) is in the ``year`` stack; ``module`` the module it belongs to, or ""."""

    field: str
    path: str
    year: str
    module: str


def _module_of(rest: str) -> str:
    """The module a path under a year belongs to: the folder before its first version folder
    (``Core/gurobi/9.1.0/...`` -> gurobi; ``avx512/Compiler/gcc7.3/openmpi/3.1.2/...`` -> openmpi)."""
    parts = [p for p in rest.split("/") if p]
    for before, part in zip(parts, parts[1:]):
        if part[:1].isdigit():
            return before
    return ""


def eb_root(module: str) -> str:
    """The variable Lmod sets to a loaded EasyBuild module's folder: EBROOT and the name in
    capitals, ``-`` as MIN and ``+`` as PLUS (EasyBuild's convert_name: openmpi -> EBROOTOPENMPI)."""
    name = module.upper().replace("-", "MIN").replace("+", "PLUS")
    return "EBROOT" + re.sub(r"[^A-Z0-9_]", "", name)


def in_the_loaded_module(path: OldPath) -> Optional[str]:
    """``path`` as a path under its module's folder, ``$EBROOTOPENMPI/lib/libmpi.so``, where what
    follows the version folder names no version (a file of the 2023 build has another name when
    it carries one: gatk-package-4.0.8.1-local.jar); else None."""
    parts = [p for p in path.path.split("/") if p]
    at = next((i for i, (before, part) in enumerate(zip(parts, parts[1:])) if before == path.module and part[:1].isdigit()), None)
    if at is None:
        return None
    version, rest = parts[at + 1], parts[at + 2:]
    if any(re.search(r"\d+\.\d+", part) or version in part for part in rest):
        return None
    return "/".join(["$" + eb_root(path.module), *rest])


#: where verification's trace puts a loaded module's folder (its EBROOT<NAME>: trace.sh)
TRACED_MODULE_ROOT = "/cvmfs/modules/"


def module_file(path: OldPath, instead: str) -> Tuple[Tuple[str, ...], ...]:
    """What a trace sees change where ``path`` is named as ``instead`` ($EBROOTNAME/rest): the old
    file read no more, one of the module's folder read in its place, and the words that named it
    (verify.Declared's what, subject and, for "path", the module's folder and the rest)."""
    rest = instead.partition("/")[2]
    return (("input", path.path), ("input", f"{TRACED_MODULE_ROOT}{path.module}/*"),
            ("path", path.path, f"{TRACED_MODULE_ROOT}{path.module}/|{rest}"))


def stack_year(profile: SiteProfile) -> Optional[str]:
    """The year of ``profile``'s standard environment (StdEnv/2023 -> 2023), or None."""
    match = re.match(r"StdEnv/(\d{4})", profile.software.stdenv or "")
    return match.group(1) if match else None


def old_stack_paths(profile: SiteProfile, fields: Sequence[Tuple[str, str]]) -> List[OldPath]:
    """Each path of ``fields`` ((field, text)) into a stack older than ``profile``'s own."""
    year = stack_year(profile)
    if year is None:
        return []
    return [OldPath(field, m.group(0), m.group(1), _module_of(m.group(2) or ""))
            for field, text in fields for m in STACK_PATH.finditer(text) if m.group(1) < year]


def spec_fields(spec: Any) -> List[Tuple[str, str]]:
    """(field, text) of a spec (a JobSpec) that a job's shell reads: variables, setup, launch."""
    found = [(f"environment.variables.{name}", str(value)) for name, value in dict(spec.environment.variables or {}).items()]
    found += [(f"environment.setup[{i}]", line) for i, line in enumerate(spec.environment.setup)]
    found += [(f"launch.{key}", str(getattr(spec.launch, key))) for key in ("command", "shell") if getattr(spec.launch, key, None)]
    return found


def advice(path: OldPath, profile: SiteProfile) -> str:
    """What the user must do about ``path`` on ``profile``."""
    stdenv = profile.software.stdenv
    instead = (f"load the {path.module} module and use ${'EBROOT' + re.sub(r'[^A-Z0-9]', '', path.module.upper())} "
               f"(its folder) or its {stack_year(profile)} version" if path.module else
               f"load the module it belongs to and use its EBROOT<NAME> variable, or its {stack_year(profile)} version")
    return f"{path.path} is in the {path.year} software stack, not {profile.name}'s {stdenv}: {instead}"
