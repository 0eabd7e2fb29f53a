"""Where each task of an array saves its outputs: each in a place of its own, inside the folder the spec names.

An output's ``to`` that names array parameters (``res/$p``) varies by task only if every task
gets its own value there: ``p: [1, 1]``, or a destination that leaves a parameter out of a
grid of two, sends two tasks to one place, where each overwrites the other's files. And a
value that reaches a destination must be a plain name: ``..`` or ``/`` would take the copy
back out of the folder the spec names (the static ``..`` check sees only ``$p``).
"""

import itertools
import re
from typing import Dict, List, Optional, Sequence, Tuple

#: the most tasks whose destinations are compared one by one (a larger grid is checked for
#: values only; limits.py caps arrays anyway).
MAX_COMPARED_TASKS = 100_000

_TASK_VARIABLE = re.compile(r"\$\{?(SLURM_ARRAY_TASK_ID|SLURM_JOB_ID)\b")


def _used(to: str, names: Sequence[str]) -> List[str]:
    return [n for n in names if re.search(r"\$(" + re.escape(n) + r"\b|\{" + re.escape(n) + r"\})", to)]


def _with_values(to: str, values: Dict[str, str]) -> str:
    return re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: values.get(m.group(1), m.group()), to)


def destination_findings(parameters: Sequence[Tuple[str, Sequence[str]]],
                         destinations: Sequence[Tuple[str, str, bool]]) -> List[Tuple[str, str, str]]:
    """(level, field, message) for each destination that array values would make leave its
    folder (error) or that two tasks share (warning). ``destinations`` are ``(field, to,
    per_task)``, ``per_task`` when slurmkit adds the task's own folder (the checkpoint)."""
    names = [name for name, _ in parameters]
    values_of = dict(parameters)
    found = []
    for field, to, per_task in destinations:
        used = _used(to, names)
        for name in used:
            bad = next((v for v in values_of[name] if "/" in v or v in ("", ".", "..")), None)
            if bad is not None:
                found.append(("error", f"array.parameters.{name}",
                              f"the value {bad!r} reaches {field} ({to!r}): a value in a destination is one folder name, "
                              "without '/' and not '.' or '..'; change the value, or keep it out of the destination"))
        if per_task or not used or _TASK_VARIABLE.search(to) or any(f[1].startswith("array.parameters") for f in found):
            continue
        clash = _shared(to, parameters, used)
        if clash:
            first, second, where = clash
            found.append(("warning", field, f"{to!r} is {where!r} for two tasks of the array ({first} and {second}): "
                                            "the second's files overwrite the first's; make each task's destination its own, "
                                            f"e.g. {to.rstrip('/')}/$SLURM_ARRAY_TASK_ID"))
    return found


def _shared(to: str, parameters: Sequence[Tuple[str, Sequence[str]]], used: Sequence[str]) -> Optional[Tuple[str, str, str]]:
    """The first two tasks (as ``p=1``) whose destination is the same, or None."""
    size = 1
    for _, values in parameters:
        size *= len(values)
    if size > MAX_COMPARED_TASKS:
        return None
    names = [name for name, _ in parameters]
    seen: Dict[str, str] = {}
    for point in itertools.product(*(values for _, values in parameters)):
        task = dict(zip(names, point))
        where = _with_values(to, {n: task[n] for n in used})
        described = ", ".join(f"{n}={task[n]}" for n in names)
        if where in seen:
            return seen[where], described, where
        seen[where] = described
    return None
