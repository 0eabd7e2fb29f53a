"""The resolved plan: every decision made, as plain frozen data for the templates to format.

resolve() builds it; render() formats it. Nothing here decides anything, so a template never
needs logic beyond loops and "is this set".
"""

from dataclasses import dataclass
from typing import Optional, Tuple

from . import __version__


@dataclass(frozen=True)
class VenvPlan:
    """Create (or reuse) a virtualenv and install into it."""

    path: str                          # a shell word: $VAR references expand (e.g. $SLURM_TMPDIR/env)
    create: Tuple[str, ...]            # argv that creates it, without the path
    pip_options: Tuple[str, ...]       # e.g. ("--no-index",) where compute nodes have no internet
    requirements: Optional[str] = None
    packages: Tuple[str, ...] = ()
    reuse_existing: bool = False       # a lasting env: create only if missing
    upgrade_pip: bool = False          # the site's wheelhouse has a newer pip (Alliance recipe)


@dataclass(frozen=True)
class ArrayPlan:
    """A sweep: point i of the grid of ``parameters`` for array task i."""

    parameters: Tuple[Tuple[str, Tuple[str, ...]], ...]  # (name, value for each task)
    size: int


@dataclass(frozen=True)
class Plan:
    kind: str
    profile: str
    name: str
    directives: Tuple[Tuple[str, str], ...]       # ("--time", "0-03:00:00") -> #SBATCH --time=0-03:00:00
    environment: Tuple[Tuple[str, str], ...]      # exported literally (quoted)
    modules: Tuple[str, ...]
    launcher: Tuple[str, ...]                     # launch prefix argv (srun ..., mpirun ...)
    command: Tuple[str, ...]                      # the user's argv; $NAME expands, $$ is a $
    venv: Optional[VenvPlan] = None
    array: Optional[ArrayPlan] = None
    module_system: str = "lmod"
    version: str = __version__
