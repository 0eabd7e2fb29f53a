"""The options a job gives an sbatch it runs itself: ``sbatch --gres=gpu:t4:1 next.sh`` at the end
of a stage, ``job=$(sbatch --parsable -p gpu x.sh)``, or a workflow manager's submit string
(``snakemake --cluster "sbatch --gres=gpu:p100:{resources.gpus}"``).

Options on sbatch's command line override the #SBATCH lines of the script it submits, so porting
that script does not move them: a GPU type the new cluster lacks makes sbatch refuse every job it
is asked for, and a partition, node feature, QOS, reservation, node name, cluster or RAC account
of the old cluster is unknown or wrong on the new one. Each line that gives one is a to-do of the
ported spec, naming its field, the options, and what the new cluster has instead.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from slurmkit.core.sbatch_options import SHORT_NAMES, full_long_name
from slurmkit.core.shellwords import raw_words, split_at_operators
from slurmkit.port.modulelines import shell_fields

#: an sbatch the job runs: the word as a command, after ``$(``, or opening a quoted submit string
_SBATCH = re.compile(r"(?:^|(?<=[\s;&|(`\"']))(?:[\w./-]*/)?sbatch(?=\s)")
#: sbatch's options that take no value (sbatch(1)), long and one-letter
_FLAGS = frozenset(("parsable", "wait", "hold", "requeue", "no-requeue", "test-only", "quiet", "verbose", "contiguous",
                    "overcommit", "oversubscribe", "spread-job", "use-min-nodes", "ignore-pbs", "no-kill", "help", "usage",
                    "version", "exclusive", "get-user-env", "kill-on-invalid-dep", "H", "W", "Q", "v", "O", "s", "h", "V", "k"))
#: the one-letter options sbatch_options does not name
_MORE_SHORT = {"M": "clusters"}
#: options whose value names something of one cluster only
_SITE_BOUND = {"partition": "partition", "constraint": "node feature", "qos": "QOS", "reservation": "reservation",
               "nodelist": "node names", "exclude": "node names", "clusters": "cluster"}
#: options whose value may name a GPU type: --gres=gpu:TYPE:N, --gpus*=TYPE:N
_GPU_OPTIONS = ("gres", "gpus", "gpus-per-node", "gpus-per-task", "gpus-per-socket")


def submitted_option_todos(data: Dict[str, Any], target: str, gpu_advice: Callable[[str], Optional[str]],
                           bound_account: Callable[[str], bool]) -> List[str]:
    """One to-do per line of the spec's shell (environment.setup, launch.shell, launch.command)
    that runs sbatch with options a job moving to ``target`` must change. ``gpu_advice``: why
    a GPU type does not do on ``target`` and what does, None where it does; ``bound_account``:
    whether an account is one cluster's (a RAC award)."""
    environment = data.get("environment") or {}
    launch = data.get("launch")
    launch = launch if isinstance(launch, dict) else {"command": launch}
    todos = []
    for field, text in shell_fields([str(line) for line in environment.get("setup") or []], launch.get("shell"), launch.get("command")):
        problems = [p for words in _sbatch_lines(text) for p in _problems(_options(words), target, gpu_advice, bound_account)]
        if problems:
            todos.append(f"{field}: the sbatch it runs is given {'; '.join(dict.fromkeys(problems))}. Options on sbatch's command "
                         "line override the #SBATCH lines of the script it submits, so porting that script does not change them: "
                         "change them on this line, then remove this line")
    return todos


def _sbatch_lines(text: str) -> Iterator[List[str]]:
    """The words after each sbatch of ``text``, to the end of its command: of the quoted string
    or ``$(...)`` it opens, else at the first unquoted operator or line end."""
    text = "\n".join("" if line.lstrip().startswith("#") else line for line in text.split("\n"))  # (a comment runs nothing)
    for found in _SBATCH.finditer(text):
        opener = text[found.start() - 1] if found.start() else ""
        rest = text[found.end():]
        if opener and opener in "\"'":
            rest = rest.split(opener, 1)[0]
        else:
            rest = split_at_operators(rest.split("\n", 1)[0])[0]
            if opener == "(":
                rest = rest.split(")", 1)[0]
        yield [word.replace('"', "").replace("'", "") for word in raw_words(rest)]


def _options(words: Sequence[str]) -> Iterator[Tuple[str, str]]:
    """(long name, value) of each option before the script's name."""
    index = 0
    while index < len(words):
        word = words[index]
        if word.startswith("--"):
            name, equals, value = word[2:].partition("=")
            name = full_long_name(name)
        elif re.match(r"-[A-Za-z]", word):
            name, equals, value = SHORT_NAMES.get(word[1], _MORE_SHORT.get(word[1], word[1])), "", word[2:]
            equals = "=" if value else ""
        else:
            return
        if not equals and name not in _FLAGS and index + 1 < len(words) and not words[index + 1].startswith("-"):
            index += 1
            value = words[index]
        yield name, value
        index += 1


def _problems(options: Iterator[Tuple[str, str]], target: str, gpu_advice: Callable[[str], Optional[str]],
              bound_account: Callable[[str], bool]) -> Iterator[str]:
    for name, value in options:
        if not value:
            continue
        if name in _GPU_OPTIONS:
            gpu_type = _gpu_type(name, value)
            advice = gpu_advice(gpu_type) if gpu_type else None
            if advice:
                yield f"--{name}={value}: {advice}"
        elif name in _SITE_BOUND:
            yield f"--{name}={value}, a {_SITE_BOUND[name]} of the old cluster, which {target} may not have"
        elif name == "account" and bound_account(value):
            yield f"--account={value}, a RAC award, which is for the old cluster only"


def _gpu_type(name: str, value: str) -> str:
    """The GPU type a --gres or --gpus* value names ("" for a count alone or another resource)."""
    if name == "gres":
        match = re.match(r"gpu:([A-Za-z][\w.-]*)", value)
    else:
        match = re.match(r"([A-Za-z][\w.-]*):", value)
    return match.group(1) if match else ""
