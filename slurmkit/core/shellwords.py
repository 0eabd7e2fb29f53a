"""Where a line of shell stops being one command: its unquoted operators (``>``, ``|``, ``&&``, ``;``).

Both the spec reader (a ``launch.command`` with ``>`` in it is refused, since the program would get
``>`` as an argument) and ``import`` (the launch line of a script may be a pipeline) need to know
this, and neither ``shlex.split`` (which drops the quotes) nor ``shlex``'s punctuation mode (which
splits ``--x="a>b"``) tells it.
"""

import re
from typing import Iterable, List, Sequence, Tuple

#: A variable reference in a launch command (``$NAME``, ``${NAME}``) and ``$$``, a literal ``$``:
#: what render.shell_word expands and reads.py reads.
REFERENCE = re.compile(r"\$\$|\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*")

#: a reference to the script's arguments, the words sbatch passes after its name: ``$1``..``$9``,
#: ``${10}``, ``${1:-x}``, ``$@``, ``$*``, ``$#``, ``${@:2}`` (``$0`` is the script's own name).
POSITIONAL = re.compile(r"(?<!\$)\$(?:[1-9@*#]|\{(?:[1-9][0-9]*|[@*]|#)(?:[-:+=?#%/^,][^}]*)?\})")


#: ``$0``, ``${0}``: the script's own name (the copy SLURM runs), which a job resubmitting itself reads
SCRIPT_NAME = re.compile(r"(?<!\$)\$(?:0|\{0\})")


def reads_script_name(text: str) -> bool:
    """Whether bash ``text`` reads ``$0``: a line run by ``bash -c`` has its own $0 (``bash``)
    unless the script's is passed to it (``sbatch "$0"`` would submit bash)."""
    return SCRIPT_NAME.search(text) is not None


def reads_arguments(text: str) -> bool:
    """Whether bash ``text`` may read the script's arguments (a literal ``'$1'`` counts too:
    passing them where they are not read changes nothing)."""
    return POSITIONAL.search(text) is not None


OPERATOR_CHARS = "|&;<>"
_OPERATOR = re.compile(r"\d*(>>|>&|<&|>\||&>>|&>|>|<<<|<<|<)\d*-?|\|\||\||&&|;;|;|&")


def split_at_operators(line: str) -> Tuple[str, List[str]]:
    """``("python t.py", [">", ...])``: the text before the first unquoted operator, and the
    operators found (in order). Text inside quotes, ``$(...)``, ``$((...))`` and after a
    backslash is not an operator."""
    found = _operators(line)
    head = line if not found else line[:found[0][0]]
    return head.rstrip(), [token for _, token in found]


def commands(line: str) -> List[str]:
    """The pieces of ``line`` between its unquoted operators (``a && b | c`` -> a, b, c)."""
    pieces, start = [], 0
    for position, token in _operators(line):
        pieces.append(line[start:position].strip())
        start = position + len(token)
    pieces.append(line[start:].strip())
    return [piece for piece in pieces if piece]


def _operators(line: str) -> List[Tuple[int, str]]:
    quote, depth, index, operators = "", 0, 0, []
    while index < len(line):
        char = line[index]
        if char == "\\" and quote != "'":
            index += 2
            continue
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif line.startswith("$(", index):
            depth += 1
            index += 2
            continue
        elif char == ")" and depth:
            depth -= 1
        elif char in OPERATOR_CHARS and not depth:
            start = index
            while char in "<>" and start > 0 and line[start - 1].isdigit() and (start == 1 or line[start - 2].isspace()):
                start -= 1  # the 2 of 2>&1
            match = _OPERATOR.match(line, start)
            if match is None:
                start, match = index, _OPERATOR.match(line, index)
            token = match.group() if match else char
            operators.append((start, token))
            index = start + len(token)
            continue
        index += 1
    return operators


def raw_words(text: str) -> List[str]:
    """The words of ``text`` split at unquoted blanks, each still spelled as written (quotes,
    ``$`` and all), so that a piece of a line can be put back together exactly."""
    words, current, quote, depth, index = [], "", "", 0, 0
    while index < len(text):
        char = text[index]
        if char == "\\" and quote != "'":
            current += text[index:index + 2]
            index += 2
            continue
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif text.startswith("$(", index):
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        elif char.isspace() and not depth:
            if current:
                words.append(current)
            current = ""
            index += 1
            continue
        current += char
        index += 1
    if current:
        words.append(current)
    return words


#: where an assignment starts: a line (indented in a block), after ; & | ( { or a case pattern's ),
#: after then/do/else, or after a declaration and its options
_ASSIGNED = re.compile(r"(?:^\s*|[;&|({)]\s*|\b(?:then|do|else)\s+|\b(?:export|declare|local|readonly|typeset)\s+(?:-\w+\s+)*)"
                       r"([A-Za-z_][A-Za-z0-9_]*)\+?=", re.M)


