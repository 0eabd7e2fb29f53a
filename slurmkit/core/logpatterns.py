"""sbatch's log file names (``--output``/``--error``): checked, and filled in for one job.

A spec's ``logs.output``/``logs.error`` is a filename pattern as sbatch(1) takes it ("filename
pattern"): ``%%`` ``%A`` ``%a`` ``%J`` ``%j`` ``%N`` ``%n`` ``%s`` ``%t`` ``%u`` ``%x``, each
with an optional one-digit width that zero-pads a number (``%4a``: ``0007``). The spec reader
refuses any other ``%`` (a typo such as ``%i`` for ``%j`` would name a file nobody looks for)
and the characters that cannot reach sbatch's ``#SBATCH`` parser intact.

slurmkit makes the log's folder before sbatch runs (with a folder that is not there, Slurm 22.05
starts the job and writes no log at all), so the folder part may only hold what is known at
submit time: the job's name (%x) and the user (%u). The job's logs are then found again from
the pattern (``log_file``): ids from the job, ``%N``/``%n``/``%t``/``%s`` (the node and step,
known only on the node) as a glob.
"""

from __future__ import annotations

import glob
import re
from pathlib import PurePosixPath
from typing import Dict, Optional

#: sbatch's replacement symbols (sbatch(1), "filename pattern"), and which are numbers (zero-padded by a width).
SYMBOLS = "%AaJjNnstux"
NUMERIC = "AajJnst"
#: the symbols known when the job is submitted, so allowed in the log's folder (which is made then).
AT_SUBMIT = "ux%"
_SYMBOL = re.compile(r"%(\d?)(.?)", re.S)
#: characters sbatch's #SBATCH parser reads otherwise (\ escapes, quotes) or a file name cannot hold.
_REFUSED = re.compile(r"[\x00-\x1f\x7f\\'\"`]")
#: what the one-line errors say is allowed.
ALLOWED = "sbatch's symbols %% %A %a %J %j %N %n %s %t %u %x, with an optional width digit (%4a)"
#: what sbatch writes for %a in a job that is not an array (NO_VAL - 1), measured on Slurm 22.05.
NOT_AN_ARRAY_TASK = "4294967294"


def pattern_problem(value: str) -> Optional[str]:
    """Why ``value`` cannot be a log file pattern, or None."""
    if not value.strip():
        return "empty: give a file name such as logs/%x-%j.out"
    bad = _REFUSED.search(value)
    if bad:
        return f"holds {bad.group()!r}, which sbatch's #SBATCH parser reads otherwise: use letters, digits, / . _ - and {ALLOWED}"
    if "$" in value or value.startswith("~"):
        return "sbatch expands no variable or ~ in its file names (the job would write to a folder named so): write the path out"
    if value.endswith("/"):
        return "a folder (it ends with '/'): name the file too, such as logs/%x-%j.out"
    for match in _SYMBOL.finditer(value):
        if match.group(2) == "" or match.group(2) not in SYMBOLS:
            return f"'%{match.group(1)}{match.group(2)}' is not a symbol sbatch fills in; allowed: {ALLOWED}"
    folder = folder_part(value)
    late = [f"%{m.group(2)}" for m in _SYMBOL.finditer(folder) if m.group(2) not in AT_SUBMIT]
    if late:
        return (f"its folder holds {', '.join(late)}, which sbatch fills in only when the job starts; slurmkit makes the "
                "folder before it submits (sbatch writes no log into a folder that is not there): keep those in the file name")
    return None


def folder_part(pattern: str) -> str:
    """The pattern's folder: all before its last '/' ('' for a bare file name)."""
    return pattern.rpartition("/")[0]


def per_task(pattern: str) -> bool:
    """Whether each task of an array writes a file of its own: the name holds %a, or %j/%J (a
    task's own job id); %A alone is the array's id, the same for every task."""
    symbols = {m.group(2) for m in _SYMBOL.finditer(pattern)}
    return "a" in symbols or "j" in symbols or "J" in symbols


def fill(pattern: str, values: Dict[str, str], keep_percent: bool = False) -> str:
    """``pattern`` with the symbols in ``values`` replaced (zero-padded where a width is given
    and the symbol is a number); the others stay as written, ``%%`` too when ``keep_percent``."""
    def replace(match: "re.Match[str]") -> str:
        width, symbol = match.group(1), match.group(2)
        if symbol == "%":
            return match.group() if keep_percent else "%"
        if symbol not in values:
            return match.group()
        value = values[symbol]
        return value.zfill(int(width)) if width and symbol in NUMERIC else value
    return _SYMBOL.sub(replace, pattern)


def at_submit(pattern: str, name: str, user: str) -> str:
    """The pattern with what is known when the job is submitted filled in (%x, %u); ``%%`` kept."""
    return fill(pattern, {"x": name, "u": user}, keep_percent=True)


def job_values(job_id: str) -> Dict[str, str]:
    """The symbols a job id fills in: ``123`` (a job) or ``123_4`` (array 123, task 4). A task's
    own id (%j, %J) is not the array's id: it is left for a glob."""
    array_id, _, task = job_id.partition("_")
    if task:
        return {"A": array_id, "a": task}
    return {"A": job_id, "a": NOT_AN_ARRAY_TASK, "j": job_id, "J": job_id}


def log_file(pattern: str, job_id: str) -> str:
    """The file ``pattern`` (as recorded: %x and %u filled in) names for ``job_id``. Symbols
    known only on the node (%N, %n, %s, %t; a task's own %j) are a glob: its newest match, or
    the pattern filled as far as it can be while there is none yet."""
    values = job_values(job_id)
    parts, wild, literal = _SYMBOL.split(pattern), [], []
    for index, part in enumerate(parts):   # text, width, symbol, text, width, symbol, ...
        if index % 3 == 0:
            wild.append(glob.escape(part))
            literal.append(part)
        elif index % 3 == 2:
            text = fill(f"%{parts[index - 1]}{part}", values)
            unknown = part != "%" and part not in values
            wild.append("*" if unknown else glob.escape(text))
            literal.append(text)
    if "*" not in wild:
        return "".join(literal)
    found = glob.glob("".join(wild))
    return max(found, key=_modified) if found else "".join(literal)


def _modified(path: str) -> float:
    import os

    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def absolute(pattern: str, workdir: str) -> str:
    """A relative pattern from the job's working folder (sbatch's rule)."""
    return pattern if pattern.startswith("/") else str(PurePosixPath(workdir) / pattern)
