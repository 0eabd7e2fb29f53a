"""GNU Parallel's command lines as people write them in job scripts, read for kind many-tasks.

The Alliance's GNU Parallel page runs ``parallel --jobs N COMMAND :::: FILE``; scripts also give
``-j 0``, ``-j 50%``, ``-j -1``, ``--jobs procfile`` (a file GNU Parallel reads the number from,
again as it changes), ``-j $SLURM_NTASKS``; several ``:::`` groups (every combination of their
words) and ``:::+`` (linked: the n-th words together); a brace range ``{1..10}`` or ``$(seq 1 10)``
for the words; ``cat FILE | parallel COMMAND``. This module turns each into what the many-tasks
kind runs: tasks at a time on a node (``tasks_per_node``) of ``cpus_per_task`` cores each, and
task lines (one argument, or columns split by a tab), or says why it cannot.
"""

from __future__ import annotations

import itertools
import re
from typing import Dict, List, Optional, Tuple

#: what GNU Parallel reads as "one job per core" (its default, 100%), and what a job script
#: writes for the cores SLURM gave it
ONE_PER_CORE = frozenset(("", "0", "100%", "+0", "-0", "$SLURM_CPUS_PER_TASK", "${SLURM_CPUS_PER_TASK}", "$SLURM_CPUS_ON_NODE",
                          "${SLURM_CPUS_ON_NODE}", "$SLURM_JOB_CPUS_PER_NODE", "${SLURM_JOB_CPUS_PER_NODE}", "$(nproc)", "`nproc`"))
#: the job's task counts, which the spec has already (tasks_per_node)
TASK_COUNTS = frozenset(("$SLURM_NTASKS", "${SLURM_NTASKS}", "$SLURM_NPROCS", "${SLURM_NPROCS}",
                         "$SLURM_NTASKS_PER_NODE", "${SLURM_NTASKS_PER_NODE}"))


class Slots:
    """How many tasks at a time GNU Parallel ran, as the spec's shape: ``tasks`` (None: one per
    core, what the kind does with no tasks_per_node), the note on it, and whether it is a to-do."""

    def __init__(self, tasks: Optional[int], note: str = "", todo: bool = False) -> None:
        self.tasks, self.note, self.todo = tasks, note, todo


