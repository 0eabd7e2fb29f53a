"""What a job spec may not ask even when each value has the right shape.

spec.py calls these while it reads a spec, so that each problem is one SpecError at its key:
a time that SLURM reads as minutes:seconds, a command too long (split in linear time below
the limit), an extra directive that says again, or otherwise, what a spec key says, and stage
outputs that land on one another. The limits that need the cluster (node counts, array sizes)
are the resolver's (limits.py).
"""

import re
from typing import Dict, List, Optional, Sequence, Tuple

from slurmkit.core.sbatch_options import REQUEUE_OPTIONS, SHORT_NAMES, SPEC_FIELDS
from slurmkit.core.shellwords import REFERENCE

#: the longest launch.command, in characters: the most Linux passes as one argument
#: (MAX_ARG_STRLEN); a longer one belongs in a script or a file the program reads.
MAX_COMMAND_CHARS = 128 * 1024
#: the shortest checkpoint interval: a shorter one copies without pause and slows the job.
MIN_CHECKPOINT_S = 60

# ------------------------------------------------------------------------------- time spelling

_MINUTES_SECONDS = r"(\d+):(\d+)"


def minutes_seconds_problem(value) -> Optional[str]:
    """Why ``value`` must not be a duration: SLURM reads ``M:S`` as minutes and seconds, and
    a user who writes ``25:00`` means 25 hours more often than not; None for other spellings."""
    match = re.fullmatch(_MINUTES_SECONDS, value.strip()) if isinstance(value, str) and ":" in value else None
    if not match:
        return None
    first, second = int(match.group(1)), int(match.group(2))
    hours = f"'{first}:{second:02d}:00'" + (f" or '{first // 24}-{first % 24:02d}:{second:02d}:00'" if first >= 24 else "")
    short = f"{first}m" + (f"{second}s" if second else "")
    return (f"{value!r} is minutes:seconds to SLURM ({short}), rarely what is meant: write {hours} for "
            f"{first}h{f'{second}m' if second else ''}, or '{short}' for {short}")


# ------------------------------------------------------------------------------ the command

# shlex.split's POSIX rules, as one regular expression: shlex builds each word a character at a
# time (quadratic: a 1 MB word took 16 s); this reads the same words in one linear pass. (The
# patterns are compiled on first use, through re's cache: most commands are short, and shlex
# splits them sooner than this pattern compiles.)
_PART = r"""[^ \t\r\n'"\\]+|'[^']*'|"[^"\\]*(?:\\[\s\S][^"\\]*)*"|\\[\s\S]|[ \t\r\n]+|(?P<bad>['"\\])"""
_ESCAPED_IN_DOUBLE_QUOTES = r'\\(["\\])'
#: below this many characters shlex's quadratic cost is smaller than compiling _PART.
_SHORT_COMMAND = 2048


def split_command(text: str) -> Tuple[str, ...]:
    """``shlex.split(text)``, in time linear in its length; raises ValueError as shlex does (an
    unclosed quote, a trailing backslash)."""
    if len(text) <= _SHORT_COMMAND:
        import shlex

        return tuple(shlex.split(text))
    return split_linear(text)


def split_linear(text: str) -> Tuple[str, ...]:
    """split_command's own reading, for any length."""
    words: List[str] = []
    word: List[str] = []      # the parts of the word being read
    in_word = False
    for match in re.finditer(_PART, text):
        part = match.group()
        if match.group("bad"):
            raise ValueError(_unclosed(text, match.start()))
        first = part[0]
        if first in " \t\r\n":
            if in_word:
                words.append("".join(word))
                word, in_word = [], False
            continue
        in_word = True
        if first == "'":
            word.append(part[1:-1])
        elif first == '"':
            word.append(re.sub(_ESCAPED_IN_DOUBLE_QUOTES, r"\1", part[1:-1]))
        elif first == "\\":
            word.append(part[1])
        else:
            word.append(part)
    if in_word:
        words.append("".join(word))
    return tuple(words)


def split_command_words(text: str) -> Tuple[str, ...]:
    """The words of a launch.command line, as a shell reads its quotes: split_command's words,
    each ``$`` the shell keeps as written (inside single quotes, or escaped: ``\\$``) doubled
    to ``$$``, the spec's literal ``$``, so that only an unquoted or double-quoted ``$NAME``
    expands, as in bash. Raises ValueError as shlex does."""
    if "$" not in text:
        return split_command(text)   # nothing to tell apart: shlex's words are the same
    words: List[str] = []
    word: List[str] = []
    in_word = False
    for match in re.finditer(_PART, text):
        part = match.group()
        if match.group("bad"):
            raise ValueError(_unclosed(text, match.start()))
        if part[0] in " \t\r\n":
            if in_word:
                words.append("".join(word))
                word, in_word = [], False
            continue
        in_word = True
        piece = _shell_part(part)
        if word and (piece[:1].isalnum() or piece[:1] == "_"):
            word[-1] = _braced_tail(word[-1])   # '$X'b' is $X then b, as bash reads it: ${X}b
        word.append(piece)
    if in_word:
        words.append("".join(word))
    return tuple(words)


