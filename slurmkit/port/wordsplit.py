"""Word splitting that a launch line relies on.

bash splits an unquoted ``$DIR`` into words, and drops it where it is empty: ``python p.py $DIR``
with an empty DIR runs ``python p.py``. A spec's launch.command passes each word as one argument
(``"${DIR}"``), which would give the program an empty one, or one with spaces in it where the
script gave several. Where the value may be empty or hold spaces (the script computes it, or
sets it to several words), import keeps the line for bash (launch.shell), as written.
"""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, List

from slurmkit.resolve.reads import BATCH_SET_BY, LOGIN_VARIABLES, PER_PROCESS, SET_BY_SPEC

_NAME = re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")
#: one word bash leaves as it is: not empty, no space, no glob
_ONE_WORD = re.compile(r"[^\s*?\[]+")
#: the script's arguments, which may be empty or several words
_ARGUMENT = re.compile(r"\$(?:[0-9@*#]|\{(?:[0-9]+|[@*#])\})")


def unquoted_names(text: str) -> List[str]:
    """The variables ``text`` (a word as written) expands outside quotes: ``$A`` and ``${A}``,
    not ``"$A"``, ``'$A'`` or ``\\$A``."""
    names: List[str] = []
    quote = ""
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and quote != "'":
            index += 2
            continue
        if quote == "'" and char == "'" or quote == '"' and char == '"':
            quote = ""
        elif not quote and char in "'\"":
            quote = char
        elif not quote and char == "$":
            match = _NAME.match(text, index)
            if match:
                names.append(match.group(1) or match.group(2))
                index = match.end()
                continue
        index += 1
    return names


def may_split(text: str, assigned: FrozenSet[str], values: Dict[str, str]) -> List[str]:
    """The unquoted variables of ``text`` that may be empty or several words: the script sets them
    so (computed, ``DIR=$(sed ...)``; set more than once; set to such text, or to the script's
    arguments, ``IN=$1``), or the word is one variable the script never sets, which comes from the
    shell it was submitted from (``sbatch --export=ALL,scheme="--beam 8"``) and may be empty (no
    word) or several, unless SLURM, the site, a login shell or the job's kind sets it to one word.
    (Where such a variable is part of a word, ``$DATA/train``, the word is never dropped.)"""
    alone = _NAME.fullmatch(text)
    return [name for name in unquoted_names(text) if (name in assigned or alone and not _one_word_by_environment(name))
            and not (_ONE_WORD.fullmatch(values.get(name, "")) and not _ARGUMENT.search(values[name]))]


def set_by_environment(name: str) -> bool:
    """Whether SLURM, the site, a login shell, slurmkit's own script or a distributed kind's
    launcher gives the job ``name`` (a kind's batch-script variables are the caller's to add)."""
    return (name.startswith(("SLURM_", "_sk_")) or bool(_EASYBUILD.fullmatch(name)) or name.endswith("_HOME")
            or name in LOGIN_VARIABLES or name in PER_PROCESS or name in SET_BY_SPEC)


#: what a module of the software stack (EasyBuild-made, loaded by Lmod) sets: EBROOTGCC, EBVERSIONPYTHON,
#: EBDEVELOPENMPI, EBEXTSLISTPYTHON. Another name that starts with EB (EB_ARGS) is the user's.
_EASYBUILD = re.compile(r"EB(?:ROOT|VERSION|DEVEL|EXTSLIST)[A-Z0-9_]+")


def _one_word_by_environment(name: str) -> bool:
    return set_by_environment(name) or name in BATCH_SET_BY