#: builtins that set the variables they name: ``printf -v NAME``, ``read [-r] A B``, ``mapfile NAME``
_SET_BY_BUILTIN = re.compile(r"(?:^|[;&|({!]|\b(?:then|do|else|while|until|if))\s*(?:[A-Za-z_]\w*=\S*\s+)*"
                             r"(?:printf\s+-v\s*([A-Za-z_]\w*)|(readarray|mapfile|read)\b([^;&|<>\n]*))", re.M)
#: the options of read, and of mapfile (readarray), that take a value
_BUILTIN_VALUES = {"read": frozenset("dinNptu"), "mapfile": frozenset("dnOsuCc"), "readarray": frozenset("dnOsuCc")}


def assigned_names(lines) -> set:
    """The variable names shell lines assign (``X=...``, ``export X=...``, ``a; Y=...``, and
    indented inside a kept block: ``case $1 in --data) data_path=$2 ;; esac``), or set with a
    builtin (``printf -v IDX '%03d' "$N"``, ``read -r A B < f``, ``mapfile -t L < f``): after
    environment.setup they are set, and exported, where the launch expands them."""
    names = {match.group(1) for line in lines for match in _ASSIGNED.finditer(line)}
    for line in lines:
        for match in _SET_BY_BUILTIN.finditer(line):
            names.update([match.group(1)] if match.group(1) else _read_names(match.group(2), match.group(3).split()))
    return names


#: a variable a word expands: ``$NAME``, ``${NAME}``, ``${NAME:-x}``, ``${#NAME}``
_NAMED = re.compile(r"\$\{?#?([A-Za-z_][A-Za-z0-9_]*)")


def launch_exports(setup: Sequence[str], launch_texts: Iterable[str]) -> Tuple[str, ...]:
    """The names the setup lines assign that a launch.shell line reads: where the setup lines
    export only what they export (environment.allexport: false), these are exported after them
    all the same, since that line runs in a bash of its own, which sees only the environment,
    where the old script expanded them in its own shell."""
    read = {name for text in launch_texts for name in _NAMED.findall(text)}
    return tuple(sorted(assigned_names(setup) & read))


def _read_names(builtin: str, words: List[str]) -> List[str]:
    """The names ``read``/``mapfile`` words set, past their options (``-p PROMPT``, ``-d ,``)."""
    names, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = len(word) == 2 and word[1] in _BUILTIN_VALUES[builtin]   # -p PROMPT; -pPROMPT holds it
        elif re.fullmatch(r"[A-Za-z_]\w*", word):
            names.append(word)
    return names


#: a word that leaves the command word after it: keywords, grouping, and launchers that run it as is
_BEFORE_COMMAND = frozenset(("do", "then", "else", "elif", "if", "while", "until", "!", "{", "(", "time", "nohup", "env",
                             "exec", "command", "nice", "stdbuf"))
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
#: xargs's option for how many commands run at once: -P N, -PN, --max-procs=N, --max-procs N
_XARGS_PROCS = re.compile(r"-P(.*)|--max-procs(?:=(.*))?")
#: GNU Parallel's options for how many jobs run at once (its default: one per core)
_PARALLEL_JOBS = re.compile(r"-j(.*)|-P(.*)|--jobs(?:=(.*))?|--max-procs(?:=(.*))?")


def concurrent_starts(text: str) -> str:
    """How bash ``text`` starts several programs that run at the same time ("a command run in
    the background with &", "xargs -P", "GNU Parallel"), or "" when it runs one at a time.
    A threaded job that does so must not pin every program's threads to the same cores."""
    found = _operators(text)
    if any(token == "&" and (index == 0 or found[index - 1] != (position - 1, "|"))   # |& pipes stderr too
           for index, (position, token) in enumerate(found)):
        return "a command run in the background with &"
    for piece in commands(text.replace("\n", ";")):
        words = [word.strip("'\"") for word in raw_words(piece)]
        while words and (words[0] in _BEFORE_COMMAND or _ASSIGNMENT.match(words[0])):
            words.pop(0)
        program = words[0].rsplit("/", 1)[-1] if words else ""
        if program == "xargs" and _runs_several(words[1:], _XARGS_PROCS, default=False):
            return "xargs -P"
        if program == "parallel" and _runs_several(words[1:], _PARALLEL_JOBS, default=True):
            return "GNU Parallel"
    return ""


def _runs_several(options: List[str], count_option: "re.Pattern", default: bool) -> bool:
    """Whether a program's ``options`` ask for more than one run at a time (a count other than 1,
    a variable or a percentage); ``default`` when they name no count."""
    for index, word in enumerate(options):
        match = count_option.fullmatch(word)
        if match is None:
            continue
        given = next((group for group in match.groups() if group), None)
        if given is None:
            given = options[index + 1] if index + 1 < len(options) else ""
        return given.strip("'\"") not in ("1", "")
    return default