def slots(jobs: Optional[str], cpus: int, values: Dict[str, str]) -> Slots:
    """``--jobs`` read against the job's ``cpus`` cores (cpus_per_task, 1 where none is asked)."""
    if jobs is None:
        return Slots(None)
    jobs = values.get(jobs.strip("${}"), jobs) if re.fullmatch(r"\$\{?\w+\}?", jobs) else jobs
    if jobs in ONE_PER_CORE or jobs in TASK_COUNTS:
        said = "--jobs 0 started every task at once; the spec runs one at a time on each core" if jobs == "0" else ""
        return Slots(None if jobs in ONE_PER_CORE else -1, said)
    if jobs.isdigit():
        return Slots(int(jobs))
    share = re.fullmatch(r"(\d+)%", jobs)
    if share:
        return Slots(max(1, cpus * int(share.group(1)) // 100))
    offset = re.fullmatch(r"([+-])(\d+)", jobs)
    if offset:
        return Slots(max(1, cpus + int(offset.group(2)) * (1 if offset.group(1) == "+" else -1)))
    if re.fullmatch(r"[\w./~-]+", jobs):
        return Slots(None, f"GNU Parallel read how many tasks to run at once from the file {jobs} (again as it changed), which "
                           f"import cannot see: the spec runs one a core ({cpus} at a time); set resources.tasks_per_node "
                           "and cpus_per_task to what it held", todo=True)
    return Slots(None, f"--jobs {jobs}: a number bash computes, which import cannot tell: the spec runs one task a core "
                       f"({cpus} at a time); set resources.tasks_per_node and cpus_per_task to it", todo=True)


def shape(count: int, cpus: int) -> Tuple[int, int, str]:
    """(tasks_per_node, cpus_per_task, a note or "") for ``count`` tasks at a time on ``cpus`` cores:
    the cores shared out whole; more tasks than cores run one a core, as many as the cores."""
    if count >= cpus:
        said = f": the script ran {count} at a time on {cpus} cores; the spec runs {cpus}, one a core" if count > cpus else ""
        return cpus, 1, said
    each = cpus // count
    said = "" if cpus % count == 0 else (f": {count} tasks at a time of {each} core{'s' if each > 1 else ''} each; the job "
                                         f"asks {count * each} cores, not {cpus} (the rest were idle)")
    return count, each, said


# ------------------------------------------------------------------------------- input sources

SOURCES = (":::", "::::", ":::+", "::::+")
_RANGE = re.compile(r"\{(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?\}")
_SEQ = re.compile(r"\$\(\s*seq((?:\s+-?\d+){1,3})\s*\)|`\s*seq((?:\s+-?\d+){1,3})\s*`")
#: the most task lines import writes (a file of more is made by a shell line, as written)
MAX_TASKS = 100_000


def groups(rest: List[str]) -> Tuple[List[str], List[Tuple[str, List[str]]]]:
    """The command and the input sources after it: [(":::" or ":::+" or "::::"..., words)]."""
    found: List[Tuple[str, List[str]]] = []
    command: List[str] = []
    for word in rest:
        if word in SOURCES:
            found.append((word, []))
        elif found:
            found[-1][1].append(word)
        else:
            command.append(word)
    return command, found


def expanded(raw: str) -> Optional[List[str]]:
    """The words bash makes of ``raw`` where they are certain: a brace range ``{1..10}`` (``{1..10..2}``),
    ``$(seq [FIRST [STEP]] LAST)``; the word itself where bash changes nothing in it; else None."""
    brace, seq = _RANGE.fullmatch(raw), _SEQ.fullmatch(raw)
    if brace:
        first, last = int(brace.group(1)), int(brace.group(2))
        return _numbers(first, abs(int(brace.group(3) or 1)) * (1 if first <= last else -1), last)
    if seq:
        numbers = [int(n) for n in (seq.group(1) or seq.group(2)).split()]
        if len(numbers) == 2:
            numbers.insert(1, 1)      # seq FIRST LAST: by 1
        return _numbers(*([1, 1] + numbers if len(numbers) == 1 else numbers))
    if re.search(r"[$`*?\[\]{}~]|\\", raw):
        return None
    if len(raw) > 1 and raw[0] == raw[-1] and raw[0] in "'\"":
        return [raw[1:-1]]
    return None if raw[:1] in ("'", '"') else [raw]


def _numbers(first: int, step: int, last: int) -> Optional[List[str]]:
    """seq's and a brace range's numbers from ``first`` to ``last`` by ``step``; None for none or too many."""
    values = range(first, last + (1 if step > 0 else -1), step) if step else range(0)
    return [str(v) for v in values] if 0 < len(values) <= MAX_TASKS else None


def task_lines(sources: List[Tuple[str, List[str]]]) -> Optional[List[List[str]]]:
    """The tasks of ``:::`` groups: every combination of the groups' words, in GNU Parallel's
    order (the last group changes fastest); a ``:::+`` group is linked to the one before (its
    n-th word goes with that group's n-th). None where a group is empty or links groups of unequal length."""
    columns: List[List[List[str]]] = []    # each: a set of linked groups, as rows
    for separator, words in sources:
        if not words:
            return None
        if separator == ":::+" and columns:
            rows = columns[-1]
            if len(rows) != len(words):
                return None
            columns[-1] = [row + [word] for row, word in zip(rows, words)]
        else:
            columns.append([[word] for word in words])
    combined = [sum(parts, []) for parts in itertools.product(*columns)]
    return combined if len(combined) <= MAX_TASKS else None


#: GNU Parallel's replacement strings other than the numbered ones ({1}, {2.}...): with columns
#: ({1} {2}) a task file separated by tabs gives the same words; {} would be the whole line, tab and all
_WHOLE_LINE = re.compile(r"\{(?:\.|/|//|/\.|#|%|)\}")


def reads_whole_line(command: List[str]) -> bool:
    return any(_WHOLE_LINE.search(word) for word in command)