def _braced_tail(text: str) -> str:
    """``text`` with a ``$NAME`` that ends it written ``${NAME}``, so that a name character
    joined after it (from the next quoted piece) does not lengthen the name."""
    last = None
    for last in REFERENCE.finditer(text):
        pass
    if last is None or last.end() != len(text) or last.group() == "$$" or last.group().startswith("${"):
        return text
    return text[:last.start()] + "${" + last.group()[1:] + "}"


def _shell_part(part: str) -> str:
    """One quoted, escaped or bare piece of a word, with the $ the shell keeps literal doubled."""
    if part[0] == "'":
        return part[1:-1].replace("$", "$$")
    if part[0] == '"':   # bash's escapes in double quotes: \" \\ \$ \` (shlex knows only the first two)
        return re.sub(r'\\(["\\$`])', lambda m: "$$" if m.group(1) == "$" else m.group(1), part[1:-1])
    if part[0] == "\\":
        return "$$" if part[1] == "$" else part[1]
    return part


def doubled_dollar_in_single_quotes(text: str) -> Optional[str]:
    """The first single-quoted piece of ``text`` that holds ``$$``: there every ``$`` stays as
    written, so ``$$`` would reach the program as two, where the spec's escape meant one."""
    for match in re.finditer(_PART, text):
        if match.group()[0] == "'" and "$$" in match.group():
            return match.group()
    return None


_DOUBLE_QUOTED_REST = r'[^"\\]*(?:\\[\s\S][^"\\]*)*'


def _unclosed(text: str, start: int) -> str:
    """shlex's message for the quote or backslash at ``start`` that nothing closes: a backslash
    at the very end (alone, or last inside an open double quote) escapes nothing."""
    if text[start] == "\\":
        return "No escaped character"
    if text[start] == '"':
        rest = re.compile(_DOUBLE_QUOTED_REST).match(text, start + 1)
        assert rest is not None, "the pattern matches the empty string, so anywhere"
        if rest.end() < len(text):
            return "No escaped character"
    return "No closing quotation"


def command_length_problem(length: int) -> Optional[str]:
    if length <= MAX_COMMAND_CHARS:
        return None
    return (f"{length} characters, more than slurmkit's limit of {MAX_COMMAND_CHARS} (the most Linux passes as one "
            f"argument); put a long command in a script, or its data in a file the program reads")


# ------------------------------------------------------------------------- extra directives

#: sbatch options a spec key already decides (long names, sbatch's aliases included), and the key.
SPEC_OPTIONS: Dict[str, str] = SPEC_FIELDS   # sbatch_options.py holds the table
#: options that contradict one slurmkit always writes (sbatch refuses --mem-per-gpu beside --mem
#: or --mem-per-cpu, --cpus-per-gpu beside --cpus-per-task), or that ask again, another way, for
#: the tasks and GPUs spec keys decide: the spec key to use.
CLASHING_OPTIONS: Dict[str, Tuple[str, str]] = {
    "mem-per-gpu": ("resources.mem or resources.mem_per_cpu", "--mem or --mem-per-cpu"),
    "cpus-per-gpu": ("resources.cpus_per_task", "--cpus-per-task"),
    "ntasks-per-gpu": ("resources.tasks_per_node", "--ntasks-per-node"),
    "gpus-per-socket": ("resources.gpus", "the GPU request"),
}
#: options slurmkit sets itself, and why they cannot be given again.
SLURMKIT_OPTIONS: Dict[str, str] = {
    "comment": "slurmkit's submission token lives there (it finds a job whose id was lost by it)",
    "parsable": "it is an option of the sbatch command line, not a directive",
    "test-only": "use slurmkit submit --dry-run",
    "chdir": "slurmkit runs the job in the spec's folder ($SLURM_SUBMIT_DIR), which its relative paths are from; "
             "cd in the command instead",
}
#: options checked by value or by what the job asks (directive_problem, resolve): named here so
#: that their abbreviations (``--gre`` for --gres) are known too.
CHECKED_OPTIONS = ("gres", "signal", *REQUEUE_OPTIONS)
#: sbatch's one-letter options (sbatch_options.py).
SHORT_OPTIONS = SHORT_NAMES


def long_name(option: str) -> Optional[str]:
    """The long option ``option`` means: itself, its long form, or the owned option it
    abbreviates (sbatch, through getopt_long, takes any unique prefix: ``--partit`` is --partition)."""
    if not option.startswith("--"):
        return SHORT_OPTIONS.get(option[1:2])
    name = option[2:]
    owned = [*SPEC_OPTIONS, *SLURMKIT_OPTIONS, *CLASHING_OPTIONS, *CHECKED_OPTIONS]
    if name in owned:
        return name
    longer = [full for full in owned if full.startswith(name)] if len(name) >= 2 else []
    return min(longer, key=len) if longer else None


