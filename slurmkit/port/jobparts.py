"""Where the job is in a file that is not one plain batch script.

People keep their jobs in files sbatch would not take as they are: #SBATCH lines and commands
with no ``#!`` line (sbatch refuses it: "This does not look like a batch script"), a notebook of
commands to run by hand with the job script pasted after them, several job scripts one after
the other (each its own ``#!`` line and ``#SBATCH`` block: sbatch would run them all as the first
one's job, ignoring the later blocks), and submit wrappers whose ``sbatch <<EOF`` sits in a bash
function. ``job_part`` finds the one job import reads, and says with notes what it did with the
rest, so that nothing is read as part of a job it was never in, and nothing is dropped unsaid.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

from slurmkit.core.records import Record
from slurmkit.port import bashtree

#: (line, text, outcome, reason): a note about the file, in porting.Note's terms
FileNote = Tuple[int, str, str, str]


class Part(Record):
    """The job script import reads (``body``, as sbatch would read it: its first line ``#!``), the
    number to add to a line of it for the file's line, and the notes on the rest of the file."""
    body: str
    offset: int
    notes: Tuple[FileNote, ...]


def job_part(text: str) -> Optional[Part]:
    """The job of ``text`` where it is not the whole file read as it is; None for a plain script."""
    text = text.replace("\r\n", "\n")
    wrapper = "sbatch" in text and "<<" in text
    if not (wrapper or "\n#!" in text or not text.startswith("#!") and "#SBATCH" in text):
        return None   # a plain script, as most are: not parsed twice (import parses it once itself)
    script = bashtree.parse(text)
    return (_function_heredoc(text, script) if wrapper else None) or _job_in_file(text, script)


# ------------------------------------------------------------------------- job scripts in a file

def _starts(lines: List[str], script: bashtree.Script) -> List[int]:
    """The lines (1-based) where a job script starts: the first, where it is ``#!``, and a later
    ``#!`` line that bash reads as a comment (never one in a heredoc or a string) followed by
    ``#SBATCH`` lines, with comments and blank lines between."""
    starts = [1] if lines[0].startswith("#!") else []   # sbatch's own start, #SBATCH lines or not
    for comment in script.comments:
        if not comment.text.startswith("#!") or comment.line == 1:
            continue
        following = (line.strip() for line in lines[comment.line:])
        first = next((line for line in following if line and not (line.startswith("#") and not line.startswith("#SBATCH"))), "")
        if first.startswith("#SBATCH"):
            starts.append(comment.line)
    return starts


def _commands_in(script: bashtree.Script, first: int, last: int) -> List[bashtree.Statement]:
    return [s for s in script.statements if first <= s.line <= last]


def _job_in_file(text: str, script: bashtree.Script) -> Optional[Part]:
    lines = text.split("\n")
    starts = _starts(lines, script)
    if not starts:
        return _without_shebang(text, script)
    first, later = starts[0], starts[1:]
    if first == 1 and not later:
        return None
    last = later[0] - 1 if later else len(lines)
    while last > first and not lines[last - 1].strip():
        last -= 1
    notes: List[FileNote] = []
    if first > 1:
        notes.append(_before_the_job(script, lines, first))
    if later:
        notes.append((later[0], "\n".join(lines[later[0] - 1:_last_line(lines)]), "to do",
                      f"another job script starts here (its #! line and #SBATCH lines): sbatch would run it as part of the "
                      f"job of line {first}, its #SBATCH lines ignored; import reads lines {first}-{last} as the job: put "
                      f"lines {later[0]}-{_last_line(lines)} in a file of "
                      "their own and import that"))
    return Part("\n".join(lines[first - 1:last]) + "\n", first - 1, tuple(notes))


def _last_line(lines: List[str]) -> int:
    return max((i for i, line in enumerate(lines, 1) if line.strip()), default=len(lines))


def _before_the_job(script: bashtree.Script, lines: List[str], first: int) -> FileNote:
    """The lines above the job script's ``#!`` line: sbatch refuses a file that does not start
    with ``#!``, so commands there were run by hand, never in the job."""
    commands = _commands_in(script, 1, first - 1)
    if not commands:
        return (first, lines[first - 1], "mapped", f"the job script starts at line {first}, its #! line (sbatch needs it "
                                                   "first): the comments above it are not read")
    return (commands[0].line, "\n".join(lines[commands[0].line - 1:first - 1]).rstrip(), "to do",
            f"lines 1-{first - 1} come before the job script's #! line (line {first}), so they were never part of the job "
            "(sbatch refuses a file that does not start with #!): they were run by hand; run them once yourself before "
            "submitting, or put what the job needs of them in environment.setup")


def _without_shebang(text: str, script: bashtree.Script) -> Optional[Part]:
    """#SBATCH lines and commands with no ``#!`` line: read as the bash script it was meant to be."""
    if text.startswith("#!") or not script.directives:
        return None
    commands = [s.line for s in script.statements]
    if commands and min(commands) < script.directives[0].line:
        return None   # commands before the #SBATCH lines: they never were a job's directives (see _starts)
    note = (0, "", "mapped", "the file has no #! line, which sbatch needs first (it refuses the file as it is): read as a bash "
                             "script; the job script slurmkit writes starts with its own")
    return Part("#!/bin/bash\n" + text, -1, (note,))


# ------------------------------------------------------------------------ heredoc in a function

_UNESCAPE = re.compile(r"\\([$`\\])")


def _function_heredoc(text: str, script: bashtree.Script) -> Optional[Part]:
    """A wrapper whose ``sbatch <<EOF`` with #SBATCH lines is in a function, and whose other
    statements only call that function: the here-document is the job, the function's
    arguments its own (as a top-level wrapper's are: porting._import_submitted)."""
    found = [c for c in bashtree.walk(script.statements) if c.name == "sbatch" and c.heredocs
             and c.within[:1] and c.within[0].startswith("function ") and "#SBATCH" in c.heredocs[0].body]
    if len(found) != 1:
        return None
    name = found[0].within[0].split(" ", 1)[1]
    calls = _calls(script, name)
    if calls is None:
        return None
    heredoc = found[0].heredocs[0]
    given = _one_call_arguments(script, calls) if heredoc.expands else None
    body = heredoc.body if given is None else _POSITIONAL.sub(lambda m: _argument(m, given), heredoc.body)
    body = _UNESCAPE.sub(r"\1", body) if heredoc.expands else body
    notes = _function_notes(text.split("\n"), script.functions[name], heredoc, calls, given)
    if body.startswith("#!"):
        return Part(body, heredoc.line, notes)
    return Part("#!/bin/bash\n" + body, heredoc.line - 1, notes)


def _function_notes(lines: List[str], function: bashtree.Function, heredoc: bashtree.Heredoc,
                    calls: List[Tuple[int, bool]], given: Optional[List[str]]) -> Tuple[FileNote, ...]:
    """What was done with the wrapper: its function, its one call, or a to-do for many."""
    name = function.name
    where = ", ".join(str(line) for line, _ in calls) or "nowhere"
    arguments = ("the function's arguments ($1, $2) are the job's: give them with `slurmkit submit SPEC -- ARGS`"
                 if given is None else f"the words of its one call ({' '.join(given) or 'none'}) are put in for $1, $2")
    notes: List[FileNote] = [(function.line, function.text, "mapped",
                              f"this script submits a job from its function {name} (called on line {where}): the "
                              f"here-document it passes to sbatch (lines {heredoc.line + 1}-{heredoc.end_line - 1}) is imported "
                              f"as the job; {arguments}")]
    if given is not None:
        notes.append((calls[0][0], lines[calls[0][0] - 1], "mapped", f"the one call of {name}: its words are put in the job"))
    if len(calls) != 1 or calls[0][1]:
        line = calls[0][0] if calls else function.line
        notes.append((line, lines[line - 1], "to do",
                      f"{name} submits a job each time it is called ({_how_often(calls)}): submit the spec once for each, "
                      "with its arguments (`slurmkit submit SPEC -- ARGS`), or make them an array's parameters"))
    return tuple(notes)


#: the function's arguments as its unquoted here-document reads them (``\$1`` is the job's own text)
_POSITIONAL = re.compile(r"(?<!\\)\$(?:([1-9])|\{([1-9][0-9]*)\}|([@*#]))")


def _one_call_arguments(script: bashtree.Script, calls: List[Tuple[int, bool]]) -> Optional[List[str]]:
    """The words of the function's one call, where it has one and bash expands nothing in them."""
    if len(calls) != 1 or calls[0][1]:
        return None
    command = next(s for s in script.statements if s.line == calls[0][0])
    if not isinstance(command, bashtree.Command) or any(w.expansions or "$" in w.text for w in command.words[1:]):
        return None
    return command.argv[1:]


def _argument(match: "re.Match[str]", given: List[str]) -> str:
    special = match.group(3)
    if special == "#":
        return str(len(given))
    if special:
        return " ".join(given)
    index = int(match.group(1) or match.group(2)) - 1
    return given[index] if index < len(given) else ""


def _calls(script: bashtree.Script, name: str) -> Optional[List[Tuple[int, bool]]]:
    """(line, in a loop) of each call of ``name``; None where the script does anything else
    (then it is more than a wrapper, and import says that it submits a job)."""
    calls = []
    for statement in script.statements:
        if isinstance(statement, bashtree.Function) and statement.name == name:
            continue
        if isinstance(statement, bashtree.Command) and statement.name == name:
            calls.append((statement.line, False))
        elif isinstance(statement, bashtree.Block) and statement.kind in bashtree.LOOPS \
                and all(c.name == name for c in bashtree.walk(statement.body)):
            calls.append((statement.line, True))
        else:
            return None
    return calls


def _how_often(calls: List[Tuple[int, bool]]) -> str:
    if not calls:
        return "it is never called here"
    loops = [line for line, looped in calls if looped]
    return (f"{len(calls)} calls" if not loops else f"in the loop on line {loops[0]}") + ", each a job of its own"
