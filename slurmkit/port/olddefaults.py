"""The version a bare module name loaded on an old software stack.

``module load gcc/9.3.0 python`` loaded StdEnv/2020's default python, 3.8: a script of that day
that names no version ran it. Ported as a bare ``python``, the job gets the new stack's default
(3.12) with nothing said, and the pinned packages it installs (``pip install arch==4.19``, wheels
up to cp39) are never checked against the new python. So a bare name is read as the version it
loaded then, where the modules show which stack that was, and the port moves it like a pinned one.

A stack is known from its StdEnv, or from the compilers and MPI of its day that came with it
(Standard_software_environments: StdEnv/2020 is GCC 9.3.0, Intel 2020.1, Open MPI 4.0.3).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

#: {module: the old stack it belongs to}: https://docs.alliancecan.ca/wiki/Standard_software_environments/en
STACK_OF: Dict[str, str] = {
    "gcc/9.3.0": "StdEnv/2020", "intel/2020.1.217": "StdEnv/2020", "openmpi/4.0.3": "StdEnv/2020",
}

#: {old stack: {module family: the version a bare name loaded}}. StdEnv/2020's python: the stack's
#: Lmod warned on a bare ``module load python`` "On April 4th 2023, the default version of python
#: will become 3.10. To keep using python 3.8, please load the python/3.8 module explicitly"
#: (https://github.com/ComputeCanada/software-stack-config/commit/aa3b42c56ac40102b566ff3340cb3b84506321c4,
#: lmod/SitePackage.lua): 3.8 for the scripts of the stack's first years.
DEFAULTS: Dict[str, Dict[str, str]] = {
    "StdEnv/2020": {"python": "3.8"},
}


def old_stack(modules: Sequence[str]) -> Optional[str]:
    """The old stack ``modules`` ran under: the StdEnv they name, else the one a module of them came with."""
    named = next((m for m in modules if m.startswith("StdEnv/")), None)
    return named or next((STACK_OF[m] for m in modules if m in STACK_OF), None)


def with_old_defaults(modules: Sequence[str]) -> Tuple[List[str], List[str]]:
    """``modules`` with each bare name of DEFAULTS pinned to the version it loaded on their stack,
    and why, for the port's changed line."""
    stack = old_stack(modules)
    defaults = DEFAULTS.get(stack or "", {})
    pinned, reasons = [], []
    for module in modules:
        version = defaults.get(module.lower()) if "/" not in module else None
        pinned.append(f"{module}/{version}" if version else module)
        if version:
            reasons.append(f"{module} with no version loaded {module}/{version} under {stack}, the stack the job's modules came with")
    return pinned, reasons