def directive_problem(directive: str, seen: Dict[str, int]) -> Optional[str]:
    """Why ``directive`` (``--mem=4G``) cannot be an extra directive, or None; ``seen`` maps
    each option already given to its index, to catch one given twice."""
    option, _, value = directive.partition("=")
    name = long_name(option)
    if name == "gres" and value.split(":")[0] == "gpu":
        return (f"{directive!r} asks for GPUs, which resources.gpus says; "
                "use resources.gpus instead (slurmkit writes the GPU request from it)")
    if name in SPEC_OPTIONS:
        return f"{directive!r} sets what {SPEC_OPTIONS[name]} says; use {SPEC_OPTIONS[name]} instead (slurmkit writes --{name} from it)"
    if name in SLURMKIT_OPTIONS:
        return f"{directive!r} cannot be given: {SLURMKIT_OPTIONS[name]}"
    if name in CLASHING_OPTIONS:
        key, written = CLASHING_OPTIONS[name]
        return f"{directive!r} contradicts {written}, which slurmkit writes from {key}; use {key} instead"
    if option in seen:
        return f"{option} is given twice (first at extra_directives[{seen[option]}]); keep one"
    return None


# ---------------------------------------------------------------------------------- outputs

def output_collision(destinations: Sequence[Tuple[tuple, str]]) -> Optional[Tuple[tuple, str]]:
    """The first ``(key path, message)`` where two outputs (the checkpoint among them) land on
    one destination, or one inside another: their files would overwrite each other, and a
    checkpoint replaces its destination whole. ``destinations`` are ``(key path of to, to)``."""
    from slurmkit.core.userpaths import comparable  # ~/o and $HOME/o, $PWD/res and res are one place

    seen: List[Tuple[tuple, str]] = []   # (key path, comparable destination) of the outputs before
    for path, to in destinations:
        where = comparable(to)
        for other_path, other in seen:
            name = _owner(other_path)
            if where == other:
                return path, f"{to!r} is also where {name} goes: their files would overwrite each other; give each its own destination"
            if _inside(where, other) or _inside(other, where):
                return path, (f"{to!r} and {name}'s destination are one inside the other: one copy back would overwrite "
                              f"or replace the other's files; give them separate folders")
        seen.append((path, where))
    return None


def _owner(path: tuple) -> str:
    """``stage.outputs[1]`` or ``stage.checkpoint``: whose ``to`` a key path is."""
    return "stage.checkpoint" if path[1] == "checkpoint" else f"stage.outputs[{path[2]}]"


def _inside(path: str, folder: str) -> bool:
    return folder in (".", "/") or path.startswith(folder.rstrip("/") + "/")


# ------------------------------------------------------------------ YAML 1.1's number forms

#: the most any count of a spec may be (nodes, tasks, CPUs, GPUs, throttle, links): no cluster
#: has a million of anything a job counts; the cluster's own limits are the resolver's (limits.py).
MAX_COUNT = 1_000_000
#: launch.batch_size counts samples, which may be many more.
MAX_BATCH = 10 ** 9

_PLAIN_INTEGER = re.compile(r"[-+]?(0|[1-9][0-9]*)")
_RADIX = {"0x": "hexadecimal", "0b": "binary", "0o": "octal"}


def number_spelling_problem(spelling: str, value, what: str) -> Optional[str]:
    """Why a number spelled ``spelling`` in YAML (read as ``value``) must be written otherwise
    for a ``what`` ("count", "size" or "time"), or None. YAML 1.1 reads ``010`` as octal 8,
    ``0b11`` as 3, ``0x10`` as 16 and ``1_000`` as 1000, where sbatch (and YAML 1.2) read
    ``010`` as 10 and the others not at all: a value that silently changes is refused, with the
    spelling that says what was meant."""
    text = spelling.strip()
    if isinstance(value, bool) or not isinstance(value, (int, float)) or _PLAIN_INTEGER.fullmatch(text):
        return None
    body = text.lstrip("+-")
    radix = _RADIX.get(body[:2].lower())
    if radix:
        reading, meant = radix, value
    elif isinstance(value, int) and body[:1] == "0" and len(body) > 1:
        reading, meant = "octal", int(text.replace("_", ""), 10)
    elif "_" in text:
        reading, meant = "a number with '_' between digits", value
    else:
        return None  # a plain decimal float (1.5): the unit's own rules judge it
    told = f"{value}" + (f", not {meant}" if meant != value else "")
    return f"{text!r} is {reading} to YAML 1.1 ({told}), which sbatch does not read so: write {_spelled(meant, what)}"


def _spelled(meant, what: str) -> str:
    if what == "time" and isinstance(meant, int) and meant >= 0:
        return f"{meant} (minutes) or '{meant // 60}:{meant % 60:02d}:00'"
    if what == "size":
        return f"{meant} (MiB) or a size with its unit, such as {meant}G"
    return f"{meant}"
