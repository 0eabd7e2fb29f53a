"""MPI settings made for one cluster's network, which another cluster's network does not have.

Cedar's network is Intel Omni-Path, which MPI reaches through PSM2 (its profile: the openmpi
module there turns UCX off and sets PSM2 variables itself); the 2025 clusters' is InfiniBand,
which has no PSM2. A job that told its MPI to use PSM2 (``OMPI_MCA_mtl=psm2``, ``OMPI_MCA_pml=cm``,
``--mca mtl psm2``, ``FI_PROVIDER=psm2``, ``I_MPI_FABRICS=shm:ofi`` with it) or tuned it
(``PSM2_*``, ``HFI_*``) stops at MPI_Init there, or runs over another path than it says: each
such setting is a to-do of the ported spec, since only the user knows why it was set.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Tuple

from slurmkit.port.modulelines import shell_fields
from slurmkit.sites.profiles import SiteProfile

#: a setting that names Omni-Path's PSM2 (or its host fabric interface), in a variable or an option
_OMNIPATH = re.compile(r"\b(?:PSM2_\w+|HFI_\w+|OMPI_MCA_mtl\s*=\s*['\"]?psm2|OMPI_MCA_pml\s*=\s*['\"]?cm\b|"
                       r"FI_PROVIDER\s*=\s*['\"]?psm2)|--mca\s+mtl\s+psm2|--mca\s+pml\s+cm\b")


def fabric_todos(data: Dict[str, Any], source: SiteProfile, target: SiteProfile) -> List[str]:
    """The to-dos for settings of ``source``'s Omni-Path that a job moving to ``target`` (another
    network) carries, one per field that holds them."""
    if source.launch.interconnect.fabric != "omnipath" or target.launch.interconnect.fabric in (None, "omnipath"):
        return []
    found = [(field, match.group(0)) for field, text in _fields(data) for match in _OMNIPATH.finditer(text)]
    if not found:
        return []
    fields, words = list(dict.fromkeys(f for f, _ in found)), list(dict.fromkeys(w for _, w in found))
    network = (target.launch.interconnect.fabric or "").replace("infiniband", "InfiniBand")
    return [f"{', '.join(fields)}: {', '.join(words)} set MPI up for {source.name}'s Omni-Path, through PSM2, which "
            f"{target.name}'s {network} does not have: an MPI told to use it (mtl psm2, pml cm) fails at MPI_Init, and PSM2's "
            "tuning does nothing; remove them (the site's MPI module chooses the network), then remove this line"]


def _fields(data: Dict[str, Any]) -> List[Tuple[str, str]]:
    """(field, text) of environment.variables (NAME=VALUE), and of the lines modulelines reads:
    environment.setup and the launch."""
    environment = data.get("environment") or {}
    variables = environment.get("variables") or {}
    pairs = variables.items() if isinstance(variables, dict) else [tuple(str(v).split("=", 1)) + ("",) for v in variables]
    found = [(f"environment.variables.{name}", f"{name}={value}") for name, value, *_ in
             (tuple(p) if len(p) > 1 else (p[0], "") for p in pairs)]
    launch = data.get("launch")
    launch = launch if isinstance(launch, dict) else {"command": launch}
    return found + shell_fields([str(line) for line in environment.get("setup") or []], launch.get("shell"), launch.get("command"))
