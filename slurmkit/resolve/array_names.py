"""The shell names of an array job's lists, and which parameters the script exports.

A sweep's values are the user's data, so they read as the user's: ``lrs=(0.1 0.01)`` and then
``lr=${lrs[$SLURM_ARRAY_TASK_ID]}``. The list's name must not be one that anything else in the
job sets or reads (another parameter, an environment variable, the runtime's own variables,
SLURM's), or one of the two would silently win; where the plural is taken, a longer name is
tried, and ``_sk_`` (a prefix no parameter may have) ends the search.
"""

import re
from typing import AbstractSet, Iterable, Sequence, Tuple

from slurmkit.resolve.reads import references

#: Prefixes of names that belong to bash, SLURM, slurmkit and its runtime.
_OWNED_PREFIXES = ("SLURM", "BASH", "_sk_", "_SK_")
_ENDS_LIKE_S = re.compile(r"(s|x|z|ch|sh)$", re.I)
_CONSONANT_Y = re.compile(r"[^aeiou_]y$", re.I)


def plural(name: str) -> str:
    """``lr`` -> ``lrs``, ``batch`` -> ``batches``, ``policy`` -> ``policies``, in the name's case."""
    upper = name.isupper()
    if _CONSONANT_Y.search(name):
        word = name[:-1] + "ies"
    elif _ENDS_LIKE_S.search(name):
        word = name + "es"
    else:
        word = name + "s"
    return word.upper() if upper else word


def list_names(names: Sequence[str], taken: AbstractSet[str]) -> Tuple[str, ...]:
    """A bash array name for each parameter: its plural unless that collides with ``taken``,
    a parameter's own name, or a name already chosen."""
    chosen: list = []
    for name in names:
        busy = set(taken) | set(names) | set(chosen)
        free = [c for c in (plural(name), f"{name}_values") if c not in busy and not c.startswith(_OWNED_PREFIXES)]
        chosen.append(free[0] if free else f"_sk_{name}")   # no parameter starts with "_"
    return tuple(chosen)


def exported(names: Sequence[str], command: Iterable[str]) -> Tuple[bool, ...]:
    """For each parameter, whether the script must export it: the batch script expands the
    command's ``$name`` itself and passes the value as an argument, so only a parameter the
    command never names (the program reads it from its environment) needs exporting."""
    named = {ref for word in command for ref in references(word)}
    return tuple(name not in named for name in names)
