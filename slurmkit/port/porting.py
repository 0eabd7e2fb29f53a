"""Existing sbatch scripts into job specs (``slurmkit import``).

Users of the retired clusters arrive with scripts written by hand. ``import_script`` reads the
script as bash does (bashtree.py: its statements, the job's program found by what it is, its
traps and the functions they call, the lines bash refuses), then the ``#SBATCH`` directives in
every spelling sbatch accepts, the ``module load`` lines, a
virtualenv recipe, staging to ``$SLURM_TMPDIR``, hand-made distributed set-ups and the launch
line (its launcher's options read with their arity, see launch_options.py). Every line of the
script ends in one of four places, each with a note: mapped onto a spec field, dropped because
slurmkit does it itself, kept as written in ``environment.setup`` (slurmkit has no concept for
it), or left for the user ("to do"), with the reason. Nothing is lost without a note, and a
"to do" stays in the spec file, where ``slurmkit check`` finds it.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from collections import Counter
from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from slurmkit.core import launch_options
from slurmkit.core.archives import TAR_SUFFIXES
from slurmkit.core.kinds import DEFAULT_KIND, DISTRIBUTED_KINDS, KINDS, ONE, Kind, first_kind
from slurmkit.core.launchers import MPI_MODULES
from slurmkit.core.logpatterns import pattern_problem
from slurmkit.core.records import Record
from slurmkit.core.sanity import directive_problem
from slurmkit.core.sbatch_options import DEPENDENCY_TYPES, PORT_HINTS, REQUEUE_OPTIONS, SHORT_NAMES, full_long_name
from slurmkit.core.shellwords import assigned_names, raw_words, reads_arguments, reads_script_name, split_at_operators
from slurmkit.core.todos import TODO_PREFIX
from slurmkit.core.units import format_duration, parse_duration
from slurmkit.core.variables import typo_note
from slurmkit.core.yamlfile import MAX_DIGITS
from slurmkit.port import accelerate_import, bashtree, jobparts, parallelforms, trapsave, wordsplit, workdir
from slurmkit.port.sciencecodes import import_note as science_import_note
from slurmkit.port.sciencecodes import unloaded_programs
from slurmkit.resolve.framework_kinds import requeue_lead
from slurmkit.spec.spec import NODE_MEMORY

#: short sbatch options -> long names (-D is --chdir, read as the long form is)
SHORT = {f"-{letter}": name for letter, name in SHORT_NAMES.items()}
#: long options that take no value
FLAGS = {"exclusive", "requeue", "no-requeue", "hold", "overcommit", "contiguous"}
#: options slurmkit sets itself, and why they are dropped
DROPPED = {"signal": "slurmkit asks for USR1 itself when the spec has stage outputs",
           "export": "jobs get the submitting environment, as sbatch's default",
           "partition": "the Alliance clusters choose the partition from the request; do not name one"}
#: options slurmkit writes from the spec: a value import cannot read must not pass through beside its own
OWN_OPTIONS = PORT_HINTS
DERIVED_VARIABLES = {"OMP_NUM_THREADS", "MKL_NUM_THREADS"}
_NO_SSH = "srun starts one GNU Parallel per node, not SSH"
#: GNU Parallel's options that the many-tasks kind sets itself, or replaces, and why.
PARALLEL_REPLACED = {"--joblog": "a joblog per node in <name>.joblog/, resumed with --resume-failed",
                     "--resume": "resumes with --resume-failed", "--resume-failed": "resumes with --resume-failed",
                     "--sshloginfile": _NO_SSH, "--slf": _NO_SSH, "-S": _NO_SSH, "--sshlogin": _NO_SSH, "--sshdelay": "no SSH",
                     "--workdir": "tasks start in the spec's folder", "--wd": "tasks start in the spec's folder",
                     "--env": "tasks inherit the job's environment"}
#: variables of a hand-made rendezvous, which the distributed kinds set themselves
RENDEZVOUS_VARIABLES = {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK", "NODE_RANK", "TF_CONFIG"}
#: commands that only print, kept as they are
INFORMATIONAL = ("echo", "printf", "date", "hostname", "nvidia-smi", "env", "printenv", "pwd", "ls", "which", "lscpu",
                 "free", "df", "uname", "sleep", "module list", "ml list")
CONDA_NOTE = ("the Alliance does not support conda (docs.alliancecan.ca/wiki/Anaconda/en): list the environment's "
              "packages (conda env export --from-history) and give them as environment.venv.packages or requirements")
STANDARD_SHELL_OPTIONS = re.compile(r"^set\s+(-[euo]+|-o\s+(errexit|nounset|pipefail)|\+[x])(\s+(pipefail|-[euo]+))*\s*$")

OUTCOMES = ("mapped", "dropped", "kept", "to do", "note")


class Note(Record):
    line: int
    text: str
    outcome: str        # one of OUTCOMES
    reason: str = ""


class Imported(Record):
    spec: Dict
    notes: Tuple[Note, ...]
    files: Tuple[Tuple[str, str], ...] = ()   # (name, text) of files the spec names, written beside it (a task file)

    @property
    def unmapped(self) -> Tuple[Note, ...]:
        """The notes the user must act on."""
        return tuple(n for n in self.notes if n.outcome == "to do")


class _Builder:
    def __init__(self) -> None:
        self.spec: Dict = {"resources": {}}
        self.notes: List[Note] = []
        self.text = ""               # the script as read
        self.ntasks: Optional[int] = None
        self.errexit = False         # the script stops at a failing command (set -e, bash -e)
        self.torchrun_procs: Optional[str] = None   # torchrun's --nproc_per_node, as written
        self.torchrun_under_srun = False
        self.tee_free: Optional[Tuple[int, str, str]] = None   # (line, `tee FILE`, the command without it) of a launcher's line
        self.submitted_words: Set[str] = set()   # variables the script never sets, alone as a launch word (wordsplit.py)
        self.files: List[Tuple[str, str]] = []   # (name, text) of files written beside the spec
        self.task_words: Optional[List[str]] = None   # GNU Parallel's words after :::, a task each
        self.task_columns = 1                         # columns of each (several ::: groups), split by a tab
        self.ntasks_only = False     # tasks_per_node came from --ntasks: SLURM_NTASKS_PER_NODE was unset
        self.gpus_total: Optional[str] = None
        self.gpus_per_task: Optional[str] = None
        self.mem_per_gpu: Optional[Tuple[int, str, str]] = None   # (line, text, value) of --mem-per-gpu
        self.cpus_per_gpu: Optional[Tuple[int, str, str]] = None  # (line, text, value) of --cpus-per-gpu
        self.chdir = ""              # --chdir's folder: the job started there (setup's first line cds to it)
        self.tasks_per_gpu: Optional[int] = None    # --ntasks-per-gpu: tasks per node once the GPUs are known
        self.setup: List[str] = []
        self.rendezvous: List[Tuple[int, str, str]] = []   # (line, text, variable) of hand-made rendezvous lines
        self.signal: Optional[Tuple[int, str, str, str]] = None   # (line, text, directive, lead) of the script's --signal=USR1@N
        self.requeue_lines: List[Tuple[int, str, str]] = []       # (line, text, directive): --requeue, --no-requeue, --open-mode
        self.traps: Dict[str, Tuple[int, str]] = {}          # a copy-back trap's action -> (its line, its text)
        self.copy_backs: Dict[str, List[Dict]] = {}          # a function such a trap calls -> the stage.outputs it copies
        self.values: Dict[str, str] = {}                     # the script's variables of a certain value (bashtree.known_values)
        self.save_values: Dict[str, str] = {}                # and those a copy-back trap reads ($PWD...: trapsave.values_at_save)
        self.made: FrozenSet[str] = frozenset()              # the folders the script makes (mkdir)
        self.unsaved_usr1: Optional[int] = None              # the line of a USR1 copy-back trap left to do
        self.saving_functions: Set[str] = set()              # copy-back functions that became stage.outputs
        self.assigned: FrozenSet[str] = frozenset()          # every name the script sets
        self.in_order: FrozenSet[str] = frozenset()          # names set twice, or read before set (_set_in_order)
        self.tree: Dict[int, Tuple[bashtree.Statement, ...]] = {}   # each unit's statements, by its first line
        self.printed: Dict[int, List[str]] = {}             # line -> the variables it reads only to print them
        self.directives: List[Tuple[int, str]] = []   # the #SBATCH lines sbatch reads, all known before any is mapped
        self.comments: Dict[int, str] = {}                   # a comment by its line
        self.program: Optional[bashtree.Program] = None      # the job's program as bash reads the script
        self.launcher_name: Optional[str] = None
        self.module_use = False
        self.line = 0                # the line of the body being read (a venv made after a cd into $SLURM_TMPDIR)
        self.parallel_jobs: Optional[str] = None    # GNU Parallel's --jobs, for the many-tasks shape
        self.parallel_slots: Optional[int] = None   # the tasks it ran at a time (None: one a core; parallelforms.slots)
        self.parallel_at: Tuple[int, str] = (0, "")  # (line, text) of its line, for the notes on its shape
        self.launch_as_written: Optional[str] = None    # the launch line without its launcher, as a shell line
        self.per_task_shell: Optional[Tuple[int, str, List[str]]] = None   # a launcher's line with a shell tail
        self.accelerate: Optional[accelerate_import.AccelerateLine] = None   # an `accelerate launch` line's counts
        self.venv_in_setup = False   # a virtualenv or pip line was kept as written: later pip lines follow it, in order
        self.pip_lines = 0           # the script's pip lines that install packages (not pip itself)
        self.venv_made = False       # the script makes a virtualenv itself (virtualenv, python -m venv)
        self.pypi_from = ""          # the cluster, where its compute nodes reach PyPI (a pip line without --no-index used it)

    def note(self, line: int, text: str, outcome: str, reason: str = "") -> None:
        self.notes.append(Note(line, text, outcome, reason))

    def section(self, name: str) -> Dict:
        return self.spec.setdefault(name, {})

    def keep(self, number: int, text: str, reason: str = "run as written before the program (environment.setup)") -> None:
        self.setup.append(text)
        self.note(number, text, "kept", reason)


def _without_runtime_run(text: str) -> str:
    """A script slurmkit rendered starts its payload with ``slurmkit_run COMMAND`` (a function of
    its runtime library): read as COMMAND, on the same line, so that its launcher is seen."""
    import re

    return re.sub(r"^slurmkit_run (?=\S)", "", text, flags=re.M)


def import_script(text: str, name: Optional[str] = None, profile: Optional[str] = None) -> Imported:
    """Read an sbatch script; return the spec (as a mapping for job.yaml) and a note a line. A
    script that only submits a here-document (``sbatch <<EOT``) is read for that document."""
    text = _without_runtime_run(text)
    submitted = _submitted_heredoc(text)
    if submitted is not None:
        return _import_submitted(text, submitted, name, profile)
    part = jobparts.job_part(text)
    if part is not None:
        return _import_part(part, name, profile)
    build = _Builder()
    build.text = text
    build.pypi_from = _compute_nodes_reach_pypi(profile)
    script = bashtree.parse(text)
    for number, variable in script.printed:
        build.printed.setdefault(number, []).append(variable)
    units = _units(text, script, build)
    first_body = next((i for i, (_, unit) in enumerate(units) if not unit.startswith("#SBATCH")), len(units))
    build.directives = units[:first_body]
    for number, unit in units[:first_body]:
        _directive_line(build, number, unit[len("#SBATCH"):])
    _overridden_directives(build, units[:first_body])
    body = units[first_body:]
    unread = _not_bash(build, script, body, text)
    build.program = bashtree.main_program(script)
    _broken_commands(build, script)
    launch_at = _launch_unit(build, script, body, unread)
    together = _background_start(build, body, launch_at)
    together = _work_start(build, body, launch_at, unread) if launch_at is not None and together == launch_at else together
    _collect_traps(build, script)
    build.in_order = _set_in_order(script)
    build.errexit = _sets_errexit(script, text)
    build.pip_lines = sum(_installs_packages(c.argv) for c in bashtree.walk(script.statements))
    for index, (number, unit) in enumerate(body):
        if index not in unread:
            _read_unit(build, body, index, launch_at, together)
    if launch_at is None:
        build.note(0, "", "to do", "no command to run was found; set launch.command")
        build.spec["launch"] = {"command": "true"}
    _arrays_into_launch(build)
    _shell_options_into_launch(build)
    _modules_after_runs(build)
    _arguments(build, script, text)
    _conda_anywhere(build, text)
    _distributed_launch_kept(build, script)
    _finish(build, name, profile)
    _as_plain_bash(build, script, text)
    _validated(build)
    return _with_submit_todos(Imported(build.spec, tuple(sorted(build.notes, key=lambda n: n.line)), tuple(build.files)), script,
                              bool(build.directives))


def _read_unit(build: _Builder, body: List[Tuple[int, str]], index: int, launch_at: Optional[int], together: int) -> None:
    """One unit of the script's body, by where it stands: before the launch (setup), the launch
    (with the units ``together`` names from: background starts, the program's earlier runs), after it."""
    number, unit = body[index]
    if unit.startswith("#SBATCH"):
        build.note(number, unit, "dropped", "sbatch reads #SBATCH lines only above the first command and ignores this "
                                            "one, so the job ran without it; import ignores it too (move it up to use it)")
    elif launch_at is not None and together <= index < launch_at:
        return    # started in the background beside the program, or its earlier runs: part of its launch
    elif index == launch_at and together < index and _all_background(build, body[index][0]):
        _background_launch(build, body[together:index + 1])
    elif index == launch_at and together < index:
        _work_launch(build, body[together:index + 1])
    elif index == launch_at:
        _launch_line(build, number, unit)
    elif launch_at is not None and index > launch_at:
        _after_launch(build, number, unit)
    else:
        _body_unit(build, number, unit)


# --------------------------------------------------------------------------- submit wrappers

#: ``sbatch [options] <<EOT`` ... ``EOT``: a script that submits its job as a here-document.
SUBMIT_HEREDOC = re.compile(r"^[ \t]*sbatch\b[^\n]*?<<-?[ \t]*(['\"]?)(\w+)\1[^\n]*\n(.*?\n)?[ \t]*\2[ \t]*$", re.M | re.S)


class _Submitted(Record):
    """A submit wrapper's here-document, as the job reads it (_submitted_heredoc)."""
    first: int                  # the sbatch line
    last: int                   # the delimiter's line
    body: str
    moved: Tuple[int, ...] = ()  # the wrapper's lines of assignments, now the body's first commands
    moved_at: int = 0            # the body's line (1-based) the first of them is


def _submitted_heredoc(text: str) -> Optional[_Submitted]:
    """The here-document of a script whose only command is ``sbatch <<EOT`` with #SBATCH lines
    in it, or that only assigns variables before it (``PASSWORD=$1``): None otherwise. In an
    unquoted document the wrapper's shell expands ``$1`` (its own arguments, which the spec
    keeps as the job's) and the variables it assigned, and turns ``\\$`` into ``$``: those
    assignments become the job's first commands, after its #SBATCH lines, so that the job's
    shell expands the same words to the same values."""
    match = SUBMIT_HEREDOC.search(text)
    if match is None or "#SBATCH" not in (match.group(3) or ""):
        return None
    if not _wrapper_reports(text[match.end():]):   # (`if [ $? -ne 0 ]; then echo failed; exit 1; fi` after it)
        return None
    moved = _wrapper_assignments(text[:match.start()])
    if moved is None or (moved and match.group(1)):   # a quoted document: the wrapper's variables never reached it
        return None
    first = text[:match.start()].count("\n") + 1
    body = match.group(3) or ""
    last = first + body.count("\n") + 1
    if not match.group(1):
        body = re.sub(r"\\([$`\\])", r"\1", body)
    if not moved:
        return _Submitted(first, last, body)
    lines = body.split("\n")
    at = next((i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")), len(lines))
    wrapper = text.split("\n")
    lines[at:at] = [wrapper[number - 1] for number in moved]
    return _Submitted(first, last, "\n".join(lines), moved, at + 1)


def _wrapper_assignments(before: str) -> Optional[Tuple[int, ...]]:
    """The line numbers of a wrapper's commands before its ``sbatch <<EOT`` that the job takes
    over: each a plain assignment (``NAME=$1``), a ``shift`` of the arguments, or a ``mkdir`` on a
    line of its own (the job, started in the folder sbatch ran in, makes the same folder); a line that only prints
    (``echo "submitting $RUN"``) is the wrapper's own, left out. None where any is something
    else: a ``cd`` (it moves where sbatch runs, so the job's log too), a build, a test."""
    script = bashtree.parse(before)
    if script.errors:
        return None
    numbers = []
    for statement in script.statements:
        if statement.line != statement.end_line:
            return None
        if _wrapper_reports(statement.text):
            continue
        commands = list(bashtree.walk([statement]))
        if not isinstance(statement, bashtree.Command) and commands[0].name == "mkdir" and _wrapper_reports(
                "\n".join(c.text for c in commands[1:])):   # mkdir -p logs || { echo "cannot"; exit 1; }
            numbers.append(statement.line)
            continue
        if not isinstance(statement, bashtree.Command) or statement.redirects or \
                not (statement.prefix and not statement.words or statement.name == "mkdir" or _shifts(statement)):
            return None
        numbers.append(statement.line)
    return tuple(numbers) if len(set(numbers)) == len(numbers) else None


def _shifts(command: bashtree.Command) -> bool:
    """``shift`` or ``shift N``: the wrapper's arguments, which are the job's, move as they did
    (``PASSWORD=$1; shift``, then the document reads ``$1``)."""
    return command.name == "shift" and (len(command.argv) == 1 or (len(command.argv) == 2 and command.argv[1].isdigit()))


#: what a wrapper runs around sbatch only to tell its user how it went
_REPORTS = ("echo", "printf", "exit", "[", "test", "true", ":")


def _wrapper_reports(text: str) -> bool:
    """Whether bash ``text`` (a wrapper's lines around its sbatch) only prints, tests and exits:
    ``echo "submitting $RUN"``, ``if [ $? -ne 0 ]; then echo failed; exit 1; fi``; no file written."""
    script = bashtree.parse(text)
    return not script.errors and not _writes_a_file(text) and all(c.name in _REPORTS for c in bashtree.walk(script.statements))


def submitted_script(text: str) -> str:
    """The job script ``text`` stands for: the here-document a submit wrapper passes to sbatch
    (what import reads as the job, so what verification runs as the old script), else ``text``."""
    submitted = _submitted_heredoc(text)
    if submitted is None:
        part = jobparts.job_part(text)
        return text if part is None else part.body
    body = submitted.body
    return body if body.startswith("#!") else "#!/bin/bash\n" + body


def _import_submitted(text: str, submitted: _Submitted, name: Optional[str], profile: Optional[str]) -> Imported:
    """The here-document a submit wrapper passes to sbatch, imported as the job: its notes name
    the wrapper's lines, and one note says what was done."""
    first, last, body = submitted.first, submitted.last, submitted.body
    shebang = body.startswith("#!")
    inner = import_script(body if shebang else "#!/bin/bash\n" + body, name, profile)
    added = 0 if shebang else 1
    notes = tuple(n._replace(line=_wrapper_line(submitted, n.line - added, first)) if n.line else n for n in inner.notes)
    unit = "\n".join(text.splitlines()[first - 1:last])
    said = (f"this script submits a job: the here-document it passes to sbatch (lines {first + 1}-{last - 1}) is imported "
            "as the job; the script's own arguments ($1, $2) are the job's: give them with `slurmkit submit SPEC -- ARGS`")
    if submitted.moved:
        said += (f"; its assignments before sbatch (line{'s' if len(submitted.moved) > 1 else ''} "
                 f"{', '.join(map(str, submitted.moved))}) run first in the job, which expands the document's words as it did")
    note = Note(first, unit, "mapped", said)
    return inner._replace(notes=tuple(sorted(notes + (note,), key=lambda n: n.line)))


def _wrapper_line(submitted: _Submitted, line: int, first: int) -> int:
    """The wrapper's line of the body's ``line`` (1-based, as the here-document reads)."""
    moved, at = submitted.moved, submitted.moved_at
    if not moved or line < at:
        return line + first
    if line < at + len(moved):
        return moved[line - at]
    return line - len(moved) + first


def _import_part(part: jobparts.Part, name: Optional[str], profile: Optional[str]) -> Imported:
    """The one job of a file that is not one plain batch script (jobparts.py), imported as a
    script of its own: its notes name the file's lines, with the notes on the rest of the file."""
    inner = import_script(part.body, name, profile)
    notes = tuple(n._replace(line=n.line + part.offset) if n.line else n for n in inner.notes)
    notes += tuple(Note(*note) for note in part.notes)
    return inner._replace(notes=tuple(sorted(notes, key=lambda n: n.line)))


def _with_submit_todos(imported: Imported, script: Any, is_a_job: bool) -> Imported:
    """A script that runs sbatch submits another job, which is the one to import (``sbatch
    other.sh``, or a here-document import could not read as the whole script): a to-do each."""
    launch = imported.spec.get("launch", {})
    has_work = is_a_job and not str(launch.get("command") or launch.get("shell") or "true").startswith(("sbatch", "true"))
    todos = tuple(Note(c.line, c.text, "to do", _submit_todo(c, has_work))
                  for c in _with_substituted(bashtree.walk(script.statements)) if c.name == "sbatch" and not _resubmits_itself(c))
    return imported._replace(notes=tuple(sorted(imported.notes + todos, key=lambda n: n.line))) if todos else imported


def _with_substituted(commands: Iterable[bashtree.Command]) -> Iterator[bashtree.Command]:
    """``commands`` and those of the ``$(...)`` in their words (``job=$(sbatch --parsable x.sh)``),
    each on its command's line."""
    for command in commands:
        yield command
        for inner in _substitutions(command.text):
            for found in bashtree.walk(bashtree.parse(inner).statements):
                yield found._replace(line=command.line)


def _substitutions(text: str) -> List[str]:
    """The text of each ``$(...)`` of ``text`` (not ``$((...))``), nested parentheses and all."""
    found, start = [], text.find("$(")
    while start != -1:
        if text.startswith("$((", start):
            start = text.find("$(", start + 3)
            continue
        depth, index = 0, start + 1
        while index < len(text):
            depth += {"(": 1, ")": -1}.get(text[index], 0)
            if depth == 0:
                break
            index += 1
        found.append(text[start + 2:index])
        start = text.find("$(", index)
    return found


def _submit_todo(command: bashtree.Command, has_work: bool) -> str:
    """What to do about an ``sbatch`` the script runs: a job script (#SBATCH lines, a program)
    that also submits the next one (``sbatch --dependency=afterok:$SLURM_JOB_ID stage2.sh``)
    needs that script ported too; a wrapper, or a job that only submits, is not the real job:
    its submitted one is."""
    submitted = "the here-document" if command.heredocs else _submitted_file(command.argv[1:]) or "its standard input"
    if has_work:
        return f"this job also submits {submitted}: import and port that script too, so that the job it submits runs on the new cluster"
    return f"this script submits a job: import the job script it submits ({submitted}), not this one"


def _submitted_file(words: Sequence[str]) -> str:
    """The script among sbatch's words: the first that is no option nor the value of a short one (``-d afterok:1``)."""
    for index, word in enumerate(words):
        if not word.startswith("-") and not (index and re.fullmatch(r"-[A-Za-z]", words[index - 1])):
            return word
    return ""


def _resubmits_itself(command: bashtree.Command) -> bool:
    """``sbatch "$0"``: a chain of jobs, each submitting the script again; the launch line gets
    the script's $0 (resolve's passes_arguments), so the rendered script is the one submitted,
    which is what the chain needs."""
    return any(reads_script_name(w) for w in command.argv[1:])


# ------------------------------------------------------------------------------------ lines

#: the largest script import reads (an sbatch script is a few KiB), and the longest line it
#: parses as shell words (shlex is quadratic in a word's length; a longer line is kept as written).
MAX_SCRIPT_BYTES = 256 << 10
MAX_PARSED_LINE = 8 << 10
#: the largest heredoc import looks into (the per-node virtualenv one is a few lines).
MAX_HEREDOC_LINES = 200


def _units(text: str, script: bashtree.Script, build: _Builder) -> List[Tuple[int, str]]:
    """The script as (first line number, text) units, as bash reads it (``script``): a command
    with its continued lines and multi-line strings, a heredoc, a block and a function each one
    unit, statements that share a line (``f() { ...; }; trap f USR1``) one unit together, each
    ``#SBATCH`` line one. ``build.tree`` keeps each unit's statements, by its first line."""
    lines = [line.rstrip("\r") for line in text.replace("\r\n", "\n").split("\n")]
    groups: List[List] = []    # [first line, last line, statements]
    for statement in script.statements:
        if groups and statement.line <= groups[-1][1]:
            groups[-1][1] = max(groups[-1][1], statement.end_line)
            groups[-1][2].append(statement)
        else:
            groups.append([statement.line, statement.end_line, [statement]])
    covered = {n for first, last, _ in groups for n in range(first, last + 1)}
    units = [(first, _unit_text(lines[first - 1:last], statements)) for first, last, statements in groups]
    build.tree = {first: tuple(statements) for first, _, statements in groups}
    build.comments = {comment.line: comment.text for comment in script.comments}
    # what the grammar left out (text bash refuses; _not_bash notes it), and the #SBATCH lines, line by line
    units += [(number, line.strip()) for number, line in enumerate(lines, 1) if number not in covered and line.strip()
              and (not line.strip().startswith("#") or line.strip().startswith("#SBATCH"))]
    return sorted(units)


def _unit_text(lines: List[str], statements: List[bashtree.Statement]) -> str:
    """A unit's lines as import keeps them: a command's continued lines joined into one, the
    lines of a block (or of a string that spans lines) as written."""
    single = len(statements) == 1 and not isinstance(statements[0], (bashtree.Block, bashtree.Function)) and \
        not any(c.heredocs for c in bashtree.walk(statements))
    text = lines[0].strip()
    for line in lines[1:]:
        if single and text.endswith("\\"):
            text = text[:-1].rstrip() + " " + line.strip()
        else:
            text += "\n" + (line if single else line.rstrip())
    return text[:-1].rstrip() if single and text.endswith("\\") else text   # continued into nothing


def _not_bash(build: _Builder, script: bashtree.Script, body: List[Tuple[int, str]], text: str) -> Set[int]:
    """Where bash cannot read the script, it stops, and nothing from there on ran: one to-do that
    names the line, over every line from its unit on; the indexes of those units, which nothing
    reads further (what the grammar made of them is a guess)."""
    if not script.errors:
        return set()
    number = script.errors[0][0]
    start = max((i for i, (first, _) in enumerate(body) if first <= number), default=0)
    first = body[start][0] if body else number
    lines = text.replace("\r\n", "\n").split("\n")
    build.note(first, "\n".join(lines[first - 1:]).rstrip(), "to do",
               f"bash cannot read the script from line {number} on ({script.refusal or 'bash -n refuses it'}): the job "
               "stopped there, so nothing from here on ran; correct the script and import it again")
    return set(range(start, len(body)))


def _unit_words(build: _Builder, number: int, unit: str) -> List[str]:
    """The words of a unit that is one simple command as bash reads them (``VAR=x`` prefixes
    first, as sbatch scripts' readers expect); the first line's words (shlex) otherwise."""
    command = _single_command(build, number)
    if command is None or len(unit.split("\n", 1)[0]) > MAX_PARSED_LINE:
        return _words(unit)
    return [f"{a.name}={a.value.value}" for a in command.prefix] + command.argv


def _single_command(build: _Builder, number: int) -> Optional[bashtree.Command]:
    """The unit's one simple command, or None (a pipeline, a list, a block, several statements)."""
    statements = build.tree.get(number, ())
    return statements[0] if len(statements) == 1 and isinstance(statements[0], bashtree.Command) else None


def _words(unit: str) -> List[str]:
    line = unit.split("\n", 1)[0]
    if len(line) > MAX_PARSED_LINE:
        return []   # shlex is quadratic in a word's length: a line this long is not read as a command
    try:
        return shlex.split(line, comments=True)
    except ValueError:
        return []


def _background_start(build: _Builder, body: List[Tuple[int, str]], launch_at: Optional[int]) -> int:
    """The first of the units started in the background (``prog &``, ``(prog) &``) right before
    a program that is itself started in the background: they run side by side, and the ``wait``
    after them waits for all of them, so they are one launch. Left in setup, they would be the
    batch shell's children, which the launch's ``wait`` does not wait for: the job would end
    when the last one ends, and SLURM would kill the others."""
    if launch_at is None:
        return 0
    waited = launch_at + 1 < len(body) and _words(body[launch_at + 1][1])[:1] == ["wait"]
    if not _all_background(build, body[launch_at][0]) and not waited:
        return launch_at
    start, first = launch_at, launch_at
    while start > 0 and not body[start - 1][1].startswith("#SBATCH") and (
            _all_background(build, body[start - 1][0]) or _BACKGROUND_PID.match(body[start - 1][1])):
        start -= 1
        first = start if _all_background(build, body[start][0]) else first
    return first


#: ``wpid=$!``: the pid of what the line before started in the background, kept for a wait or kill
_BACKGROUND_PID = re.compile(r"^\s*[A-Za-z_]\w*=\$!\s*$")


def _all_background(build: _Builder, number: int) -> bool:
    statements = build.tree.get(number, ())
    return bool(statements) and all(getattr(s, "background", False) for s in statements)


def _background_launch(build: _Builder, units: List[Tuple[int, str]]) -> None:
    """Programs started in the background side by side: launch.shell runs them all, in order,
    so that the ``wait`` after them (part of the launch too) waits for every one."""
    build.spec["launch"] = {"shell": "\n".join(_array_names(build, unit) for _, unit in units)}
    build.launch_as_written = build.spec["launch"]["shell"]   # a line after it joins it (_run_after)
    for number, unit in units:
        build.note(number, unit, "mapped", "started in the background beside the program: launch.shell runs them all, "
                   "and its wait waits for every one")


#: commands of a set-up step: the program's earlier runs are looked for after the last of them
_SETS_UP = frozenset(("module", "ml", "source", ".", "export", "conda", "virtualenv", "pip", "pip3", "trap", "set"))


def _work_start(build: _Builder, body: List[Tuple[int, str]], launch_at: int, unread: Set[int]) -> int:
    """The first unit of the job's main work: earlier runs of the program's own command (a
    training loop of ``python train.py`` before a last ``python plot.py``; ``./sim`` run for
    several inputs) are the job as much as its last run is, so the launch runs from the first
    of them to the end, and the payload's handling (the time-limit save, traps) covers them all.
    Only plain units count, back to the last set-up step; a program started by a launcher is
    its launch alone."""
    program = build.program.command if build.program is not None else None
    if program is None or _has_command(build, body[launch_at][0], _SETS_UP | _LAUNCH_WORDS):
        return launch_at
    start = launch_at
    for index in range(launch_at - 1, -1, -1):
        number, unit = body[index]
        if unit.startswith("#SBATCH") or index in unread or not build.tree.get(number) \
                or _has_command(build, number, _SETS_UP | _LAUNCH_WORDS):
            break
        if any(_same_program(c, program) for c in bashtree.walk(build.tree[number]) if isinstance(c, bashtree.Command)):
            start = index
    return start


#: the launchers, by the word that starts them
_LAUNCH_WORDS = frozenset(launch_options.ALL_LAUNCHERS) | {"accelerate", "deepspeed", "mpiexec"}


def _same_program(command: bashtree.Command, program: bashtree.Command) -> bool:
    """A run of the program's command (``python`` of any version for python), not a step that
    installs or checks (``python -m pip``, ``python setup.py``, ``python -c``, ``--version``)."""
    def family(name: str) -> str:
        return "python" if re.fullmatch(r"python[\d.]*", name) else name
    if bashtree.is_setup(command) or family(command.name or "") != family(program.name or ""):
        return False
    return command.argv[1:2] not in (["-c"], ["setup.py"])


def _has_command(build: _Builder, number: int, names: FrozenSet[str]) -> bool:
    return any(isinstance(c, bashtree.Command) and c.name in names for c in bashtree.walk(build.tree.get(number, ())))


def _work_launch(build: _Builder, units: List[Tuple[int, str]]) -> None:
    """The program's earlier runs and its last: launch.shell runs them all, in order."""
    build.spec["launch"] = {"shell": "\n".join(_array_names(build, unit) for _, unit in units)}
    build.launch_as_written = build.spec["launch"]["shell"]   # a line after it joins it (_run_after)
    for number, unit in units:
        build.note(number, unit, "mapped", "the job's main work runs from here to the end: launch.shell runs it all, in order, "
                   "so the time-limit save and the traps cover every run")


def _launch_unit(build: _Builder, script: bashtree.Script, body: List[Tuple[int, str]], unread: Set[int]) -> Optional[int]:
    """The unit of the job's work: the program's, else a loop of work, else a line of standard tools."""
    launch_at = _launch_index(body, build.program, unread)
    if launch_at is None and build.program is None:
        launch_at = _loop_of_work(build, script, body, unread)
    if launch_at is None and build.program is None:
        launch_at = _tools_of_work(script, body, unread)
        if launch_at is not None:
            number, unit = body[launch_at]
            build.note(number, unit, "note", "the job runs no program: its last line of standard tools is its work, the launch, "
                                             "so that its exit status is the job's, as it was")
    return launch_at


def _launch_index(body: List[Tuple[int, str]], program: Optional[bashtree.Program], unread: Set[int]) -> Optional[int]:
    """The unit that holds the job's program (bashtree.main_program: the last command that is
    not set-up), a loop or an if around it included."""
    if program is None:
        return None
    # an #SBATCH line among the commands is a comment to bash, never the program's unit
    held = [i for i, (first, unit) in enumerate(body) if first <= program.statement.line and not unit.startswith("#SBATCH")]
    return held[-1] if held and held[-1] not in unread else None


#: what a loop may run and still only set up or report (a loop of only these is no job's work)
_LOOP_SETUP = frozenset(("module", "ml", "source", ".", "export", "cd", "set", "shift", "read", "sleep", "true", "false", ":",
                         "test", "[", "[[", "conda", "pip", "pip3", "virtualenv", "deactivate", *INFORMATIONAL))


def _loop_of_work(build: _Builder, script: bashtree.Script, body: List[Tuple[int, str]], unread: Set[int]) -> Optional[int]:
    """Where no command is a program (``while read f; do gzip -9 "$f"; done < list``: its work is
    done by commands that elsewhere only set up), the last loop at the top level that runs
    something more than set-up is the job's work: its unit, the launch."""
    loops = [s for s in script.statements if isinstance(s, bashtree.Block) and s.kind in ("for", "while", "until")
             and any(c.name and c.name not in _LOOP_SETUP for c in bashtree.walk(s.body))]
    if not loops:
        return None
    held = [i for i, (first, unit) in enumerate(body) if first <= loops[-1].line and not unit.startswith("#SBATCH")]
    return held[-1] if held and held[-1] not in unread else None


#: standard tools that make or move the job's results: a job of only these (a tar to /nearline, a
#: ``zcat | sort | gzip`` pipeline) has them for its work
_DATA_TOOLS = frozenset(("cp", "mv", "rsync", "scp", "tar", "unzip", "zip", "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz",
                         "zstd", "pigz", "cat", "zcat", "head", "tail", "sed", "awk", "grep", "cut", "sort", "uniq", "wc", "tr",
                         "find", "wget", "curl", "sha256sum", "md5sum", "lfs"))


def _tools_of_work(script: bashtree.Script, body: List[Tuple[int, str]], unread: Set[int]) -> Optional[int]:
    """Where no command is a program and no loop runs one, the job's work is done by standard
    tools: the last top-level statement that runs one, not as a stage-in or a copy-back (it names
    no ``$SLURM_TMPDIR``), is the launch, so that its exit status is the job's, as it was."""
    works = [s for s in script.statements if not isinstance(s, bashtree.Function)
             and any(c.name in _DATA_TOOLS for c in bashtree.walk([s])) and not _tmpdir_named(s.text)]
    if not works:
        return None
    held = [i for i, (first, unit) in enumerate(body) if first <= works[-1].line and not unit.startswith("#SBATCH")]
    return held[-1] if held and held[-1] not in unread else None


def _tmpdir_named(text: str) -> bool:
    return re.search(r"\$\{?(SLURM_TMPDIR|TMPDIR)\b", text) is not None


def _arguments(build: _Builder, script: bashtree.Script, text: str) -> None:
    """``$1``, ``"$@"``: sbatch passes a script the words after its name; the spec's job gets them
    from ``slurmkit submit SPEC -- ARGS``, whose values import cannot know."""
    lines = text.replace("\r\n", "\n").split("\n")
    used: Dict[int, List[str]] = {}
    for number, written in _needed_arguments(script):
        used.setdefault(number, []).append(written)
    said = ", ".join(dict.fromkeys(w for written_ in used.values() for w in written_))
    advice = ("the words sbatch passed after the script's name: give their values with `slurmkit submit SPEC -- ARGS` "
              "(or make them an array's parameters)")
    if len(used) == 1:
        number = next(iter(used))
        build.note(number, lines[number - 1].strip(), "to do", f"it reads the script's arguments ({said}), {advice}")
    elif used:
        build.note(0, "lines " + ", ".join(map(str, used)), "to do", f"they read the script's arguments ({said}), {advice}")


def _needed_arguments(script: bashtree.Script) -> List[Tuple[int, str]]:
    """The script's reads of its arguments that a run without them does not pass by: not those
    with a default (an option loop after defaults, ``${1:-x}``, ``[ $# -gt 0 ] && X=$1``: scriptargs.py)."""
    optional = list(script.optional_positional)
    needed = []
    for read in script.positional:
        if read in optional:
            optional.remove(read)
        else:
            needed.append(read)
    return needed


# ---------------------------------------------------------------------------------- directives

def _directive_line(build: _Builder, number: int, text: str) -> None:
    try:
        tokens = shlex.split(text, comments=True)
    except ValueError as error:
        build.note(number, "#SBATCH" + text, "to do", f"cannot read it ({error})")
        return
    index = 0
    while index < len(tokens):
        token = tokens[index]
        option, value = _split_option(token)
        if option is None:
            build.note(number, "#SBATCH" + text, "to do", f"{token!r} is not an option")
            return
        if value is None and option not in FLAGS and index + 1 < len(tokens):
            index += 1
            value = tokens[index]
        _directive(build, _Option(number, "#SBATCH" + text, option, value))
        index += 1


#: options that sbatch adds up over several lines rather than taking the last
ADDED_UP = frozenset({"mail-type"})


def _overridden_directives(build: _Builder, directives: Sequence[Tuple[int, str]]) -> None:
    """An option given again further down (a job template's alternatives, one block pasted
    below another): sbatch takes the last, and import does too; the earlier line is said dropped."""
    named = [(number, unit, [n for n in _option_names(unit[len("#SBATCH"):]) if n not in ADDED_UP]) for number, unit in directives]
    last = {name: number for number, _, names in named for name in names}
    for number, unit, names in named:
        later = sorted({last[name] for name in names if last[name] != number})
        if later:
            build.note(number, unit, "dropped", f"given again on line {later[-1]}: sbatch takes the last one, and so does import")


def _option_names(text: str) -> List[str]:
    try:
        tokens = shlex.split(text, comments=True)
    except ValueError:
        return []
    return [name for name in (_split_option(token)[0] for token in tokens) if name]


def _split_option(token: str) -> Tuple[Optional[str], Optional[str]]:
    """``--name=value``, ``--name``, ``-Xvalue``, ``-X``: the long name and the value (None: none in the token)."""
    if token.startswith("--"):
        option, _, value = token[2:].partition("=")
        return full_long_name(option), (value if "=" in token else None)
    if token.startswith("-") and len(token) >= 2 and f"-{token[1]}" in SHORT:
        long = SHORT[f"-{token[1]}"]
        rest = token[2:]
        return long, (rest.lstrip("=") if rest else None)
    return None, None


_HUGE_NUMBER = re.compile(rf"\d{{{MAX_DIGITS + 1}}}")

#: what a reader makes of a line: its note's outcome and reason (``("mapped",)`` needs none);
#: a reader returns None for a line (or value) it does not read
_Verdict = Tuple[str, ...]
_MAPPED: _Verdict = ("mapped",)
#: a directive noted once the kind is known (_signal_and_requeue), not now
_NOTED_LATER: _Verdict = ()


class _Option(Record):
    """One option of an ``#SBATCH`` line, a short option by its long name."""
    number: int
    line: str
    name: str
    value: Optional[str]

    @property
    def spelled(self) -> str:
        """The option as a spec's extra_directives writes it."""
        return f"--{self.name}" + (f"={self.value}" if self.value is not None else "")


_Reader = Callable[[_Builder, _Option], Optional[_Verdict]]


def _directive(build: _Builder, option: _Option) -> None:
    """The option's own reader where it has one (``_OPTIONS``); else, or where that reader cannot
    read the value, the rules for every other option (``_other_option``)."""
    if option.value and _HUGE_NUMBER.search(option.value):  # int() refuses 4,300 digits; no count, size or time has 1,000
        build.note(option.number, option.line, "to do", f"a number of more than {MAX_DIGITS} digits, longer than any count, size "
                                                        "or time: left out; set it by hand")
        return
    reader = _OPTIONS.get(option.name)
    verdict = reader(build, option) if reader else None
    if verdict is None:
        verdict = _other_option(build, option)
    if verdict:   # empty: _NOTED_LATER
        build.note(option.number, option.line, *verdict)


def _job_name(build: _Builder, option: _Option) -> _Verdict:
    value = option.value
    if value and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}", value):
        build.spec["name"] = re.sub(r"[^A-Za-z0-9._+-]+", "-", value).strip("-._+")[:128] or "imported"
        return ("mapped", f"the name {value!r} becomes {build.spec['name']!r}: a job name is letters, digits, '.', '_', '+' and '-'")
    build.spec["name"] = value
    return _MAPPED


def _chdir(build: _Builder, option: _Option) -> Optional[_Verdict]:
    """``--chdir=.`` (``-D ./``): the folder a job starts in anyway (sbatch reads it from the
    folder it runs in); any other folder is the to-do every option slurmkit sets itself gets
    (None: _other_option)."""
    value = option.value or ""
    if value.rstrip("/") in ("", "."):
        return ("dropped", "a job starts in the folder it was submitted from")
    if not re.fullmatch(r"[\w./+-]+", value):
        return None
    build.chdir = value.rstrip("/")
    return ("mapped", f"environment.setup starts with cd {build.chdir}: the job ran there, and so does the program; "
                      "slurmkit's log files stay in the submit folder")


def _account(build: _Builder, option: _Option) -> _Verdict:
    build.spec["account"] = option.value
    return _MAPPED


def _time(build: _Builder, option: _Option) -> _Verdict:
    res, value = build.spec["resources"], option.value
    if value and re.fullmatch(r"\d+:\d+", value):
        minutes, seconds = (int(part) for part in value.split(":"))
        res["time"] = format_duration(minutes * 60 + seconds)  # a spec refuses M:S, which users misread
        return ("mapped", f"SLURM reads {value} as minutes:seconds: time {res['time']}")
    res["time"] = value
    return _MAPPED


def _count(key: str) -> _Reader:
    """The reader of an option whose value, a whole number, is ``resources.<key>``."""
    def read(build: _Builder, option: _Option) -> Optional[_Verdict]:
        if not (option.value and option.value.isdigit()):
            return None
        build.spec["resources"][key] = int(option.value)
        return _MAPPED
    return read


def _as_written(key: str) -> _Reader:
    """The reader of an option whose value is ``resources.<key>`` as written (a size, GPUs)."""
    def read(build: _Builder, option: _Option) -> Optional[_Verdict]:
        if not option.value:
            return None
        build.spec["resources"][key] = option.value
        return _MAPPED
    return read


def _ntasks(build: _Builder, option: _Option) -> Optional[_Verdict]:
    """Tasks in all: divided over the nodes once they are known (_finish)."""
    if not (option.value and option.value.isdigit()):
        return None
    build.ntasks = int(option.value)
    return _MAPPED


def _mem(build: _Builder, option: _Option) -> Optional[_Verdict]:
    value = option.value
    if not value:
        return None
    # --mem=0 (or 0G): all of each node's memory
    build.spec["resources"]["mem"] = NODE_MEMORY if re.fullmatch(r"0+[KMGTP]?", value, re.I) else value
    return _MAPPED


#: a GPU request of none (``--gres=gpu:k80:0``, ``--gpus-per-node=0``): a CPU job, written as a GPU one
NO_GPU: _Verdict = ("dropped", "it asks for no GPU (a count of 0): the job runs on CPUs")


def _gres(build: _Builder, option: _Option) -> Optional[_Verdict]:
    value = option.value
    if not (value and value.startswith("gpu")):
        return None
    parts = value.split(":")[1:]
    if parts and re.fullmatch(r"0+", parts[-1]):
        return NO_GPU
    build.spec["resources"]["gpus"] = ":".join(parts) if parts else "1"
    return _MAPPED


def _ntasks_per_gpu(build: _Builder, option: _Option) -> Optional[_Verdict]:
    """Tasks per GPU: per node once the GPUs per node are known (_counts_per_node)."""
    if not (option.value and option.value.isdigit() and int(option.value) > 0):
        return None
    build.tasks_per_gpu = int(option.value)
    return _MAPPED


def _gpus_per_node(build: _Builder, option: _Option) -> Optional[_Verdict]:
    if option.value and re.fullmatch(r"(\w+:)?0+", option.value):
        return NO_GPU
    return _as_written("gpus")(build, option)


def _gpus(build: _Builder, option: _Option) -> Optional[_Verdict]:
    """GPUs in all: per node once the nodes are known (_finish)."""
    if not option.value:
        return None
    build.gpus_total = option.value
    return _MAPPED


def _mem_per_gpu(build: _Builder, option: _Option) -> Optional[_Verdict]:
    """Memory per GPU: memory per node once the GPUs per node are known (_memory_of_the_gpus)."""
    if not (option.value and re.fullmatch(r"\d+[KMGT]?", option.value, re.I)):
        return None
    build.mem_per_gpu = (option.number, option.line, option.value)
    return _NOTED_LATER


def _memory_of_the_gpus(build: _Builder) -> None:
    """--mem-per-gpu as the memory of a node, which the spec holds (resources.mem): the GPUs
    per node times it, the same memory for the same GPUs; a spec of no GPU count (or one sbatch
    refused beside --mem) is a to-do."""
    if build.mem_per_gpu is None:
        return
    number, line, value = build.mem_per_gpu
    res = build.spec["resources"]
    gpus = str(res.get("gpus", "")).rpartition(":")[2]
    if not gpus.isdigit() or "mem" in res or "mem_per_cpu" in res:
        build.note(number, line, "to do", f"--mem-per-gpu={value}: the spec holds memory per node (resources.mem) and the job's "
                                          "GPUs per node are not known, or it gave --mem too: set resources.mem by hand")
        return
    amount, unit = re.fullmatch(r"(\d+)([KMGT]?)", value, re.I).groups()  # type: ignore[union-attr]
    res["mem"] = f"{int(amount) * int(gpus)}{(unit or 'M').upper()}"
    build.note(number, line, "mapped", f"--mem-per-gpu={value}: resources.mem: {res['mem']}, for the {gpus} GPUs of a node")


def _cpus_per_gpu(build: _Builder, option: _Option) -> Optional[_Verdict]:
    """Cores per GPU: cores per task once the GPUs per task are known (_cores_of_the_gpus)."""
    if not (option.value and option.value.isdigit()):
        return None
    build.cpus_per_gpu = (option.number, option.line, option.value)
    return _NOTED_LATER


def _cores_of_the_gpus(build: _Builder) -> None:
    """--cpus-per-gpu as the cores of a task, which the spec holds (resources.cpus_per_task): it
    times the GPUs of a task, the same cores for the same GPUs (left out, the job would get the
    site's cores per GPU instead); GPUs a node that its tasks do not share evenly, or
    --cpus-per-task beside it (sbatch refuses the two together), is a to-do."""
    if build.cpus_per_gpu is None:
        return
    number, line, value = build.cpus_per_gpu
    res = build.spec["resources"]
    gpus = str(res.get("gpus", "")).rpartition(":")[2]
    tasks = res.get("tasks_per_node", 1)
    if not gpus.isdigit() or not isinstance(tasks, int) or int(gpus) % tasks or "cpus_per_task" in res:
        build.note(number, line, "to do", f"--cpus-per-gpu={value}: the spec holds cores per task (resources.cpus_per_task) and "
                                          "the job's GPUs per task are not known, or it gave --cpus-per-task too: set "
                                          "resources.cpus_per_task by hand")
        return
    res["cpus_per_task"] = int(value) * int(gpus) // tasks
    build.note(number, line, "mapped", f"--cpus-per-gpu={value}: resources.cpus_per_task: {res['cpus_per_task']}, for the "
                                       f"{int(gpus) // tasks} GPU(s) of a task")


def _gpus_per_task(build: _Builder, option: _Option) -> Optional[_Verdict]:
    """GPUs per task: per node once the tasks are known (_finish)."""
    value = option.value
    if not (value and value.rpartition(":")[2].isdigit()):
        return None
    build.gpus_per_task = value
    return _MAPPED


def _array(build: _Builder, option: _Option) -> Optional[_Verdict]:
    if not option.value:
        return None
    problem = array_range_problem(option.value)
    if problem:
        return ("to do", problem)
    build.spec["array_range"] = option.value
    return _MAPPED


def _mail_user(build: _Builder, option: _Option) -> Optional[_Verdict]:
    """An address with no --mail-type line: SLURM sends no mail (its default type is NONE), so
    the spec says no events, rather than slurmkit's default END and FAIL."""
    if not option.value:
        return None
    build.section("mail")["user"] = option.value
    if not _gives_option(build, "mail-type"):
        build.spec["mail"]["events"] = []
        return ("mapped", "mail.events: []: no --mail-type, so SLURM sends no mail, and neither does the job "
                          "(list events, e.g. [END, FAIL], to get mail)")
    return _MAPPED


def _mail_type(build: _Builder, option: _Option) -> Optional[_Verdict]:
    """Each --mail-type line adds its events to the ones before (sbatch ORs them: two lines END
    and FAIL give MailType=END,FAIL, seen on Slurm 22.05), so import joins them too."""
    if not option.value:
        return None
    earlier = build.section("mail").get("events", [])
    build.spec["mail"]["events"] = list(dict.fromkeys([*earlier, *option.value.split(",")]))
    if earlier:
        return ("mapped", f"mail.events: {','.join(build.spec['mail']['events'])}: sbatch adds each --mail-type line's events "
                          "to those before")
    if "user" not in build.spec["mail"] and not _gives_option(build, "mail-user"):
        return ("mapped", "no --mail-user: mail goes to the address registered with your account")
    return _MAPPED


def _gives_option(build: _Builder, name: str) -> bool:
    """Whether any #SBATCH line of the script gives option ``name`` (a later line included)."""
    return any(name in _option_names(unit[len("#SBATCH"):]) for _, unit in build.directives)


def _dependency(build: _Builder, option: _Option) -> Optional[_Verdict]:
    """A job id in an #SBATCH line is one job of the cluster the script was written for, as it
    ran then: reused, the id names a job long gone (sbatch refuses one it does not know), and on
    another cluster none, or someone else's. The spec leaves it out; the to-do says how to wait
    for the job it stands for."""
    if not option.value:
        return None
    return ("to do", old_dependency_todo(option.value))


def old_dependency_todo(value: str) -> str:
    """The to-do for ``--dependency=value``: the waits on old job ids, and how slurmkit says them."""
    after = {name: short for short, name in DEPENDENCY_TYPES.items()}
    terms = [(kind, [j for j in jobs.split(":") if j]) for kind, _, jobs in (t.partition(":") for t in re.split(r"[,?]", value))]
    waits = [(after[kind], jobs) for kind, jobs in terms if kind in after and jobs]
    if not waits or len(waits) < len(terms):
        return (f"--dependency={value}: the spec has no field for it (dependencies take after: ok, any, notok or start "
                "and job ids): left out")
    ids = ", ".join(j for _, jobs in waits for j in jobs)
    kind = waits[0][0]
    return (f"the job waited for job {ids} of the cluster the script was written for, as it ran then: that job is gone "
            "(sbatch refuses an id it does not know), and on another cluster the id names no job, or someone else's; the spec "
            f"leaves it out: to wait for the job it stands for, `slurmkit submit SPEC --after JOBID"
            f"{'' if kind == 'ok' else ' --after-type ' + kind}`, or dependencies: [{{after: {kind}, jobs: [JOBID]}}]")


def _signal(build: _Builder, option: _Option) -> Optional[_Verdict]:
    """USR1 before the limit: what it is for depends on the kind (_signal_and_requeue)."""
    value = option.value
    if not (value and re.fullmatch(r"(B:)?(USR1|SIGUSR1|10)@\d+", value)):
        return None
    build.signal = (option.number, option.line, option.spelled, value.rpartition("@")[2])
    return _NOTED_LATER


def _requeue(build: _Builder, option: _Option) -> _Verdict:
    """--requeue, --no-requeue, --open-mode: what they mean depends on the kind (_signal_and_requeue)."""
    build.requeue_lines.append((option.number, option.line, option.spelled))
    return _NOTED_LATER


def _log_name(key: str) -> _Reader:
    """--output/--error: ``logs.<key>`` as written (sbatch's pattern, from the folder the job
    starts in); a value a spec cannot hold is a to-do, never slurmkit's name in its place."""
    def read(build: _Builder, option: _Option) -> _Verdict:
        value = _LONE_PERCENT.sub(lambda m: "%%", option.value or "")
        problem = pattern_problem(value)
        if problem:
            return ("to do", f"--{option.name}={option.value}: {problem}; set logs.{key} by hand")
        build.section("logs")[key] = value
        if value != option.value:
            return ("mapped", f"logs.{key}: {value}: sbatch writes a % that no symbol follows as it is (Slurm 22.05, run), "
                              "which a spec spells %%")
        return _MAPPED
    return read


#: a ``%`` that no letter or digit follows (``run_%.txt``, a trailing ``%``), not ``%%``: sbatch
#: keeps it in the file's name
_LONE_PERCENT = re.compile(r"(?<!%)%(?=[^A-Za-z0-9%]|$)")


def _other_option(build: _Builder, option: _Option) -> _Verdict:
    """An option without a reader, or a value its reader cannot read: dropped where slurmkit sets
    it itself, else passed through as an extra directive where a spec takes it as one."""
    name, value = option.name, option.value
    if name in DROPPED and not (name == "partition" and value == "debug"):
        return ("dropped", DROPPED[name])
    if name in OWN_OPTIONS and not (name == "mem" and value == "0"):
        return ("to do", f"slurmkit writes --{name} itself and cannot read {value!r}: set resources by hand ({OWN_OPTIONS[name]})")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9-]*", name) or (value is not None and not re.fullmatch(r"[^\s'\"\\$`]*", value)):
        return ("to do", f"--{name}={value} has no spec field and cannot pass through")
    problem = directive_problem(option.spelled, {d.partition("=")[0]: 0 for d in build.spec.get("extra_directives", [])})
    if problem:  # a spec would refuse it: say why here, not in a spec that fails to load
        return ("to do", problem)
    build.spec.setdefault("extra_directives", []).append(option.spelled)
    return _MAPPED


#: each option import reads into the spec (by its long name), and its reader
_OPTIONS: Dict[str, _Reader] = {
    "job-name": _job_name, "account": _account, "time": _time, "chdir": _chdir,
    "nodes": _count("nodes"), "ntasks": _ntasks, "ntasks-per-node": _count("tasks_per_node"),
    "tasks-per-node": _count("tasks_per_node"), "cpus-per-task": _count("cpus_per_task"),
    "mem": _mem, "mem-per-cpu": _as_written("mem_per_cpu"), "mem-per-gpu": _mem_per_gpu, "tmp": _as_written("tmp"),
    "cpus-per-gpu": _cpus_per_gpu,
    "gres": _gres, "gpus-per-node": _gpus_per_node, "ntasks-per-gpu": _ntasks_per_gpu, "gpus": _gpus, "gpus-per-task": _gpus_per_task,
    "array": _array, "mail-user": _mail_user, "mail-type": _mail_type, "dependency": _dependency,
    "signal": _signal, **{name: _requeue for name in REQUEUE_OPTIONS},
    "output": _log_name("output"), "error": _log_name("error"),
}


# ---------------------------------------------------------------------------------------- body

def _body_unit(build: _Builder, number: int, unit: str) -> None:
    if "<<" in unit.split("\n")[0]:
        _heredoc(build, number, unit)
        return
    if any(isinstance(s, bashtree.Function) for s in build.tree.get(number, ())):
        _functions(build, number, unit)
        return
    if "\n" in unit and _single_command(build, number) is None:
        _block(build, number, unit)
        return
    words = _unit_words(build, number, unit)
    if not words:
        build.note(number, unit, "to do", "cannot read it as a command: carry it over by hand")
        return
    build.line = number
    for handler in (_shell_option_line, _module_restore_line, _module_line, _conda_line, _venv_line, _export_line, _cd_line, _stage_line,
                    _trap_line):
        outcome = handler(build, words, unit)
        if outcome:
            if outcome[0] == "kept":
                build.keep(number, _array_names(build, unit), *outcome[1:])
            else:
                build.note(number, unit, *outcome)
            return
    build.keep(number, _array_names(build, unit))


def _heredoc(build: _Builder, number: int, unit: str) -> None:
    """The Alliance's ``srun ... bash << EOF`` that makes a virtualenv on every node."""
    lines = unit.split("\n")
    if len(lines) > MAX_HEREDOC_LINES:
        build.keep(number, unit)
        return
    body = [line.strip() for line in lines[1:-1]]
    commands_ = [words for words in map(_words, body) if words]
    if commands_ and all(_is_venv(words) or words[0] in ("module", "ml") for words in commands_) \
            and not _pip_lines_kept(build, commands_):
        for words in commands_:
            _venv_line(build, words) or _module_line(build, words)
        build.note(number, unit, "mapped", "per-node setup; slurmkit builds the environment on each node in each job")
    else:
        build.venv_in_setup = build.venv_in_setup or any(_is_venv(words) for words in commands_)
        build.keep(number, unit)


def _pip_lines_kept(build: _Builder, commands_: List[List[str]]) -> bool:
    """Whether a pip line of these (a here-document's) cannot become environment.venv
    (_pip_kept), each judged after the lines before it have been read into the recipe."""
    venv = build.spec.get("environment", {}).get("venv", {})
    scratch = _Builder()
    scratch.venv_in_setup = build.venv_in_setup
    scratch.spec = {"resources": {}, "environment": {"venv": {**venv, "packages": list(venv.get("packages", []))}}}
    for words in commands_:
        if _is_pip_install(words):
            if _pip_kept(scratch, words):
                return True
            _venv_installs(scratch.spec["environment"]["venv"], words)
    return False


def _functions(build: _Builder, number: int, unit: str) -> None:
    """A unit that defines a function: one that a copy-back trap calls is stage.outputs (and its
    trap, on the same line, is noted on its own); any other is kept as written."""
    statements = build.tree[number]
    function = statements[0]
    traps = [s for s in statements[1:] if isinstance(s, bashtree.Command) and s.name == "trap"]
    if not (isinstance(function, bashtree.Function) and function.name in build.copy_backs and len(traps) == len(statements) - 1):
        build.keep(number, _array_names(build, unit))
        return
    for output in build.copy_backs[function.name]:
        _add_output(build, output)
    build.saving_functions.add(function.name)
    build.note(number, function.text, "mapped", "its copies from $SLURM_TMPDIR are stage.outputs: slurmkit saves them on every "
                                                "exit and before the time limit")
    for trap in traps:
        verdict = _trap_line(build, trap.argv, trap.text) or ("kept",)
        if verdict[0] == "kept":
            build.keep(trap.line, trap.text, *verdict[1:])
        else:
            build.note(trap.line, trap.text, *verdict)


def _block(build: _Builder, number: int, unit: str) -> None:
    build.keep(number, _array_names(build, unit))


def _shell_option_line(build: _Builder, words: List[str], unit: str) -> Optional[_Verdict]:
    """``set -e``/``-u``/``-o pipefail``: slurmkit's own (environment.errexit, nounset say the rest).
    A ``shopt`` (nullglob, extglob, globstar) changes what the script's later globs mean: kept,
    in order (and at the head of launch.shell: _shell_options_into_launch)."""
    if STANDARD_SHELL_OPTIONS.match(unit):
        return ("dropped", "slurmkit's scripts run with set -euo pipefail")
    return None


def _shell_options_into_launch(build: _Builder) -> None:
    """A ``shopt`` line kept in setup does not reach launch.shell, which bash runs in a child bash
    (shopt options are not inherited): it runs at the head of launch.shell too."""
    shell = build.spec.get("launch", {}).get("shell")
    options = [line for line in build.setup if re.match(r"\s*shopt\s+-[su]\b", line)]
    if shell is not None and options:
        build.spec["launch"]["shell"] = "\n".join(options + [shell])


#: the words that end a command in a list: ``module load X || { echo ...; exit 1; }``
_LIST_OPERATORS = ("||", "&&", ";", "|", "&")
#: what follows ``||`` where it only stops the job: slurmkit's script stops where module load fails
_STOPS_THE_JOB = re.compile(r"^\|\|\s*(\{\s*)?(?:[^;{}]*;\s*)*(?:exit|return)\b[^;{}]*;?\s*\}?\s*$")


def _module_line(build: _Builder, words: List[str], unit: str = "") -> Optional[_Verdict]:
    if words[0] not in ("module", "ml"):
        return None
    ends = [i for i, w in enumerate(words) if w in _LIST_OPERATORS or w.endswith(";")]
    if ends and unit:
        return _module_list(build, words, unit, ends[0])
    rest = [w for w in words[1:] if not w.startswith("-")]
    if rest[:1] == ["use"]:
        build.module_use = True
        return ("kept", "a module folder of your own: used as written (environment.setup), with the loads after it")
    modules = bashtree.loaded_modules(words)
    if modules is not None and build.module_use:
        return ("kept", "after a module folder of your own (`module use`, MODULEPATH): loaded as written in environment.setup, "
                        "where that folder is known")
    if modules is not None:
        return _load_modules(build, modules, conda_refused=words[0] == "module")
    if rest[:1] == ["purge"]:
        return ("dropped", "slurmkit loads the site's standard environment itself")
    return ("kept",) if unit else None


def _module_list(build: _Builder, words: List[str], unit: str, end: int) -> _Verdict:
    """A module line followed by more commands: ``|| exit 1`` (with a message) only stops the
    job where the load fails, as slurmkit's script does itself, so its modules are read as any
    module line's; anything else keeps the line as written (environment.setup), whose modules
    port and check still read there."""
    first = words[:end] + ([words[end][:-1]] if words[end].endswith(";") and words[end] != ";" else [])
    after = unit.split("||", 1)[1] if "||" in unit else ""
    if words[end] == "||" and _STOPS_THE_JOB.match("||" + after.strip()) and bashtree.loaded_modules(first) is not None:
        verdict = _module_line(build, first)
        if verdict and verdict[0] != "kept":
            return verdict
        return ("mapped", "its modules are environment.modules; `|| exit` went with it: slurmkit's script stops where "
                          "module load fails")
    return ("kept", "a module line with more commands after it: run as written (environment.setup)")


def _module_restore_line(build: _Builder, words: List[str], unit: str) -> Optional[_Verdict]:
    """``module restore NAME``: a collection saved (``module save``) in ~/.lmod.d of the cluster the
    script ran on. Its modules are unknown here, so neither ported nor checked, and another cluster's
    home does not have it: run as written (environment.setup), and a to-do to name its modules."""
    rest = [w for w in words[1:] if not w.startswith("-")]
    if words[0] not in ("module", "ml") or rest[:1] != ["restore"] or rest[1:2] == ["system"]:
        return None
    name = rest[1] if len(rest) > 1 else "default"
    build.setup.append(unit)
    return ("to do", f"it loads the module collection {name}, saved with `module save` in ~/.lmod.d of the cluster the "
                     "script ran on: slurmkit cannot see its modules, so it neither checks nor ports them, and on another "
                     "cluster it is missing or loads the old stack's modules: replace this line of environment.setup by the "
                     f"modules it holds, in environment.modules (`module describe {name}`, run on the cluster where it was "
                     "saved, prints them)")


def _load_modules(build: _Builder, modules: List[str], conda_refused: bool) -> _Verdict:
    """The modules become environment.modules; with ``conda_refused`` (``module load``), conda's
    own modules are left out, and a line of them alone is dropped (CONDA_NOTE)."""
    conda = [m for m in modules if re.match(r"(mini|ana)?conda", m.split("/")[0])] if conda_refused else []
    if conda != modules:
        build.section("environment").setdefault("modules", []).extend(m for m in modules if m not in conda)
    return ("dropped", CONDA_NOTE) if conda and conda == modules else _MAPPED


def _conda_line(build: _Builder, words: List[str], unit: str) -> Optional[_Verdict]:
    if words[0] == "conda" or (words[0] in ("source", ".") and len(words) > 1 and words[1].endswith("activate")
                               and not _venv_activate(words[1])):
        if words[1:3] == ["install", "-y"] or words[1:2] == ["install"]:
            packages = [w for w in words[2:] if not w.startswith("-") and w not in ("-c",)]
            if packages:
                build.section("environment").setdefault("venv", {}).setdefault("packages", []).extend(packages)
                return ("mapped", "conda's packages go into a virtualenv (the Alliance does not support conda); "
                                  "check that each has a wheel: avail_wheels NAME")
        venv = build.spec.get("environment", {}).get("venv", {})
        if venv.get("packages") and words[1:2] == ["activate"]:
            return ("dropped", "the packages conda installed above go into the job's virtualenv")
        if words[0] in ("source", ".") or words[1:2] == ["activate"]:
            # kept: without it the program runs without its environment ("command not found")
            build.note(build.line, unit, "to do", CONDA_NOTE + "; until then the job activates the environment as before")
            return ("kept", "the job's environment: run as written before the program (environment.setup)")
        return ("to do", CONDA_NOTE)
    return None


#: conda named anywhere in the script's text (a string it evals, a function): its module or activation
_CONDA_WORD = re.compile(r"\b(?:ana|mini)conda\d?\b|\bconda\s+activate\b|\bsource\s+activate\b")


def _conda_anywhere(build: _Builder, text: str) -> None:
    """A conda the lines import read as commands did not show (``LOAD="module load anaconda3;
    source activate pytorch"; eval "$LOAD; python train.py"``): the same to-do, once."""
    if _CONDA_WORD.search(text) and not any("conda" in n.reason for n in build.notes):
        build.note(0, "conda", "to do", CONDA_NOTE)


def _venv_line(build: _Builder, words: List[str], unit: str = "") -> Optional[_Verdict]:
    if not words or not _is_venv(words):
        return None
    words = [bashtree.substituted(w, build.values) for w in words]
    if any((a or b) in build.assigned for w in words for a, b in _VARIABLE.findall(w)):
        build.venv_in_setup = True
        return None   # a name the script sets, to a value import cannot tell: the venv would be made before it is set
    here = _venv_words_here(build, words)
    if here is None or _venv_removed_before(build, here) or _venv_made_each_run(build, here) or _venv_left_before(build) \
            or _venv_inside_named(build, here) or _venv_named_elsewhere(build, words, here):
        build.venv_in_setup = True
        return None   # a relative folder after a cd import cannot follow, or into a venv kept as written: kept in order
    return _venv_recipe(build, here)


def _venv_recipe(build: _Builder, words: List[str]) -> Optional[_Verdict]:
    """A virtualenv line import can read (its words as here): into environment.venv, or kept."""
    kept = _pip_kept(build, words) if _is_pip_install(words) else ""
    in_tmpdir = bool(build.line) and _in_tmpdir(build, build.line)
    if kept or _venv_unpacked(build, words, in_tmpdir):
        build.venv_in_setup = True
        return ("kept", kept or "a virtualenv the job put in $SLURM_TMPDIR itself (no line of it makes one): activated as written, "
                                "in order")
    venv = build.section("environment").setdefault("venv", {})
    if words[0] == "virtualenv" or words[1:3] == ["-m", "venv"]:
        build.venv_made = True
        return _venv_made(venv, words, in_tmpdir)
    if words[0] in ("source", "."):
        return _venv_activated(venv, words[1], in_tmpdir)
    return _venv_installs(venv, words)


def _venv_unpacked(build: _Builder, words: List[str], in_tmpdir: bool) -> bool:
    """``source $SLURM_TMPDIR/.venv/bin/activate`` where no line makes a virtualenv: the job put it
    there (tar -xf venv.tar.gz -C $SLURM_TMPDIR), so slurmkit must not make an empty one instead."""
    return words[0] in ("source", ".") and not build.venv_made and _per_job(words[1][:-len("bin/activate")].rstrip("/") or ".",
                                                                              in_tmpdir)


def _venv_removed_before(build: _Builder, words: List[str]) -> bool:
    """``rm -rf $HOME/env`` then ``virtualenv $HOME/env``: the script builds the venv afresh each
    run. slurmkit makes and fills the venv before the kept lines, so the kept rm would delete it
    and the program would run without its packages: the venv lines stay as written, in order."""
    index = _venv_path_index(words)
    if index is None:
        return False
    path = re.sub(r"/bin/activate$", "", _home(words[index]).rstrip("/"))
    return any(re.match(r"\s*rm\b", str(line)) and path in {_home(w).rstrip("/") for w in str(line).split()[1:]}
               for line in build.setup)


def _venv_inside_named(build: _Builder, words: List[str]) -> bool:
    """``virtualenv $SLURM_TMPDIR/venv``, and another line that reads or writes inside it (``cp
    fix.py $SLURM_TMPDIR/venv/lib/python3.9/site-packages/...``, ``$SLURM_TMPDIR/venv/bin/python``):
    that line needs the venv where the script made it, which environment.venv would move to
    slurmkit's own folder. The venv lines stay as written, in order."""
    index = _venv_path_index(words)
    if index is None:
        return False
    path = _braceless(re.sub(r"/bin/activate$", "", words[index].rstrip(";&|")).rstrip("/"))
    inside = re.compile(re.escape(path) + r"/(?!bin/activate\b)")
    return any(inside.search(_braceless(line)) for line in build.text.splitlines() if not line.lstrip().startswith("#"))


def _venv_named_elsewhere(build: _Builder, words: List[str], here: List[str]) -> bool:
    """Another line of the script names the folder of a venv made for the job (``tar -cf
    ~/venv.tar .venv`` after ``cd $SLURM_TMPDIR; virtualenv .venv``), as written or as resolved:
    environment.venv would make it in slurmkit's own folder, and that line would find nothing
    there. So does a ``source .../bin/activate`` after a ``deactivate``, which stays as written.
    The venv lines stay as written, in order."""
    index = _venv_path_index(here)
    if index is None:
        return False
    names = {_braceless(re.sub(r"/?bin/activate$", "", w).rstrip("/")) for w in (words[index], here[index])} - {"", "."}
    if not any(_per_job(name, bool(build.line) and _in_tmpdir(build, build.line)) for name in names):
        return False   # a lasting venv keeps its folder (environment.venv.path): nothing moves
    deactivated = False
    for line in build.text.splitlines():
        line_words = [_braceless(w.strip("'\"").rstrip("/;&|")) for w in line.split()]
        if not line_words or line.lstrip().startswith("#"):
            continue
        deactivated = deactivated or line_words[0] == "deactivate"
        if _is_venv(line_words) and not (deactivated and line_words[0] in ("source", ".")):
            continue
        line_words = [re.sub(r"/?bin/activate$", "", w) for w in line_words]
        if names & set(line_words):
            return True
    return False


def _braceless(text: str) -> str:
    """``${NAME}`` written ``$NAME`` where a name character does not follow it: one spelling of a path."""
    return re.sub(r"\$\{([A-Za-z_]\w*)\}(?!\w)", r"$\1", text)


def _venv_left_before(build: _Builder) -> bool:
    """``deactivate`` (or ``unset VIRTUAL_ENV``) before the script enters its venv: slurmkit enters
    the venv before the kept lines, so the kept deactivate would leave it again, and the program
    would run without its packages. The venv lines stay as written, in order (in the script the
    deactivate leaves the submitting shell's venv, or fails harmlessly: a function is not exported)."""
    return any(re.match(r"\s*(conda\s+)?deactivate\b|\s*unset\s+(-v\s+)?VIRTUAL_ENV\b", str(line)) for line in build.setup)


def _venv_made_each_run(build: _Builder, words: List[str]) -> bool:
    """``virtualenv ~/ENV`` in the script's lines: it makes (or refreshes) the lasting venv on every
    run, for the python then loaded, and its pip lines fill it. environment.venv.path would make
    it only where it is missing, so a venv of the old cluster's python is reused, and port asks to
    rebuild what the script rebuilt itself: the line, its activation and its pip lines stay as
    written, in order. A venv in $SLURM_TMPDIR is made each run either way."""
    index = _venv_path_index(words)
    if index is None:
        return False
    path = _home(re.sub(r"/bin/activate$", "", words[index]).rstrip("/"))
    if words[0] not in ("source", "."):
        return not _per_job(path, bool(build.line) and _in_tmpdir(build, build.line))
    return any(_made_venv_path(str(line)) == path for line in build.setup)


def _made_venv_path(line: str) -> str:
    """The folder a kept ``virtualenv PATH`` / ``python -m venv PATH`` line makes ("" for another line)."""
    words = line.split()
    if not words or not (words[0] == "virtualenv" or words[1:3] == ["-m", "venv"]):
        return ""
    index = _venv_path_index(words)
    return "" if index is None else _home(words[index].rstrip("/"))


def _venv_words_here(build: _Builder, words: List[str]) -> Optional[List[str]]:
    """The venv line with its relative folder written from where the script was when it ran
    (after ``cd /home/u/proj``, ``.env`` is ``/home/u/proj/.env``): slurmkit makes and enters
    the venv before the script's own lines, in the submit folder. None where that folder is not
    known, and for ``pip install`` into a venv whose activation was kept as written."""
    index = _venv_path_index(words)
    if index is None:
        return None if any(_KEPT_ACTIVATION.match(str(line)) for line in build.setup) else words
    path = workdir.resolved(words[index], _folder_here(build))
    return None if path is None else words[:index] + [path] + words[index + 1:]


#: a setup line that enters a virtualenv as written (its folder was relative to an unknown one)
_KEPT_ACTIVATION = re.compile(r"\s*(source|\.)\s+\S*bin/activate\s*$")


def _venv_path_index(words: List[str]) -> Optional[int]:
    """Where a venv line names its folder: ``source X/bin/activate``, ``virtualenv [OPTIONS] X``,
    ``python -m venv X``; None for pip."""
    if words[0] in ("source", "."):
        return 1
    if words[0] == "virtualenv" or words[1:3] == ["-m", "venv"]:   # the word _venv_made takes
        return next((i for i, w in enumerate(words[1:], 1) if not w.startswith("-") and w not in ("venv",)), None)
    return None


#: pip's options that change nothing of what is installed: environment.venv's recipe adds
#: ``--no-index`` where the site has a wheelhouse, and drops the rest.
_PIP_PLAIN = frozenset(("--no-index", "-q", "--quiet", "-qq", "-v", "--verbose", "--no-cache-dir",
                        "--disable-pip-version-check", "--no-warn-script-location", "--no-color"))
_PIP_KEPT = "run as written, in the order of the script, once the virtualenv is made (environment.setup)"


def _is_pip_install(words: List[str]) -> bool:
    return _is_venv(words) and words[0] not in ("virtualenv", "source", ".") and words[1:3] != ["-m", "venv"]


def _installs_packages(words: List[str]) -> bool:
    """A pip line that installs something other than pip itself."""
    return bool(words) and _is_pip_install(words) and not _upgrades_pip_only(words[words.index("install") + 1:])


def _pip_kept(build: _Builder, words: List[str]) -> str:
    """Why a ``pip install`` line cannot become environment.venv without changing what is
    installed ("" where it can). The recipe installs the requirements file first, then every
    package in one ``pip install``, with only the site's options: a line with options of its own
    (``--no-deps``, ``--upgrade``, ``-e``, an index), a second requirements file, requirements
    after packages, or any pip line after one kept as written stays a line of its own, in order."""
    rest = words[words.index("install") + 1:]
    requirements = sum(w in ("-r", "--requirement") for w in rest)
    options = [w for w in rest if w.startswith("-") and w not in _PIP_PLAIN and w not in ("-r", "--requirement")]
    venv = build.spec.get("environment", {}).get("venv", {})
    if build.venv_in_setup:
        return f"after a pip or virtualenv line kept as written: {_PIP_KEPT}"
    if not build.errexit and build.pip_lines > 1 and _installs_packages(words):
        return (f"the script had no set -e and {build.pip_lines} pip lines: one that failed (a package the wheelhouse lacks, "
                "a name of Python's own library) stopped neither the job nor the others, where environment.venv installs "
                f"every package in one pip call that fails as a whole: {_PIP_KEPT}")
    if build.pypi_from and "--no-index" not in rest and not _upgrades_pip_only(rest):
        return (f"without --no-index, on {build.pypi_from}, whose compute nodes reach PyPI, pip could take from there what the "
                f"wheelhouse lacks, and a failure did not stop the script; environment.venv installs with --no-index: {_PIP_KEPT}")
    if options and not _upgrades_pip_only(rest):
        return f"pip's {' '.join(dict.fromkeys(options))} cannot be said in environment.venv: {_PIP_KEPT}"
    if requirements and (requirements > 1 or venv.get("requirements") or venv.get("packages")):
        return f"environment.venv installs one requirements file, before any package: {_PIP_KEPT}"
    return _pip_line_of_its_own(rest, venv.get("packages") or ())


def _pip_line_of_its_own(rest: List[str], earlier: Sequence[str]) -> str:
    """Why this line's packages cannot join the earlier lines' in one ``pip install`` ("" where
    they can): a second version of a project an earlier line installed (pip installs one after
    the other, but refuses both in one call), or a file (a wheel, a source folder): named from
    the folder the line ran in, built for the python of its day, and where it is missing or
    does not fit, one ``pip install`` of every package would fail as a whole."""
    packages = [w for i, w in enumerate(rest) if not w.startswith("-") and (i == 0 or rest[i - 1] not in ("-r", "--requirement"))]
    pinned = {_project(p): p for p in earlier if _pins(p)}
    again = next((p for p in packages if _pins(p) and pinned.get(_project(p), p) != p), None)
    if again:
        return (f"{again}: another version of a project an earlier pip line installed ({pinned[_project(again)]}), "
                f"which pip installs after it but refuses beside it in one call: {_PIP_KEPT}")
    local = next((p for p in packages if _PIP_FILE.search(p)), None)
    if local:
        return (f"{local}: a file, not a package of an index; on a line of its own, a file missing or built for another "
                f"python fails alone: {_PIP_KEPT}")
    return ""


#: a pip argument that names a file or folder (a wheel, ``.``, ``~/src``), not a requirement or a URL
_PIP_FILE = re.compile(r"^[.~$/]|^[^:@]*/|\.(whl|zip|tar\.gz|tgz|tar\.bz2)$")


def _pins(requirement: str) -> bool:
    """Whether a requirement names a version (``a==1.0``, ``a>=2``, a file): a bare name joins any other."""
    return bool(re.search(r"[<>=!~@]", requirement)) or bool(_PIP_FILE.search(requirement))


def _project(requirement: str) -> str:
    """The project a requirement or a wheel's file names (``torch==2.3``, ``~/w/torch-2.3-cp311-...whl``: torch)."""
    name = requirement.rsplit("/", 1)[-1] if _PIP_FILE.search(requirement) else requirement
    name = name.split("-", 1)[0] if name.endswith(".whl") else name
    return re.sub(r"[-_.]+", "-", re.split(r"[<>=!~\[;@ ]", name, 1)[0]).lower()


def _upgrades_pip_only(rest: List[str]) -> bool:
    """``pip install --upgrade pip``: slurmkit's recipe upgrades pip itself."""
    return [w for w in rest if not w.startswith("-")] == ["pip"] and all(
        w in _PIP_PLAIN or w in ("-U", "--upgrade") for w in rest if w.startswith("-"))


def _venv_made(venv: Dict, words: List[str], in_tmpdir: bool = False) -> _Verdict:
    """``virtualenv PATH``, ``python -m venv PATH``: a lasting one is venv.path; slurmkit makes
    the one in $SLURM_TMPDIR itself (also a relative PATH after a ``cd $SLURM_TMPDIR``)."""
    path = next((w for w in words[1:] if not w.startswith("-") and w not in ("venv",)), "")
    if path and not _per_job(path, in_tmpdir):
        venv["path"] = _home(path)
    return _MAPPED


def _per_job(folder: str, in_tmpdir: bool) -> bool:
    """Whether a virtualenv's folder is in $SLURM_TMPDIR: made for this job, gone at its end."""
    return _tmpdir(folder) is not None or (in_tmpdir and not folder.startswith(("/", "~", "$")))


def _venv_activated(venv: Dict, activate: str, in_tmpdir: bool = False) -> _Verdict:
    """``source FOLDER/bin/activate``: a folder outside $SLURM_TMPDIR is a virtualenv made before the job."""
    folder = activate[:-len("bin/activate")].rstrip("/") or "."
    if _per_job(folder, in_tmpdir):
        return _MAPPED
    venv["path"] = _home(folder)
    return ("mapped", "an existing virtualenv: used as it is (slurmkit makes it only where it is missing)")


def _venv_installs(venv: Dict, words: List[str]) -> _Verdict:
    """``pip install [-r FILE] PACKAGE...``: the packages and the first requirements file (pip itself is slurmkit's)."""
    start = words.index("install") + 1
    requirements = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-r", "--requirement")]
    packages = [w for i, w in enumerate(words[start:], start) if not w.startswith("-") and words[i - 1] not in ("-r", "--requirement")]
    if requirements:
        venv["requirements"] = requirements[0]
    if packages == ["pip"] and not requirements:
        return ("dropped", "the virtualenv's pip is upgraded where slurmkit makes it; one that exists keeps the pip it has, "
                           "which installs from the wheelhouse as it did")
    packages = [p for p in packages if p != "pip"]
    if packages:
        listed = venv.setdefault("packages", [])
        listed.extend(p for p in dict.fromkeys(packages) if p not in listed)   # the same requirement twice is one
    return _MAPPED


def _home(path: str) -> str:
    """``~/x`` as ``$HOME/x``: a spec path expands ``$NAME`` but not ``~``."""
    return "$HOME" + path[1:] if path == "~" or path.startswith("~/") else path


def _is_venv(words: List[str]) -> bool:
    if words[0] == "virtualenv" or words[:3] in (["python", "-m", "venv"], ["python3", "-m", "venv"]):
        return True
    if words[0] in ("source", ".") and len(words) > 1 and _venv_activate(words[1]):
        return True
    return words[:2] in (["pip", "install"], ["pip3", "install"], ["python", "-m"]) and "install" in words[:4]


def _venv_activate(path: str) -> bool:
    """``X/bin/activate``, also ``bin/activate`` (the venv is the current folder): a virtualenv's
    activation; conda's is ``activate`` alone (``source activate NAME``)."""
    return path == "bin/activate" or path.endswith("/bin/activate")


def _export_line(build: _Builder, words: List[str], unit: str) -> Optional[_Verdict]:
    assignment = _assignment(words)
    if assignment is None or "=" not in assignment:
        return None
    if words[0] == "export" and len(raw_words(unit.split(" #")[0])) > 2:
        return ("kept", "several assignments: run as written before the program (environment.setup)")
    name, _, value = assignment.partition("=")
    typo = typo_note(name)
    if typo:  # it does nothing where it is; setting the right one would change what the job does
        return ("dropped", typo)
    if name in DERIVED_VARIABLES and _as_slurmkit_sets(build, value):
        return ("dropped", f"slurmkit sets {name} from cpus_per_task")
    if name in DERIVED_VARIABLES:
        return ("kept", f"the script ran {value} threads where slurmkit would set {name} to the job's cpus_per_task: "
                        "run as written after slurmkit's, so the program keeps the script's count (environment.setup)")
    if name in RENDEZVOUS_VARIABLES:
        build.rendezvous.append((0, unit, name))
    if name == "MODULEPATH":   # as `module use`: the loads after it may come from that folder
        build.module_use = True
        return ("kept", "a module folder of your own: set as written (environment.setup), with the loads after it")
    if "$" in unit or "`" in unit or words[0] != "export":
        return ("kept", "computed by the shell: run as written before the program (environment.setup)")
    if "~" in unit:   # environment.variables are exported as written: '~/x' would never become $HOME/x
        return ("kept", "bash expands its ~: run as written before the program (environment.setup)")
    if name in build.in_order:
        return ("kept", f"the script sets {name} more than once, or reads it before this line: run in order before "
                        "the program (environment.setup), where each value holds where the script gave it")
    build.section("environment").setdefault("variables", {})[name] = value
    return _MAPPED


def _set_in_order(script: bashtree.Script) -> FrozenSet[str]:
    """The names whose value depends on where the script is: set more than once (the later value
    wins from its line on), or read on a line before the first that sets them. environment.variables
    are set before any setup line runs, so only setup, in order, keeps what such a name holds."""
    first: Dict[str, int] = {}
    twice = set()
    for assignment in bashtree.assignments(script.statements):
        if assignment.name in first:
            twice.add(assignment.name)
        first.setdefault(assignment.name, assignment.line)
    read_early = {name for command in bashtree.walk(script.statements)
                  for name in _names_read(command.text) if command.line < first.get(name, 0)}
    return frozenset(twice | read_early)


def _names_read(text: str) -> Set[str]:
    return {a or b for a, b in re.findall(r"\$(?:\{([A-Za-z_]\w*)|([A-Za-z_]\w*))", text)}


def _assignment(words: List[str]) -> Optional[str]:
    """``NAME=value`` of ``export NAME=value`` or of a line that is only an assignment."""
    if words[0] == "export":
        return words[1] if len(words) > 1 else None
    return words[0] if re.match(r"^[A-Za-z_]\w*=", words[0]) and len(words) == 1 else None


def _as_slurmkit_sets(build: _Builder, value: str) -> bool:
    """Whether an OMP_NUM_THREADS value is the one slurmkit sets: the task's cores, by name or number."""
    cpus = build.spec["resources"].get("cpus_per_task", 1)
    return bool(re.fullmatch(r"['\"]?\$\{?SLURM_CPUS_PER_TASK(:-1)?\}?['\"]?", value)) or value.strip("'\"") == str(cpus)


def _cd_line(build: _Builder, words: List[str], unit: str) -> Optional[_Verdict]:
    if words[0] == "cd" and len(words) == 2 and words[1].strip("{}$\"") in ("SLURM_SUBMIT_DIR", "PBS_O_WORKDIR"):
        if _cd_kept_before(build):
            return ("kept", "back to the submit folder after an earlier cd: run as written before the program (environment.setup)")
        return ("dropped", "a job starts in the folder it was submitted from")
    return None


def _cd_kept_before(build: _Builder) -> bool:
    """Whether a setup line already kept changes folder (``cd $SLURM_TMPDIR``): a later ``cd
    $SLURM_SUBMIT_DIR`` then brings the job back, and dropping it would run the program elsewhere."""
    return any(re.match(r"\s*(cd|pushd)\b", str(line)) for line in build.setup)


def _stage_line(build: _Builder, words: List[str], unit: str) -> Optional[_Verdict]:
    """Copies to ``$SLURM_TMPDIR`` are stage.inputs, copies from it stage.outputs; a folder made
    there is kept."""
    if words[0] == "tar":
        return _untar_in(build, words)
    if "|" in words:
        return _piped_untar_in(build, words)
    if words[0] == "cp":
        return _copy_stage(build, words)
    paths = [w for w in words[1:] if not w.startswith("-")]
    if words[0] == "mkdir" and paths and all(_tmpdir(p) is not None for p in paths):
        return ("kept", "the program writes there: made as written before it starts (environment.setup)")
    return None


def _untar_in(build: _Builder, words: List[str], archive: Optional[str] = None) -> Optional[_Verdict]:
    """``tar -xf X -C $SLURM_TMPDIR[/to]``, extracting the whole archive as stage.inputs does
    (``archive``: the one a decompressor pipes to tar)."""
    if "-C" not in words[:-1]:
        return None
    to = _tmpdir(words[words.index("-C") + 1])
    archive = archive or _whole_archive(words)
    if to is None or not archive or not archive.endswith(tuple(suffix for suffix, _ in TAR_SUFFIXES)):
        return None   # (a suffix stage.inputs does not extract, .tar.lz4, would be copied as a file)
    archive = bashtree.substituted(archive, build.values)
    if _tmpdir(archive) is not None:
        return None   # an archive the job put in $SLURM_TMPDIR itself: unpacked there in order, after it arrived
    if any((a or b) in build.assigned for a, b in _VARIABLE.findall(archive)):
        return None   # a name the script sets, to a value import cannot tell: staged in before it is set, it would be unbound
    here = _input_here(build, archive)
    if here is None or _made_by_an_earlier_line(build, to):
        return None
    _add_input(build, here, to)
    return _MAPPED


_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")

#: tar's long options that change only how an archive is read or reported, not which files land where
_PLAIN_TAR_OPTIONS = frozenset(("--extract", "--get", "--verbose", "--gzip", "--gunzip", "--bzip2", "--xz", "--zstd",
                                "--no-same-owner", "--same-permissions", "--preserve-permissions", "--totals", "--file",
                                "--directory", "--use-compress-program"))
#: tar's options whose value is the next word
_TAR_VALUED = ("-C", "--directory", "-f", "--file", "-I", "--use-compress-program")


def _whole_archive(words: List[str]) -> Optional[str]:
    """The archive ``tar`` extracts whole (``-`` for its input), or None where an option or a
    member name changes which files land where (``--strip-components=1``, ``--exclude``,
    ``data/a.npy``): stage.inputs extracts all of it as it is, so such a line stays as written."""
    rest, archive, index = list(words[1:]), None, 0
    if rest and not rest[0].startswith("-"):
        rest[0] = "-" + rest[0]   # the old style: tar xzf A
    while index < len(rest):
        name, equals, value = rest[index].partition("=")
        cluster = name.startswith("-") and not name.startswith("--")
        if (name in _TAR_VALUED or (cluster and name.endswith("f"))) and not equals:
            if index + 1 == len(rest):
                return None
            index, value = index + 1, rest[index + 1]
        if not _plain_tar_word(name, value):
            return None
        if name == "--file" or (cluster and name.endswith("f")):
            archive = value
        index += 1
    return archive


def _plain_tar_word(name: str, value: str) -> bool:
    """Whether tar's word ``name`` (with its ``value``) changes only how the archive is read: a
    cluster of x, v, z, j, J, p, o and a last f, an option of _PLAIN_TAR_OPTIONS, a compressor for -I."""
    from slurmkit.port.tracerecord import compressor

    if name in ("-I", "--use-compress-program"):
        return compressor(value)
    if name.startswith("--"):
        return name in _PLAIN_TAR_OPTIONS
    if name.startswith("-"):
        return name in _TAR_VALUED or (set(name[1:]) <= set("xvzjJpof") and "f" not in name[1:-1])
    return False


def _piped_untar_in(build: _Builder, words: List[str]) -> Optional[_Verdict]:
    """``zstd -dc X | tar -xf - -C $SLURM_TMPDIR`` (pigz, xz, zcat...): X extracted, as stage.inputs
    extracts it (tar reads its compression by itself). The trace's decompressor names X to tar."""
    from slurmkit.port.tracerecord import piped_archive_source

    bar = words.index("|")
    left, right = words[:bar], words[bar + 1:]
    if words.count("|") != 1 or right[:1] != ["tar"] or _whole_archive(right) not in (None, "-"):
        return None
    archive = piped_archive_source(os.path.basename(left[0]), left[1:])
    extracts = "--extract" in right or any("x" in w for w in right[1:] if not w.startswith("--") and
                                             (w.startswith("-") or w is right[1]))
    if not (archive and extracts and _untar_in(build, right, archive)):
        return None
    return ("mapped", f"stage.inputs: {PIPED_ARCHIVE}")


_GLOB = re.compile(r"[*?\[]")


def _copy_stage(build: _Builder, words: List[str]) -> Optional[_Verdict]:
    """``cp [-r] X $SLURM_TMPDIR[/to]`` in; ``cp [-r] $SLURM_TMPDIR/X Y`` out (where the shell
    computes no part of the other path)."""
    paths = [w for w in words[1:] if not w.startswith("-")]
    if len(paths) != 2:
        return None
    source, target = paths
    if _GLOB.search(source):
        return None   # a stage path is one path, quoted: `cp *.json $SLURM_TMPDIR` stays a line bash expands
    if _STAGED_UNPACKED.search(source.rstrip("/")):
        return None   # stage.inputs unpacks an archive (mounts an image) where cp copied the file: the line stays
    to, copied = _tmpdir(target), _tmpdir(source)
    here = _input_here(build, source) if "$" not in source else None
    if to is not None and here is not None and not _into_a_made_folder(build, target, to) \
            and not _made_by_an_earlier_line(build, to):
        _add_input(build, here, to)
        return _MAPPED
    if copied and "$" not in copied and "$" not in _known_names_out(target, destination=True):
        _add_output(build, {"from": copied, "to": _home(target)})
        return ("mapped", "copied back on every exit, and before the time limit")
    return None


#: what stage.inputs unpacks or mounts rather than copies: tar archives, squashfs images, packs
_STAGED_UNPACKED = re.compile(r"\.(tar|tgz|txz|tzst|tar\.(gz|xz|bz2|zst)|sqfs|squashfs|pack)$")


def _into_a_made_folder(build: _Builder, target: str, to: str) -> bool:
    """``cp X $SLURM_TMPDIR/data/`` (or into a folder an earlier line made): cp puts X inside a
    folder the job's own lines make, after them. Staged in, it would run before those lines and
    write ``data`` as the file itself (and a later ``mkdir`` of it would fail): the line stays as
    written, in its place."""
    if not to:
        return False
    made = (path for line in build.setup if re.match(r"\s*mkdir\b", str(line)) for path in str(line).split()[1:])
    return target.endswith("/") or any(_tmpdir(path) == to for path in made)


def _made_by_an_earlier_line(build: _Builder, to: str) -> bool:
    """Whether a line before this one, other than a copy or a mkdir, names the folder of
    $SLURM_TMPDIR that this copy writes into (``virtualenv $SLURM_TMPDIR/venv``, then ``cp fix.py
    $SLURM_TMPDIR/venv/lib/...``): that line makes it, and a stage-in, which runs before every
    line of the job, would write into nothing, or be overwritten. The line stays in its place."""
    top = to.split("/", 1)[0]
    if not top:
        return False
    named = re.compile(r"\$\{?SLURM_TMPDIR\}?/" + re.escape(top) + r"(?![\w.-])")
    earlier = build.text.splitlines()[:max(build.line - 1, 0)]
    return any(named.search(line) and not re.match(r"\s*(#|mkdir|cp|tar|rsync)\b", line) for line in earlier)


def _input_here(build: _Builder, source: str) -> Optional[str]:
    """``source`` as the line read it, from the folder the script was in (after ``cd run1``,
    ``data.tar`` is ``run1/data.tar``): a stage-in runs before every line, in the submit folder.
    None where a ``cd`` before it went where import cannot tell: the line stays in its place."""
    return workdir.resolved(source, _folder_here(build))


def _folder_here(build: _Builder) -> Optional[str]:
    """The folder the script is in at the line being read (workdir.folder_at), from the one
    --chdir started it in: "" for the submit folder, None where import cannot tell."""
    folder = workdir.folder_at(build.tree, build.values, build.line) if build.line else ""
    if not build.chdir or folder is None or folder.startswith(("/", "$")):
        return folder
    return posixpath.normpath(posixpath.join(build.chdir, folder)) if folder else build.chdir


def _add_input(build: _Builder, source: str, to: str) -> None:
    """``source`` copied into ``$SLURM_TMPDIR/to`` (the folder itself where ``to`` is empty)."""
    build.section("stage").setdefault("inputs", []).append({"from": _home(source), "to": to} if to else _home(source))


def _add_output(build: _Builder, output: Dict) -> None:
    """A copy back, once: a trap and the script's last line often copy the same folder."""
    outputs = build.section("stage").setdefault("outputs", [])
    if output not in outputs:
        outputs.append(output)


def _tmpdir(path: str) -> Optional[str]:
    """``$SLURM_TMPDIR/data/`` -> ``data``; ``$SLURM_TMPDIR`` -> ``""``; None where it is not under it."""
    match = re.fullmatch(r"\$\{?SLURM_TMPDIR\}?(/.*)?", path)
    return None if match is None else (match.group(1) or "").strip("/")


def _broken_commands(build: _Builder, script: bashtree.Script) -> None:
    """A command a backslash meant to continue, which bash ended (bashtree.Broken), and a program
    whose name is an option (``--nthread 4``, the rest of such a command): bash runs the first
    without its last words and fails on the second (command not found), and import reads them as
    bash does, so each is a to-do that says to join the lines, one for each command cut in two."""
    lines = build.text.splitlines()
    for broken in script.broken:
        option = broken.next_text.startswith("-")
        advice = ("join the lines" if option else f"if line {broken.next_line} continues this command, join the lines, "
                  "else remove the backslash (it gives the command one more argument, a blank)")
        build.note(broken.line, lines[broken.line - 1].strip(), "to do",
                   f"{broken.why} ends the command on this line; bash runs line {broken.next_line}, "
                   f"`{broken.next_text}`, as a command of its own{' (an option, no program)' if option else ''}: {advice} "
                   "(a backslash continues a line only as its last character, with no comment after it)")
    program = build.program.command if build.program else None
    if program is not None and program.name.startswith("-") and program.line not in {b.next_line for b in script.broken}:
        build.note(program.line, lines[program.line - 1].strip(), "to do",
                   f"bash runs `{program.name}`, an option, as a command (command not found): these words belong to "
                   "the command before them; join the lines with a backslash as the last character of each")


#: the signals of a trap that copies results back: slurmkit saves stage.outputs on each of them itself
COPY_BACK_SIGNALS = frozenset(("USR1", "SIGUSR1", "10", "EXIT", "TERM", "SIGTERM"))


def _collect_traps(build: _Builder, script: bashtree.Script) -> None:
    """The traps set for the job's end or its time limit, and, for each function they call, the
    copies back out of $SLURM_TMPDIR it makes (stage.outputs), read through the variables it sets."""
    build.values = bashtree.known_values(script.statements)
    build.assigned = bashtree.assigned(script.statements)
    program_line = build.program.command.line if build.program is not None else 1 << 30
    build.save_values = trapsave.values_at_save(script, program_line)
    build.made = trapsave.made_folders(script, build.save_values)
    for trap in bashtree.traps(script):
        if not COPY_BACK_SIGNALS & set(trap.signals):
            continue
        build.traps[trap.action.strip()] = (trap.line, trap.command.text)
        for function in trap.functions:
            outputs = _trap_outputs(build, function.body)
            if outputs:
                build.copy_backs[function.name] = outputs


def _trap_line(build: _Builder, words: List[str], unit: str) -> Optional[_Verdict]:
    if words[0] != "trap" or len(words) < 3:
        return None
    action = words[1].strip()
    if action in build.copy_backs:
        return ("dropped", "slurmkit saves stage.outputs on every exit and on USR1 before the time limit")
    if _trap_copy_backs(build, action):
        return ("mapped", "a copy-back trap: its copies are stage.outputs, saved on every exit and before the time limit")
    if action in build.traps and re.fullmatch(r"[A-Za-z_][\w-]*", action):
        return ("to do", f"{action} runs at the job's end or at its time limit, and import finds in it no copy out of "
                         "$SLURM_TMPDIR it can read as stage.outputs (slurmkit's own exit handling saves only those): list "
                         "what it saves as stage.outputs, or carry it over by hand" + _unsaved_signal(build, words))
    return ("kept",)


def _unsaved_signal(build: _Builder, words: List[str]) -> str:
    """A copy-back trap on USR1 left to do: the script's --signal=B:USR1@N was for it, and is
    slurmkit's own once the trap's copies are stage.outputs (_signal_and_requeue drops it)."""
    if build.signal is None or not {"USR1", "SIGUSR1", "10"} & set(words[2:]):
        return ""
    build.unsaved_usr1 = build.traps.get(words[1].strip(), (build.signal[0], ""))[0]
    return (f"; give stage.lead: {build.signal[3]}s (the script's --signal time), and slurmkit asks for USR1 itself "
            "and saves them then")


def _trap_copy_backs(build: _Builder, text: str) -> bool:
    """A trap's action (``trap 'cp -r $SLURM_TMPDIR/out $OUT' EXIT``) read as _trap_outputs reads
    a function the trap calls; every copy out of $SLURM_TMPDIR must be read, or none is mapped."""
    outputs = _trap_outputs(build, bashtree.parse(text).statements)
    for output in outputs:
        _add_output(build, output)
    return bool(outputs)


def _trap_outputs(build: _Builder, statements: Sequence[bashtree.Statement]) -> List[Dict]:
    """The copies out of $SLURM_TMPDIR a trap makes, as stage.outputs, with what it reads when
    it runs put in first (trapsave.values_at_save); none where one copy cannot be read (its save
    would be lost without a word, the trap being dropped for the others)."""
    found = []
    for command in bashtree.walk(statements):
        if command.name not in ("cp", "rsync"):
            continue
        paths = [bashtree.substituted(w, build.save_values) for w in command.argv[1:] if not w.startswith("-")]
        if not any(_tmpdir(p) is not None or "SLURM_TMPDIR" in p for p in paths[:-1]):
            continue
        output = _trap_output(build, command.name, paths)
        if output is None:
            return []
        found.append(output)
    return found


def _trap_output(build: _Builder, program: str, paths: List[str]) -> Optional[Dict]:
    """``cp|rsync $SLURM_TMPDIR/X DEST`` as {from: X, to: ...}; None where X or DEST is not one
    path (_one_path). A folder the script makes is one that exists: the copy goes inside it."""
    source = _tmpdir(paths[0]) if len(paths) == 2 else None
    if not source or not _one_path(source):
        return None
    destination = _home(paths[1])
    if not _one_path(destination, destination=True):
        return None
    if destination.rstrip("/") in build.made and not destination.endswith("/"):
        destination += "/"
    return {"from": source, "to": _home(_copied_to(program, paths[0], destination))}


def _copy_backs(build: _Builder, text: str, statements: Optional[Sequence[bashtree.Statement]] = None) -> bool:
    """Map each copy out of $SLURM_TMPDIR in ``text`` (a trap's action, a line; ``statements``
    where it is read already) to stage.outputs."""
    outputs = _outputs(build, bashtree.parse(text).statements if statements is None else statements)
    for output in outputs:
        _add_output(build, output)
    return bool(outputs)


def _outputs(build: _Builder, statements: Sequence[bashtree.Statement]) -> List[Dict]:
    """``cp [-r] $SLURM_TMPDIR/X Y`` and ``rsync ... $SLURM_TMPDIR/X Y`` in ``statements`` as
    stage.outputs, each variable whose value is certain (bashtree.known_values) put in first."""
    found = []
    for command in bashtree.walk(statements):
        if command.name not in ("cp", "rsync"):
            continue
        paths = [bashtree.substituted(w, build.values) for w in command.argv[1:] if not w.startswith("-")]
        if len(paths) == 2 and _tmpdir(paths[0]) and _one_path(_tmpdir(paths[0]) or "") and _one_path(_home(paths[1]), destination=True):
            found.append({"from": _tmpdir(paths[0]), "to": _home(_copied_to(command.name, paths[0], paths[1]))})
    return found


def _one_path(path: str, destination: bool = False) -> bool:
    """A stage path is one path, quoted, in which only $HOME (and the like) expand: one with a
    glob or another variable (``$SLURM_TMPDIR/$SLURM_JOB_NAME``) is not read as stage.outputs. A
    destination may name the job too (``$HOME/res/$SLURM_JOB_ID``): SLURM sets it before any
    line, and it holds the same when the outputs are saved."""
    return not _GLOB.search(path) and "$" not in _known_names_out(path, destination)


def _known_names_out(path: str, destination: bool) -> str:
    """``path`` without the variables a stage path may hold (those of the job, in a destination)."""
    names = "HOME|SCRATCH|PROJECT|SLURM_SUBMIT_DIR" + ("|SLURM_JOB_ID|SLURM_JOBID|SLURM_JOB_NAME|SLURM_ARRAY_JOB_ID|"
                                                      "SLURM_ARRAY_TASK_ID" if destination else "")
    return re.sub(rf"\$\{{?({names})\}}?(?!\w)", "", path)


#: folders that are there whenever a job runs: a copy into one goes inside it
_EXISTING_FOLDERS = re.compile(r"\.|~|\$\{?(SLURM_SUBMIT_DIR|HOME|SCRATCH|PROJECT|PWD)\}?")


def _copied_to(program: str, source: str, destination: str) -> str:
    """What ``cp``/``rsync SOURCE DESTINATION`` makes, as stage.outputs' ``to`` (the path the copy
    becomes). The copy goes inside, under its own name, a destination ending in ``/`` or one that
    is always there (``cp -r out results/`` makes results/out), and rsync puts a folder (``out``,
    a name with no suffix) inside any destination; rsync's ``out/`` is its contents, which join it."""
    name = posixpath.basename(source.rstrip("/"))
    folder = destination.rstrip("/") or destination
    if program == "rsync" and source.endswith("/") or name in ("", ".", "..") or any(c in name for c in "*?["):
        return folder
    inside = destination.endswith("/") or _EXISTING_FOLDERS.fullmatch(folder) is not None \
        or (program == "rsync" and "." not in name.lstrip("."))
    return (name if folder == "." else f"{folder}/{name}") if inside else folder


def _after_launch(build: _Builder, number: int, unit: str) -> None:
    """A line after the program's: a copy back, a report or a clean-up has a place in the spec;
    anything else runs after the program only in a launch without a launcher."""
    words = _unit_words(build, number, unit)
    verdict = _after_launch_verdict(build, words, unit) if words else None
    if words and words[0] in _FOLDER_MOVES and _only_reports_after(build, number):
        verdict = ("dropped", "it changes the folder after the program, and nothing after it uses that folder")
    if not verdict and _only_removes_scratch(build, unit):
        verdict = ("dropped", "$SLURM_TMPDIR is removed when the job ends")
    if verdict:
        build.note(number, unit, *verdict)
    elif _launcher_stays_in_the_shell(build):
        _run_after_launcher(build, number, unit)
    elif build.launch_as_written is not None and build.spec["launch"].get("launcher", "direct") == "direct":
        _run_after(build, number, unit)   # the batch shell runs the launch once: the line after it too
    else:
        build.note(number, unit, "to do", _after_launch_advice(build, number, unit))


def _launcher_stays_in_the_shell(build: _Builder) -> bool:
    """Whether a line after an ``srun``/``mpirun`` program can run after it in one shell block
    that starts the program itself (launcher direct), as the batch script did: a job started
    with no ``VAR=x`` prefix, whose launch is that one line, by srun (told its cores again where
    a task has several: _SRUN_CPUS; its tasks share the job's GPUs as the script's did) or, on
    CPUs, by mpirun of one core a rank (several need the binding slurmkit's mpirun gives)."""
    launch, res, written = build.spec["launch"], build.spec["resources"], build.launch_as_written
    if launch.get("launcher") == "direct":   # moved there by a line before this one
        return written is not None and launch.get("shell", "").startswith(f"{build.launcher_name} {written}")
    return (build.launcher_name in ("srun", "mpirun") and launch.get("launcher") == build.launcher_name
            and ("gpus" not in res or build.launcher_name == "srun")
            and (res.get("cpus_per_task", 1) == 1 or build.launcher_name == "srun" or _open_mpi(build)) and written is not None
            and (launch.get("command") == written or launch.get("shell", "").startswith(written))
            and not _ASSIGNMENT_FIRST.match(written))


#: srun's cores per task, said again: since Slurm 22.05 srun no longer reads them from the job
#: ("srun will no longer read in SLURM_CPUS_PER_TASK", 22.05's release notes), so a task of a
#: hybrid job would get one core
_SRUN_CPUS = ' --cpus-per-task="$SLURM_CPUS_PER_TASK"'


#: Open MPI's binding of ranks of several cores, as slurmkit's own mpirun gives it (core.launchers)
_OPEN_MPI_BINDING = ' --bind-to core --map-by slot:PE="$SLURM_CPUS_PER_TASK"'


def _several_cores(build: _Builder) -> bool:
    return build.launcher_name == "srun" and build.spec["resources"].get("cpus_per_task", 1) > 1


def _open_mpi(build: _Builder) -> bool:
    """Whether the job's mpirun is Open MPI's: the last MPI module the script loads, else the
    one every Alliance StdEnv loads by default."""
    modules = [str(m).split("/")[0].lower() for m in build.spec.get("environment", {}).get("modules") or ()]
    flavours = [MPI_MODULES[m] for m in modules if m in MPI_MODULES]
    return build.launcher_name == "mpirun" and (flavours or ["openmpi"])[-1] == "openmpi"


def _launcher_words(build: _Builder) -> str:
    """What the launcher is told again where its line runs as written: srun the cores of a task
    (_SRUN_CPUS), Open MPI's mpirun the binding of ranks of several cores that slurmkit's own
    mpirun gives (else each rank's threads share the cores the default binding picks)."""
    if _several_cores(build):
        build.note(0, "srun", "mapped", "srun is given --cpus-per-task=\"$SLURM_CPUS_PER_TASK\": since Slurm 22.05 it no "
                                        "longer reads the job's (22.05's release notes), which the script's srun relied on")
        return _SRUN_CPUS
    if build.launcher_name == "mpirun" and build.spec["resources"].get("cpus_per_task", 1) > 1 and _open_mpi(build):
        build.note(0, "mpirun", "mapped", f"mpirun is given{_OPEN_MPI_BINDING}: each rank's threads get its own cores, as "
                                          "slurmkit's mpirun binds ranks of several cores")
        return _OPEN_MPI_BINDING
    return ""


def _launcher_into_the_shell(build: _Builder) -> None:
    """The launch as the batch script ran it: its launcher's line, run once by the batch shell
    (launcher direct), so that what the line adds (a redirection, ``&& touch DONE``) and what
    comes after it run once, after every task ended, not once per task."""
    launch = build.spec["launch"]
    if launch["launcher"] != "direct":
        shell = launch.pop("shell", None) or launch.pop("command")
        launch.pop("command", None)
        launch["launcher"] = "direct"
        launch["shell"] = f"{build.launcher_name}{_launcher_words(build)} {shell}"
    build.per_task_shell = None
    build.tee_free = None


#: a launch line that starts with ``NAME=value``
_ASSIGNMENT_FIRST = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _run_after_launcher(build: _Builder, number: int, unit: str) -> None:
    """A serial step after the tasks' program (``reconstructPar`` after ``srun simpleFoam``, a
    marker, a copy of the result): the launch becomes the batch script's own lines, the
    launcher's line (counts from the job's request) and then this one, run once, in order, as
    the script did. slurmkit's launcher would run every line once per task."""
    _launcher_into_the_shell(build)
    build.spec["launch"]["shell"] += "\n" + _array_names(build, unit)
    build.note(number, unit, "kept", f"it ran once after {build.launcher_name}'s tasks ended: the launch is now the script's own "
               f"lines, {build.launcher_name} then this, run once in order (launcher direct; the tasks as the request gives them)")


def _only_removes_scratch(build: _Builder, unit: str) -> bool:
    """A loop (or list) after the program whose every command is an ``rm`` of files in $SLURM_TMPDIR."""
    commands = [c for c in bashtree.walk(bashtree.parse(unit).statements) if c.argv]   # (a for ((...)) header has none)
    return bool(commands) and all(c.name == "rm" and all(_tmpdir(bashtree.substituted(w, build.values)) is not None
                                                         for w in c.argv[1:] if not w.startswith("-")) for c in commands)


#: commands that only change the shell's folder
_FOLDER_MOVES = ("cd", "pushd", "popd")


def _only_reports_after(build: _Builder, number: int) -> bool:
    """Whether every command after line ``number`` only reports, changes folder or exits: a
    trailing ``cd ..`` then changes nothing the job does."""
    later = [c for line in build.tree if line > number for c in build.tree[line] if isinstance(c, bashtree.Command)]
    return all(c.name in _FOLDER_MOVES or c.name in ("exit", "wait") or c.name in INFORMATIONAL for c in later)


def _after_launch_advice(build: _Builder, number: int, unit: str) -> str:
    """Where a line after the program can go: a job that depends on this one cannot see
    $SLURM_TMPDIR (it is on the node and removed at the job's end), so a line that uses it must
    stay in this job, or work on a copy saved as stage.outputs."""
    said = "it runs after the program, and a spec has no place after it that runs once per job"
    if not re.search(r"\$\{?SLURM_TMPDIR\b", bashtree.substituted(unit, build.values)) and not _in_tmpdir(build, number):
        return f"{said}: put it in a wrapper script, or in a job that depends on this one"
    return (f"{said}; it uses $SLURM_TMPDIR, on the node and removed at the job's end, which a later job cannot see: run "
            "the program and then this line from a wrapper script, or save what it needs as stage.outputs for a job that "
            "depends on this one")


def _in_tmpdir(build: _Builder, number: int) -> bool:
    """Whether the script's last ``cd`` (at the top level) before line ``number`` went into
    $SLURM_TMPDIR: the line's relative paths are then there."""
    folder = None
    for first in sorted(line for line in build.tree if line < number):
        for command in build.tree[first]:
            if isinstance(command, bashtree.Command) and command.name == "cd" and not command.within:
                words = command.argv[1:]
                folder = bashtree.substituted(words[0], build.values) if words else "$HOME"
    return folder is not None and _tmpdir(folder) is not None


def _after_launch_verdict(build: _Builder, words: List[str], unit: str) -> Optional[_Verdict]:
    for reader in (_copied_back, _reports_only, _waits_for_launch, _cleans_up):
        verdict = reader(build, words, unit)
        if verdict:
            return verdict
    return None


def _copied_back(build: _Builder, words: List[str], unit: str) -> Optional[_Verdict]:
    if words[0] in ("cp", "rsync") and _copy_backs(build, unit):
        return ("mapped", "stage.outputs: copied back on every exit, and before the time limit")
    if words in ([name] for name in build.saving_functions):   # `save` after the program: the function is gone
        return ("dropped", f"{words[0]}'s copies are stage.outputs, which slurmkit saves when the program ends (and on every "
                           "other exit): the function is not in the new script")
    return None


def _writes_a_file(unit: str) -> bool:
    """Whether a command of ``unit`` sends its output into a file (``>> done.txt``), as bash
    reads it (a ``>`` inside quotes is text), not into a stream (``>&2``, ``> /dev/null``)."""
    commands = list(bashtree.walk(bashtree.parse(unit).statements))
    return any(r.operator in (">", ">>", ">|", "&>", "&>>") and r.target.strip("'\"") not in _STREAMS
               for c in commands for r in c.redirects)


#: where a redirection writes no file
_STREAMS = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")


def _reports_only(build: _Builder, words: List[str], unit: str) -> Optional[_Verdict]:
    """A line after the program that only prints (echo, date, nvidia-smi): the log and `slurmkit
    status` say how the job ended. One that writes a file (``echo $ID >> done.txt``, a marker a
    later run reads) is work, not a report: it runs after the program (_run_after)."""
    if _writes_a_file(unit):
        return None
    if words[0] in INFORMATIONAL or " ".join(words[:2]) in INFORMATIONAL:
        return ("dropped", "it ran after the program only to report: `slurmkit status` and the job's log say how it ended")
    return None


def _waits_for_launch(build: _Builder, words: List[str], unit: str) -> Optional[_Verdict]:
    """``wait`` after a launch that started its runs in the background (``&``) is part of it."""
    if words[:1] == ["wait"] and "&" in split_at_operators(build.spec.get("launch", {}).get("shell", ""))[1]:
        build.spec["launch"]["shell"] += "\n" + unit.strip()
        return ("mapped", "it waits for the runs the launch started in the background: part of launch.shell")
    return None


def _cleans_up(build: _Builder, words: List[str], unit: str) -> Optional[_Verdict]:
    """What a job's end does anyway: deactivate, remove $SLURM_TMPDIR, exit."""
    if words[0] == "deactivate" or words[:2] == ["conda", "deactivate"]:
        return ("dropped", "the job ends after the program: there is nothing to undo")
    if words[0] == "rm" and all(_tmpdir(w) is not None for w in words[1:] if not w.startswith("-")):
        return ("dropped", "$SLURM_TMPDIR is removed when the job ends")
    if _kills_a_setup_job(build, words):
        return ("dropped", "it stops a job the batch shell started in the background before the program: the lines after "
                           "the program now run in a shell of their own, which has no such job (`kill %1` would fail), and "
                           "the job's end stops what the batch shell started")
    if words[0] == "exit" and words[1:] and build.launch_as_written is not None and "launcher" not in build.spec["launch"]:
        return None   # exit $status: the status it names ends the job, as in the script (_run_after keeps it)
    if words[0] in ("exit", "wait"):
        return ("dropped", "the job ends with the program's exit code")
    return None


def _kills_a_setup_job(build: _Builder, words: List[str]) -> bool:
    """``kill %1`` (``%%``, ``%+``, ``%-``) after the program, where the launch started nothing in
    the background itself: the job it names is the batch shell's."""
    specs = [w for w in words[1:] if not w.startswith("-")]
    shell = build.spec.get("launch", {}).get("shell") or ""
    return words[0] == "kill" and bool(specs) and all(w.startswith("%") for w in specs) \
        and "&" not in split_at_operators(shell)[1]


#: commands a module does not change (the shell's own, files, reports): a module line after them moves up freely
_MODULE_FREE = frozenset(("cd", "export", "set", "unset", "source", ".", "mkdir", "cp", "mv", "rm", "ln", "tar", "cat",
                          "touch", "sleep", "true", "module", "ml", "declare", "shopt", "ulimit", "umask", "trap",
                          "rsync", "unzip", "chmod", "deactivate", "git", "wget", "curl", "scp", "gzip", "gunzip", "zcat",
                          "find", "du", "head", "tail", "wc", "sort", "grep", "sed", "awk", "basename", "dirname",
                          "realpath", "readlink", "seq", "nproc", "tee")) | frozenset(w for w in INFORMATIONAL if " " not in w)


def _module_free(command: bashtree.Command) -> bool:
    """Whether no module can change what ``command`` does: a tool of _MODULE_FREE, or ``exec``
    with redirections only (``exec > >(tee log) 2>&1``: the job's output, copied by a tool)."""
    if command.name == "exec" and len(command.argv) == 1:
        substituted = [r.target[2:].split(None, 1) for r in command.redirects if r.target.startswith((">(", "<("))]
        return all(words and words[0] in _MODULE_FREE for words in substituted)
    return command.name in _MODULE_FREE


def _modules_after_runs(build: _Builder) -> None:
    """A module line between two runs: environment.modules loads it before every line of the job,
    so a program the script ran before it now runs with it loaded (another compiler, MPI or
    Python on its paths). A to-do names both lines, so the move is never silent."""
    run: Optional[Note] = None
    for note in sorted(build.notes, key=lambda n: n.line):
        command = _single_command(build, note.line) if note.line else None
        if command is None:
            continue
        if note.outcome == "kept" and command.name and not _module_free(command) and run is None:   # (not X=1)
            run = note
        elif run is not None and note.outcome == "mapped" and command.name in ("module", "ml") and \
                len(command.argv) > 1 and command.argv[1] in ("load", "add") and _load_changes_run(command.argv[2:], run):
            build.note(note.line, note.text, "to do",
                       f"it came after `{run.text}` (line {run.line}), which ran without it; environment.modules loads "
                       "it before every line of the job: check that the earlier run works with it loaded (or load it "
                       "in launch.shell, before the program), then remove this line")


#: module families that change what a build makes or which interpreter runs: a compiler, MPI, python, the stack
_BUILD_FAMILIES = frozenset(("stdenv", "gcc", "gcccore", "intel", "nvhpc", "pgi", "clang", "llvm", "aocc", "openmpi",
                             "intelmpi", "impi", "mpich", "mvapich2", "python"))
#: a step that runs python or pip only: a module outside _BUILD_FAMILIES (cuda, cudnn) does not change it
_PYTHON_STEP = re.compile(r"^\s*(?:python[\d.]*|pip[\d.]*)(?:\s|$)")


def _load_changes_run(modules: List[str], run: Note) -> bool:
    """Whether loading ``modules`` before an earlier run can change it: any module before a
    compiled step; before a pure-Python step (``python setup.py install``), only a compiler, MPI,
    python or the stack (cuda or cudnn loaded early changes nothing pip or python did there)."""
    if not _PYTHON_STEP.match(run.text):
        return True
    return any(m.partition("/")[0].lower() in _BUILD_FAMILIES for m in modules if not m.startswith("-"))


#: a setup line that makes an array: ``NAME=(a b)``, ``NAME+=(c)``, ``declare -a NAME=(...)``
#: the ways a line makes or fills an array, each naming it: NAME=(...), NAME+=(...), NAME[i]=...,
#: declare -a NAME, read -a NAME, mapfile/readarray NAME (at a command's start, in a loop too)
_ARRAY_SETS = (re.compile(r"(?:^|[\s;&|({])([A-Za-z_]\w*)(?:\+?=\(|\[[^\]\n]*\]\+?=)"),
               re.compile(r"(?:^|[\s;&|({])(?:declare|typeset|local)\s+(?:-\w+\s+)*-\w*[aA]\w*\s+(?:-\w+\s+)*([A-Za-z_]\w*)"),
               re.compile(r"(?:^|[\s;&|({])read\s+(?:-\w+\s+)*-\w*a\s*([A-Za-z_]\w*)"),
               re.compile(r"(?:^|[\s;&|({])(?:mapfile|readarray)\s+(?:-[dnOsuCc]\s*\S+\s+|-\w+\s+)*([A-Za-z_]\w*)"))


def _arrays_set(line: str) -> List[str]:
    """The arrays a setup line makes or fills (_ARRAY_SETS), in the order named."""
    found = sorted((m.start(1), m.group(1)) for pattern in _ARRAY_SETS for m in pattern.finditer(line))
    return list(dict.fromkeys(name for _, name in found))


#: what the note says of the line that makes an array run both in setup and at the head of the
#: launch (_arrays_into_launch): its programs start twice, by design, which verification reads
ARRAY_RUN_TWICE = "and in environment.setup for the setup lines that read it"
#: the reason of a decompressor piped to tar that import moved into stage.inputs (verify declares its start)
PIPED_ARCHIVE = "the archive the decompressor piped to tar, which reads its compression itself"


def _arrays_into_launch(build: _Builder) -> None:
    """An array set in setup and read by launch.shell: bash exports no array, and launch.shell
    runs in a child bash, which would see it empty. The lines that make it run at the head of
    launch.shell (in their order); they stay in setup too where a later setup line reads it."""
    shell = build.spec.get("launch", {}).get("shell")
    if shell is None:
        return
    moved = [(i, line, read[0]) for i, line in enumerate(build.setup)
             for read in [[n for n in _arrays_set(line) if re.search(r"\$\{[#!]?" + n + r"\[", shell)]] if read]
    if not moved:
        return
    build.spec["launch"]["shell"] = "\n".join([line for _, line, _ in moved] + [shell])
    for index, line, name in reversed(moved):
        reason = (f"{name} is an array that launch.shell reads: bash exports no array to launch.shell's own bash, so the "
                  "line that makes it runs at the head of launch.shell")
        if any(re.search(r"\$\{[#!]?" + name + r"\[", later) for later in build.setup[index + 1:]):
            reason += ", " + ARRAY_RUN_TWICE
        else:
            del build.setup[index]
        kept = next((i for i, n in enumerate(build.notes) if n.text == line and n.outcome == "kept"), None)
        if kept is None:
            build.note(0, line, "mapped", reason)
        else:
            build.notes[kept] = Note(build.notes[kept].line, line, "mapped", reason)


def _run_after(build: _Builder, number: int, unit: str) -> None:
    """A command after a program started without a launcher: the launch becomes a shell block
    that runs both, in order, as the script did (the job's exit code is the last one's, as there)."""
    launch = build.spec["launch"]
    if "command" in launch:
        del launch["command"]
        launch["shell"] = build.launch_as_written
    launch["shell"] += "\n" + _array_names(build, unit)
    build.note(number, unit, "kept", "it ran after the program: the launch is now a shell block that runs both, in order")


# -------------------------------------------------------------------------------------- launch

def _launch_line(build: _Builder, number: int, line: str) -> None:
    command = _single_command(build, number)
    if "\n" in line and (command is None or command.heredocs):
        build.spec["launch"] = {"shell": _array_names(build, line)}
        build.launch_as_written = build.spec["launch"]["shell"]   # a line after it joins it (_run_after), as after one line
        build.note(number, line, "mapped", "a block of several lines: launch.shell, run by bash as written")
        return
    line = _without_comment(build, number, line)
    whole = _piped_into_parallel(_parallel_words(command, line))
    if whole[:1] == ["parallel"] and _parallel_line(build, number, line, whole):
        return
    _launch_command(build, number, line, command)


def _launch_command(build: _Builder, number: int, line: str, command: Optional[bashtree.Command]) -> None:
    """The launch line of one command (with its launcher, its prefix and its shell tail) as
    launch.command where it is plain words, else launch.shell."""
    head, operators = split_at_operators(line)
    prefix, raw, words = _launch_words(command, head)
    parsed, srun = _launcher_under_srun(launch_options.parse([w.value for w in words] if words else _unquote_all(raw)))
    if not prefix and _kept_with_its_launcher(build, (number, line), parsed, srun):
        return
    program = _program_words(parsed, raw)
    _read_launcher(build, number, line, parsed, srun)
    launch: Dict = {"launcher": parsed.launcher} if parsed.launcher in ("srun", "mpirun") else {}
    tail = _array_names(build, line[len(head):].strip())
    program = [_array_names(build, w) for w in program]
    program_text = " ".join(program)
    build.launch_as_written = " ".join(filter(None, (prefix, program_text, tail)))
    shell_words = [w.text for w in (words or ())[len(raw) - len(parsed.program):] if _needs_bash(w) or _splits(build, w)]
    reason = ""
    if operators or prefix or shell_words or _bash_text(program_text):
        launch["shell"] = build.launch_as_written
        reason = _shell_reason(operators, prefix, shell_words)
        if operators:
            _per_task_line(build, (number, line, operators), (parsed, srun), (prefix, shell_words, program, tail))
    else:
        launch["command"] = " ".join(_spec_word(w, r) for w, r in zip(_unquote_all(program), program))
    build.spec["launch"] = launch
    build.note(number, line, "mapped", reason)


def _kept_with_its_launcher(build: _Builder, at: Tuple[int, str], parsed: launch_options.Parsed,
                            srun: Optional[launch_options.Parsed]) -> bool:
    """Whether the launch line is kept as written, its launcher and all (``srun --multi-prog``,
    a torchrun count of its own), and so noted."""
    if parsed.launcher == "srun" and any(option == "--multi-prog" for option, _, _ in parsed.options):
        _multi_prog_line(build, *at)
        return True
    if srun is None and _torchrun_count_of_its_own(build, parsed):
        _torchrun_as_written(build, *at, parsed)
        return True
    if srun is None and _srun_count_of_its_own(build, parsed):
        _srun_as_written(build, *at, parsed)
        return True
    return False


#: srun's options that say how many tasks or nodes its step takes
_STEP_COUNTS = {"-n": "tasks", "--ntasks": "tasks", "-N": "nodes", "--nodes": "nodes"}


def _srun_count_of_its_own(build: _Builder, parsed: launch_options.Parsed) -> bool:
    """``srun -n 1 -N 1 ./driver`` in a job of 2 tasks on 2 nodes: a step of fewer tasks or nodes
    than the job's, said in plain numbers (a Spark driver beside a worker step, one rank of a
    bigger allocation): slurmkit's srun would start one a task of the job."""
    if parsed.launcher != "srun":
        return False
    res = build.spec["resources"]
    whole = {"tasks": _total_tasks(build), "nodes": res.get("nodes", 1)}
    counts = [(_STEP_COUNTS[option], values[0]) for option, values, _ in parsed.options if option in _STEP_COUNTS and values]
    return any(value.isdigit() and int(value) < whole[what] for what, value in counts)


def _srun_as_written(build: _Builder, number: int, line: str, parsed: launch_options.Parsed) -> None:
    """The srun line of a step of its own size (_srun_count_of_its_own), as the script wrote it,
    started once by the batch shell (launcher direct): it takes the tasks it names, as it did."""
    build.launcher_name = "srun"
    text = _array_names(build, line.strip())
    told = any(option in ("-c", "--cpus-per-task") for option, _, _ in parsed.options)
    shell = text.replace("srun", "srun" + _SRUN_CPUS, 1) if _several_cores(build) and not told else text
    build.spec["launch"] = {"launcher": "direct", "shell": shell}
    build.launch_as_written = shell
    build.note(number, line, "kept", f"its step takes the tasks it names, fewer than the job's {_total_tasks(build)}: the launch "
                                     "is the script's line as written (launcher direct), run once by the batch shell, as it was")


def _torchrun_count_of_its_own(build: _Builder, parsed: launch_options.Parsed) -> Optional[str]:
    """torchrun's (or torch.distributed.launch's) ``--nproc_per_node N`` on one node, N unlike
    the node's GPUs (one process that sees 4 GPUs): the distributed kinds start one process a GPU."""
    res = build.spec["resources"]
    gpus = str(res.get("gpus", "")).rpartition(":")[2]
    procs = next((values[0] for option, values, _ in parsed.options if option in ("--nproc_per_node", "--nproc-per-node") and values), "")
    procs = bashtree.substituted(procs, build.values)   # N=2 set by the script, then --nproc_per_node=$N
    if parsed.launcher != "torchrun" or res.get("nodes", 1) > 1 or not (gpus.isdigit() and procs.isdigit()):
        return None
    return procs if procs != gpus else None


def _torchrun_as_written(build: _Builder, number: int, line: str, parsed: launch_options.Parsed) -> None:
    """The torchrun line of a count of its own (_torchrun_count_of_its_own), as the script wrote
    it, started once by the batch shell: its processes see every GPU of the job, as they did."""
    procs = _torchrun_count_of_its_own(build, parsed)
    build.spec["launch"] = {"launcher": "direct", "shell": _array_names(build, line.strip())}
    build.launch_as_written = build.spec["launch"]["shell"]
    build.note(number, line, "kept", f"it starts {procs} process(es) on a node of {build.spec['resources']['gpus']} GPUs, where "
                                     "slurmkit's distributed kinds start one a GPU: the launch is the script's line as written "
                                     "(launcher direct), and its processes see every GPU, as they did")


def _multi_prog_line(build: _Builder, number: int, line: str) -> None:
    """``srun --multi-prog tasks.conf``: the file names each task's program, which only srun's
    own option reads; the launch is the script's line as written, run once by the batch shell
    (launcher direct), its tasks the job's."""
    shell = _array_names(build, line.strip())
    build.spec["launch"] = {"launcher": "direct", "shell": shell}
    build.launcher_name = "srun"
    build.launch_as_written = shell[len("srun "):]
    build.note(number, line, "kept", "srun --multi-prog runs the program its file names for each task: the launch is the "
                                     "script's line, srun and all, as written (launcher direct; the tasks as the request gives them)")


#: a launch's tail that only copies its output to a file: ``| tee FILE``, ``2>&1 | tee -a FILE``, ``|& tee FILE``
_TEE_TAIL = re.compile(r"(?:2>&1\s*\||\|&?)\s*(tee(?:\s+(?:-a|--append))?\s+[^\s;&|<>$`'\"]+)")


def _needs_bash(word: bashtree.Word) -> bool:
    """Whether only bash can give the program this word: it expands more than variables in it
    (a brace range, a glob, $(...)); a leading ``~/`` a spec writes as $HOME (_spec_word)."""
    if reads_arguments(word.text) or reads_script_name(word.text):
        return True   # $1, "$@": the script's arguments, which a launch.command would pass as text
    expands = set(word.expansions) - {"variable"}
    if expands == {"tilde"} and (word.value == "~" or word.value.startswith("~/")):
        return False
    return bool(expands)


def _splits(build: _Builder, word: bashtree.Word) -> bool:
    """Whether bash splits the word into several, or drops it (an unquoted ``$DIR`` the script
    computes): a launch.command would pass it as one argument, maybe empty (wordsplit.py)."""
    names = wordsplit.may_split(word.text, build.assigned, build.values)
    build.submitted_words.update(name for name in names if name not in build.assigned)
    return bool(names)


def _parallel_words(command: Optional[bashtree.Command], line: str) -> List[str]:
    """The launch's words as GNU Parallel reads its tasks: with its input (``parallel < FILE``, _parallel_tasks)."""
    if command is not None:
        return command.argv + [w for r in command.redirects if r.operator == "<" for w in ("<", r.target)]
    try:
        return shlex.split(line, comments=True)
    except ValueError:
        return []


def _without_comment(build: _Builder, number: int, line: str) -> str:
    """The unit's text without the comment that ends it (bash's reading: ``./app  # run it`` is ``./app``)."""
    last = max((s.end_line for s in build.tree.get(number, ())), default=number + line.count("\n"))
    comment = (build.comments.get(last) or "").rstrip()
    text = line.rstrip()   # blanks or a carriage return after the comment end the line too
    return text[:-len(comment)].rstrip() if comment and text.endswith(comment) else line


def _launch_words(command: Optional[bashtree.Command], head: str) -> Tuple[str, List[str], Optional[Tuple[bashtree.Word, ...]]]:
    """The launch's ``VAR=x`` prefix as written, its words as written, and as bash reads them
    (None where the unit is no simple command, or its redirections stand among its words)."""
    raw = raw_words(head)
    if command is None or len(raw) != len(command.prefix) + len(command.words):
        return "", raw, None
    return " ".join(raw[:len(command.prefix)]), raw[len(command.prefix):], command.words


def _shell_reason(operators: List[str], prefix: str, shell_words: List[str]) -> str:
    what = list(dict.fromkeys(operators))
    if prefix:
        what.append(f"{prefix} set for the program alone")
    what += [f"{word}, which bash expands" for word in shell_words]
    said = ", ".join(what) or "$(...), $((...)), a glob or bash's time keyword"
    return f"a shell line ({said}): launch.shell, run by bash as written"


#: what makes a program's words a shell line: a command substitution, or a glob
_NEEDS_SHELL = re.compile(r"\$\(|`|(^|\s)[^'\"\s]*[*?][^'\"\s]*")


def _bash_text(text: str) -> bool:
    """Whether a program's words, as written, hold what only bash gives them: a command
    substitution, a glob, the script's arguments ($1, "$@"), the ``time`` keyword (a command's
    first word, it would be /usr/bin/time, which a node may lack)."""
    return bool(_NEEDS_SHELL.search(text)) or reads_arguments(text) or reads_script_name(text) or text.split()[:1] == ["time"]


def _program_words(parsed: launch_options.Parsed, raw: List[str]) -> List[str]:
    """The program's words as the script wrote them (quotes and all); torchrun and accelerate
    run theirs with python unless told not to, so that python is written out."""
    program = raw[len(raw) - len(parsed.program):] if parsed.program else []
    if parsed.launcher in launch_options.RUN_WITH_PYTHON:
        program = launch_options.python_program(parsed, program)
    return program


def _read_launcher(build: _Builder, number: int, line: str, parsed: launch_options.Parsed,
                   srun: Optional[launch_options.Parsed]) -> None:
    """A note for each of the launcher's options; an `accelerate launch` line's counts wait for
    the request (accelerate_import.adopt)."""
    if parsed.launcher == "accelerate":
        if srun:
            _launcher_options(build, number, line, srun, one_task_per_node=True)
        build.accelerate = accelerate_import.read_options(build, number, parsed)
    else:
        if srun:   # srun started the torchruns: its options, then torchrun's
            _launcher_options(build, number, line, srun)
            build.torchrun_under_srun = True
        _launcher_options(build, number, line, parsed)
        if parsed.launcher == "torchrun":
            build.torchrun_procs = next((values[0] for option, values, _ in parsed.options
                                         if option in ("--nproc_per_node", "--nproc-per-node") and values), None)
            _local_rank_argument(build, number, line)
    build.launcher_name = parsed.launcher


def _local_rank_argument(build: _Builder, number: int, line: str) -> None:
    """``python -m torch.distributed.launch`` without --use-env passed each process
    ``--local-rank=N`` (``--local_rank`` before PyTorch 2.0) as an argument; torchrun, which the
    job runs, passes none: only LOCAL_RANK in the environment. A program that reads the argument
    would run every process as rank 0's local rank, unseen: a to-do."""
    if "torch.distributed.launch" not in line or re.search(r"--use[-_]env\b", line):
        return
    build.note(number, "python -m torch.distributed.launch", "to do",
               "it gave each process --local-rank=N (--local_rank before PyTorch 2.0) as an argument; torchrun, which the "
               "job runs, gives none, only LOCAL_RANK in the environment: where the program reads args.local_rank, read "
               "int(os.environ['LOCAL_RANK']) instead (https://pytorch.org/docs/stable/elastic/run.html)")


def _distributed_launch_kept(build: _Builder, script: bashtree.Script) -> None:
    """``python -m torch.distributed.launch`` kept as written (a run before the program, a count
    of its own, a line in setup) still passes each process its local rank as an argument, spelt
    ``--local_rank=N`` by PyTorch 1.x and ``--local-rank=N`` from 2.0: a venv rebuilt for a newer
    python gets PyTorch 2, and a parser that names only the old spelling stops every process
    ("unrecognized arguments"). The mapped launch has its own to-do (_local_rank_argument)."""
    told = any(n.outcome == "to do" and n.text == "python -m torch.distributed.launch" for n in build.notes)
    kept = [c for c in bashtree.walk(script.statements) if _local_rank_passed(c.argv)]
    if kept and not told:
        build.note(kept[0].line, "python -m torch.distributed.launch", "to do",
                   "kept as written, it gives each process --local_rank=N under PyTorch 1.x and --local-rank=N from "
                   "PyTorch 2.0, which a virtualenv rebuilt for a newer python installs: where the program's parser names "
                   "only one spelling, give it both (add_argument('--local-rank', '--local_rank', ...)), or pass --use-env "
                   "and read int(os.environ['LOCAL_RANK']) (https://pytorch.org/docs/stable/elastic/run.html)")


def _local_rank_passed(argv: Sequence[str]) -> bool:
    """A command of python -m torch.distributed.launch that passes the local rank as an argument."""
    words = list(argv)
    launched = any(words[i:i + 2] == ["-m", "torch.distributed.launch"] for i in range(len(words)))
    return launched and not any(re.match(r"--use[-_]env\b", w) for w in words)


def _per_task_line(build: _Builder, shell: Tuple[int, str, List[str]],
                   launchers: Tuple[launch_options.Parsed, Optional[launch_options.Parsed]],
                   words: Tuple[str, List[str], List[str], str]) -> None:
    """A shell line under a launcher (``shell``: its line number, text and operators; the
    launcher srun starts, and srun's line), which each task runs (_per_task_shell); where its
    tail only copies the output to a file (``| tee FILE``) and the program (``words``: the
    prefix, the words bash expands, the program, the tail) needs no shell of its own, the
    command without it, for _tee_to_log once the kind is known."""
    parsed, srun = launchers
    prefix, shell_words, program, tail = words
    if (srun or parsed).launcher not in ("srun", "mpirun", "accelerate"):
        return
    build.per_task_shell = shell
    tee = _TEE_TAIL.fullmatch(tail)
    if tee and not (prefix or shell_words or _NEEDS_SHELL.search(" ".join(program))):
        build.tee_free = (shell[0], tee.group(1), " ".join(_spec_word(w, r) for w, r in zip(_unquote_all(program), program)))


def _launcher_under_srun(parsed: launch_options.Parsed) -> Tuple[launch_options.Parsed, Optional[launch_options.Parsed]]:
    """The launcher srun starts on each task (accelerate launch, torchrun), and srun's line; the
    line itself and None where srun starts no launcher."""
    parsed, srun = accelerate_import.under_srun(parsed)
    return (parsed, srun) if srun is not None else _torchrun_under_srun(parsed)


def _torchrun_under_srun(parsed: launch_options.Parsed) -> Tuple[launch_options.Parsed, Optional[launch_options.Parsed]]:
    """``srun [OPTIONS] torchrun ...`` (or ``python -m torch.distributed.run``): one torchrun per
    task, each starting its node's processes; the torchrun line, and srun's (None without srun)."""
    if parsed.launcher == "srun" and parsed.program:
        inner = launch_options.parse(list(parsed.program))
        if inner.launcher == "torchrun":
            return inner, parsed
    return parsed, None


def _parallel_line(build: _Builder, number: int, line: str, words: List[str]) -> bool:
    """GNU Parallel as the Alliance's GNU Parallel page runs it: ``parallel [OPTIONS] < FILE`` (a
    command a line) or ``parallel [OPTIONS] COMMAND :::: FILE`` (an argument line each), as kind
    many-tasks. False where its tasks are not in a file (``::: a b c``): the line then stays a
    shell line, run as written."""
    options, rest = _parallel_options(words)
    command, file = _parallel_tasks(rest, options.get("-a") or options.get("--arg-file"))
    if len(command) == 1 and re.search(r"\s", command[0]):   # one quoted template, which GNU Parallel's shell splits
        if split_at_operators(command[0])[1]:
            return False   # with its own redirections or pipes: the line runs as written
        command = raw_words(command[0])
    if file and not _one_path(file):
        build.note(number, line, "mapped", f"bash computes the name of GNU Parallel's input file ({file}), so the line runs as "
                   f"written; kind {first_kind(runs_task_file=True).name} reads a task file the spec names: write one to use it")
        return False
    if not file and not _literal_tasks(build, number, line, rest, command):
        return False
    if file:
        build.line = number
        file = _input_here(build, file)   # after `cd ~/scratch/videos`, video_list.txt is read there
        if file is None:
            build.note(number, line, "mapped", "GNU Parallel reads its task file from a folder a `cd` before it chose, which import "
                       f"cannot tell, so the line runs as written; kind {first_kind(runs_task_file=True).name} reads a task file "
                       "the spec names")
            return False
    # With a command, each line is its argument; without one, each line is a command.
    build.spec["tasks"] = {"arguments" if command else "commands": file or ""}   # "": the words' file (_task_file)
    _parallel_separator(build, number, line, options.get("--colsep", options.get("-C")))
    build.spec["launch"] = {"command": " ".join(_spec_word(w, w) for w in command)} if command else {}
    build.parallel_jobs = options.get("-j", options.get("--jobs", options.get("-P")))
    _parallel_slots(build, number, line)
    replaced = sorted({f"{o} ({PARALLEL_REPLACED[o]})" for o in options if o in PARALLEL_REPLACED})
    build.note(number, line, "mapped", f"kind {first_kind(runs_task_file=True).name}"
               + (f"; dropped: {', '.join(replaced)}" if replaced else ""))
    return True


def _literal_tasks(build: _Builder, number: int, line: str, rest: List[str], command: List[str]) -> bool:
    """``parallel COMMAND ::: a b c``: the words after ``:::`` are the tasks, one each, for a task
    file beside the spec (_task_file); several ``:::`` groups give every combination of their
    words, ``:::+`` links a group to the one before, as columns split by a tab; a brace range or
    ``$(seq ...)`` of numbers gives its numbers (parallelforms). False where bash computes them
    otherwise (a glob, a variable, $(...)), which only a shell line can do, said in a note, or
    where a ``::::`` file joins them."""
    tail = rest[len(command):]
    raw = raw_words(line)
    raw_command, sources = parallelforms.groups(raw[len(raw) - len(tail):] if tail else [])
    if not sources or raw_command or any(separator.startswith("::::") for separator, _ in sources):
        return False
    tasks = _task_lines(build, number, sources)
    if tasks is False:
        return False
    if tasks is None or (len(sources) > 1 and parallelforms.reads_whole_line(command)):
        build.note(number, line, "mapped", "GNU Parallel combines its argument groups here in a way a task file of columns "
                   "cannot say ({} is the whole line, or :::+ links groups of unequal length): the line runs as written")
        return False
    build.task_words = ["\t".join(task) for task in tasks]
    build.task_columns = len(tasks[0]) if tasks else 1
    return True


def _task_lines(build: _Builder, number: int, sources: List[Tuple[str, List[str]]]) -> Any:
    """The tasks of GNU Parallel's ``:::`` groups (parallelforms.task_lines: None where they do not
    combine); False, with a note, where bash computes a word."""
    words = [(separator, [parallelforms.expanded(w) for w in group]) for separator, group in sources]
    computed = [w for (_, group), (_, made) in zip(sources, words) for w, m in zip(group, made) if m is None]
    if computed:
        build.note(number, " ".join(computed), "mapped", f"bash computes GNU Parallel's arguments ({' '.join(computed)}), so the "
                   f"line runs as written; kind {first_kind(runs_task_file=True).name} reads them from a task file: write "
                   "them there, one a line, to use it")
        return False
    return parallelforms.task_lines([(separator, [w for m in made for w in m or ()]) for separator, made in words])


def _piped_into_parallel(words: List[str]) -> List[str]:
    """``cat FILE | parallel ...`` reads the lines of FILE as ``parallel ... :::: FILE`` does."""
    if words[:1] == ["cat"] and words[2:4] == ["|", "parallel"] and _one_path(words[1]) \
            and not set(words[4:]) & {*parallelforms.SOURCES, "|", "<", ";", "&&", "||", "&"}:
        return words[3:] + ["::::", words[1]]
    return words


def _parallel_slots(build: _Builder, number: int, line: str) -> None:
    """GNU Parallel's --jobs as the tasks it ran at a time (parallelforms.slots), noted or left to do."""
    res = build.spec["resources"]
    cpus = res.get("cpus_per_task") or 1
    slots = parallelforms.slots(build.parallel_jobs, cpus if isinstance(cpus, int) else 1, build.values)
    build.parallel_slots = (res.get("tasks_per_node") or 1) if slots.tasks == -1 else slots.tasks
    build.parallel_at = (number, line)
    if slots.note:
        build.note(number, line, "to do" if slots.todo else "mapped", slots.note)


def _task_file(build: _Builder) -> None:
    """GNU Parallel's words after ``:::`` as the task file ``<name>.tasks``, written beside the spec."""
    if build.task_words is None:
        return
    name = f"{build.spec['name']}.tasks"
    lines = build.spec["tasks"]
    if build.task_columns > 1:
        lines["separator"] = "\t"
    key = "arguments" if "arguments" in lines else "commands"
    lines[key] = name
    build.files.append((name, "".join(w + "\n" for w in build.task_words)))
    what = (f"the {len(build.task_words)} words after ::: (a task each)" if build.task_columns == 1 else
            f"the {len(build.task_words)} combinations of GNU Parallel's argument groups (a task each, columns split by a tab)")
    build.note(0, name, "mapped", f"tasks.{key}: {what}, written to {name} beside the spec")


def _parallel_options(words: List[str]) -> Tuple[Dict[str, str], List[str]]:
    """GNU Parallel's options and their values (``-j8`` as ``-j 8``), and the words after them."""
    options: Dict[str, str] = {}
    index = 1
    while index < len(words) and words[index].startswith("-") and words[index] not in (":::", "::::"):
        option, equals, value = words[index].partition("=")
        if not equals and option in launch_options.PARALLEL_VALUE_OPTIONS and index + 1 < len(words):
            index, value = index + 1, words[index + 1]
        elif not equals and re.fullmatch(r"-j\d+", option):
            option, value = "-j", option[2:]
        options[option] = value
        index += 1
    return options, words[index:]


def _parallel_tasks(rest: List[str], arg_file: Optional[str]) -> Tuple[List[str], Optional[str]]:
    """The command, and the file of tasks: the one after ``::::`` or ``<``, else ``arg_file``
    (``-a FILE``); none where ``:::`` gives the arguments on the line itself."""
    for position, word in enumerate(rest):
        if word in (":::", "::::", "<") or word.startswith("<"):
            after = rest[position + 1:position + 2]
            file = None if word == ":::" else word[1:] if word not in ("::::", "<") else (after[0] if after else None)
            return rest[:position], file
    return rest, arg_file


def _parallel_separator(build: _Builder, number: int, line: str, colsep: Optional[str]) -> None:
    """``--colsep`` as tasks.separator, which is literal text where --colsep is a regular
    expression: one without its special characters (or a tab) carries over."""
    if colsep is None:
        return
    if colsep == "\\t" or not re.search(r"[\\^$.|?*+()\[\]{}]", colsep):
        build.spec["tasks"]["separator"] = "\t" if colsep == "\\t" else colsep
    else:
        build.note(number, line, "to do", f"--colsep {colsep!r} is a regular expression; set tasks.separator to the text between columns")


def _many_tasks_shape(build: _Builder) -> None:
    """GNU Parallel's page asks ``--cpus-per-task=32`` and runs ``-j $SLURM_CPUS_PER_TASK``: 32
    tasks of one core. A many-tasks spec says that as tasks_per_node (tasks at a time) x cpus_per_task;
    another --jobs shares the cores out whole among its tasks (parallelforms.shape)."""
    res, count = build.spec["resources"], build.parallel_slots
    cpus = res.get("cpus_per_task")
    if "tasks_per_node" not in res and not cpus and count:
        res["tasks_per_node"] = count   # -j 8 on one core each
    if "tasks_per_node" in res or not cpus:
        return
    if count is None:
        res["tasks_per_node"] = res.pop("cpus_per_task")
        return
    res["tasks_per_node"], res["cpus_per_task"], said = parallelforms.shape(count, cpus)
    if said:
        build.note(build.parallel_at[0], build.parallel_at[1], "mapped", f"GNU Parallel's --jobs {build.parallel_jobs}" + said)


def _launcher_options(build: _Builder, number: int, line: str, parsed: launch_options.Parsed, one_task_per_node: bool = False) -> None:
    """A note for each launcher option; ``one_task_per_node``: srun's counts before `accelerate
    launch`, which kind accelerate's own srun replaces (one task per node)."""
    dropped: Dict[str, List[str]] = {}
    for option, values, action in parsed.options:
        spelled = " ".join((option, *values))
        if action in ("environment", "exported") and values and _passed_variables(build, number, spelled, option, values):
            continue
        action = "exported" if action == "environment" else action
        if action == "counts" and one_task_per_node:
            dropped.setdefault("one task per node", []).append(spelled)
            continue
        if action == "counts" and option in ("-n", "-np", "--ntasks", "--np", "--n", "--num-proc") and values:
            expected = _total_tasks(build)
            count = bashtree.substituted(values[0], build.values)   # (-n $WORLD_SIZE, where the script set WORLD_SIZE=8)
            if count != str(expected) and count.strip("${}") not in ("SLURM_NTASKS", "SLURM_NPROCS"):
                said = values[0] if count == values[0] else f"{values[0]} ({count})"
                build.note(number, spelled, "to do", f"the script started {said} tasks here where the job has "
                                                     f"{expected}: slurmkit starts {expected}; change the request or the program")
                continue
        if action in ("output", "folder", "by_hand"):
            build.note(number, spelled, "to do", launch_options.ACTIONS[action])
            continue
        if action == "unknown":
            build.note(number, spelled, "to do", f"{parsed.launcher} option {option} is not one slurmkit knows: "
                                                 "if it takes a value, the command is wrong; carry it over by hand")
            continue
        dropped.setdefault(action, []).append(spelled)
    for action, spellings in dropped.items():
        reason = launch_options.ACTIONS.get(action, f"kind {first_kind(launches_per_node=True).name}'s srun starts one task per "
                                                    "process itself")
        build.note(number, " ".join(spellings), "dropped", reason)


def _passed_variables(build: _Builder, number: int, spelled: str, option: str, values: Sequence[str]) -> bool:
    """A launcher option that passes the tasks a variable (mpirun's ``-x NAME=value``, ``-genv NAME
    value``; srun's ``--export=ALL,NAME=value``): an environment.variables entry, and True."""
    if option == "--export":
        return _srun_export(build, number, spelled, values[0])
    name, equals, value = (values[0].partition("=") if len(values) == 1 else (values[0], "=", values[1]))
    if not (equals and re.fullmatch(r"[A-Za-z_]\w*", name)):
        return False
    build.section("environment").setdefault("variables", {})[name] = value
    build.note(number, spelled, "mapped", f"environment.variables.{name}")
    return True


def _srun_export(build: _Builder, number: int, spelled: str, value: str) -> bool:
    """``srun --export=ALL,NAME=value``: every NAME=value an environment.variables entry (the
    tasks get the job's environment, as ALL gives them); any other form (NONE, a list of names
    alone) a to-do. False where it is plain ALL, which a job does already."""
    items = [item for item in value.split(",") if item]
    pairs = [item.partition("=") for item in items if "=" in item]
    if items and items[0] == "ALL" and all(re.fullmatch(r"[A-Za-z_]\w*", name) for name, _, _ in pairs) \
            and len(pairs) == len(items) - 1:
        for name, _, text in pairs:
            build.section("environment").setdefault("variables", {})[name] = text
        if pairs:
            build.note(number, spelled, "mapped", "environment.variables: " + ", ".join(name for name, _, _ in pairs)
                       + " (the tasks get the job's environment, as ALL gave them)")
        return bool(pairs)
    build.note(number, spelled, "to do", "srun passed the tasks only part of the job's environment: slurmkit's tasks get all of it; "
                                         "set the variables they need in environment.variables, or carry the option over by hand")
    return True


def _total_tasks(build: _Builder) -> int:
    res = build.spec["resources"]
    return build.ntasks or res.get("tasks_per_node", 1) * res.get("nodes", 1)


def _unquote(word: str) -> str:
    """A word after quote removal, as bash reads it: a name that ended at a quote keeps its end
    (``"run_"$N"_x"`` is ``run_${N}_x``, not ``run_$N_x``, which names another variable)."""
    if "$" in word and ('"' in word or "'" in word):
        command = bashtree.parse(f": {word}\n").statements
        if len(command) == 1 and isinstance(command[0], bashtree.Command) and len(command[0].words) == 2:
            return command[0].words[1].value
    try:
        parts = shlex.split(word)
    except ValueError:
        return word
    return parts[0] if len(parts) == 1 else word


def _unquote_all(words: List[str]) -> List[str]:
    return [_unquote(w) for w in words]


def _array_names(build: _Builder, text: str) -> str:
    """A line of an array job, as written: its $SLURM_ARRAY_TASK_ID stays, since the rendered job's
    --array is the script's own (array.indices), so each task sees the id it did."""
    return text


def _spec_word(word: str, raw: str) -> str:
    """A word of the script as a word of a spec command: variables still expand, nothing else does."""
    if word.startswith("~/"):
        word = "$HOME" + word[1:]
    if "$" not in word:
        return shlex.quote(word)
    if raw.startswith("'"):       # '$x' was literal in the script, and stays so in single quotes
        return shlex.quote(word)
    escaped = re.sub(r"\$(?!\{?[A-Za-z_][A-Za-z0-9_]*)", "$$", word)
    return '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"' if re.search(r"[\s'\"]", word) else escaped


# -------------------------------------------------------------------------------------- finish

#: the spec's keys in the order job.yaml is written
_SPEC_ORDER = ("name", "profile", "account", "kind", "resources", "environment", "stage", "tasks", "launch", "array",
               "dependencies", "mail", "extra_directives", "logs")


def _finish(build: _Builder, name: Optional[str], profile: Optional[str]) -> None:
    spec = build.spec
    _tasks_on_nodes(build, profile)
    _counts_per_node(build)
    _cores_of_the_gpus(build)
    _memory_of_the_gpus(build)
    spec.setdefault("name", name or "imported")
    _task_file(build)
    if profile:
        spec["profile"] = profile
    _given_at_submit(build)
    _array_from_command_line(build)
    _error_log_alone(build)
    spec["resources"].setdefault("time", "1h")
    _memory_the_site_ignores(build, profile)
    _memory_per_core_of_a_gpu_job(build)
    _torchrun_over_nodes(build)
    spec["kind"] = _chosen_kind(build)
    _signal_and_requeue(build)   # after the kind: a kind that requeues on the signal asks for them itself
    kind = KINDS[spec["kind"]]
    _gpus_bound_per_task(build, kind)
    _gpus_bound_per_gpu_task(build, kind)
    if (kind.one_process or kind.pins_threads) and spec["launch"].get("launcher") == "mpirun":
        spec["launch"].pop("launcher")
    _tee_to_log(build)
    _shell_under_signal(build)
    _per_task_shell(build)
    _requirements_staged(build)
    if build.chdir:
        build.setup.insert(0, f"cd {shlex.quote(build.chdir)}")
    if build.setup:
        spec.setdefault("environment", {})["setup"] = build.setup
    _python_of_the_submitting_shell(build)
    _science_codes_of_the_shell(build)
    _bad_substitutions(build)
    if kind.runs_task_file and not spec["launch"]:
        del spec["launch"]    # each line of tasks.commands is the command
    build.spec = {key: spec[key] for key in _SPEC_ORDER if key in spec}


#: a launch that starts python itself (not a script of the user's that may pick its own), after
#: any variables set for it alone (``CUDA_VISIBLE_DEVICES=0 python train.py | tee log``)
_RUNS_PYTHON = re.compile(r"\s*(?:(?:exec|time)\s+)?(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*python[0-9.]*(?:\s|$)")
#: module families that put a python on the PATH
_PYTHON_MODULES = ("python", "scipy-stack", "anaconda", "anaconda3", "miniconda", "miniconda3", "miniforge", "mamba")
#: a set-up line that may bring a python with it: an environment entered, a module, a profile read
_BRINGS_PYTHON = re.compile(r"\b(activate|conda|mamba|virtualenv|venv|module|ml|bashrc|bash_profile|pyenv|PATH)\b")


def _python_of_the_submitting_shell(build: _Builder) -> None:
    """``python train.py`` in a script that loads no python and enters no environment ran the
    python on the PATH sbatch passed from the shell it was submitted from (an activated venv, or
    a module that shell loaded). slurmkit loads the site's python module for a Python program,
    ahead of that PATH, so the program may lose its packages: only the user knows where they are."""
    environment = build.spec.get("environment") or {}
    launch = build.spec.get("launch") or {}
    text = str(launch.get("command") or launch.get("shell") or "")
    if not _RUNS_PYTHON.match(text) or environment.get("venv"):
        return
    if any(str(m).split("/")[0].lower() in _PYTHON_MODULES for m in environment.get("modules") or ()):
        return
    if re.search(r"\$\{?VIRTUAL_ENV\b", build.text):
        build.note(0, "environment.venv", "to do",
                   "the script reads $VIRTUAL_ENV and enters no virtualenv: it ran the python of the venv active in the shell "
                   "it was submitted from (sbatch passes its PATH); slurmkit loads the site's python module, whose python "
                   "comes before that venv's: name the venv in environment.venv.path, then remove this line")
        return
    if any(_BRINGS_PYTHON.search(line) for line in build.text.splitlines() if not _ECHOED.match(line)):
        return   # the script's own lines (kept, mapped or dropped) bring a python
    build.note(0, "environment.venv", "to do",
               "the script loads no python and enters no virtualenv, so its python was the one on the PATH of the shell it "
               "was submitted from (sbatch passes it: an activated venv, or a module that shell loaded); slurmkit loads the "
               "site's python module first, which comes before that PATH: if you submitted from a venv, name it in "
               "environment.venv.path; else check that the program's packages are installed for the site's python")


#: ``${$NAME}``: bash refuses it ("bad substitution"), and a script stops at the line
_BAD_SUBSTITUTION = re.compile(r"\$\{\$([A-Za-z_][A-Za-z0-9_]*)\}")


def _bad_substitutions(build: _Builder) -> None:
    """A ``${$NAME}`` in a line bash runs: bash says "bad substitution" and the batch shell ends
    with status 1 there, so the old job never ran what follows. The new script cannot run it the
    same way (it would pass the text on): a to-do at the line, with the spelling meant."""
    for number, line in enumerate(build.text.splitlines(), 1):
        found = _BAD_SUBSTITUTION.search(line)
        if found and not line.lstrip().startswith("#"):
            build.note(number, found.group(), "to do",
                       f"bash refuses {found.group()} (\"bad substitution\"): the old job ended here with status 1 and ran "
                       f"nothing after it; write ${{{found.group(1)}}}, and check what the job then does")


#: a comment, or a line that only prints text (its words are not commands)
_ECHOED = re.compile(r"\s*(#|(echo|printf)\b)")


def _science_codes_of_the_shell(build: _Builder) -> None:
    """``namd2`` (or gmx, pw.x) run while no module provides it ran the one a module of the
    submitting shell put on PATH: said, so the spec is not read as complete (sciencecodes.py)."""
    environment = build.spec.get("environment") or {}
    launch = build.spec.get("launch") or {}
    texts = [str(line) for line in environment.get("setup") or ()] + [str(launch.get(k)) for k in ("command", "shell") if launch.get(k)]
    modules = environment.get("modules") or ()
    for program in unloaded_programs([modules] if isinstance(modules, str) else list(modules), texts):
        build.note(0, "environment.modules", "note", science_import_note(program))


def _error_log_alone(build: _Builder) -> None:
    """--error without --output: sbatch wrote the output to its default name, which the spec
    then says (logs.output is what a spec's logs cannot do without)."""
    logs = build.spec.get("logs")
    if logs and "output" not in logs:
        logs["output"] = "slurm-%A_%a.out" if "array_range" in build.spec else "slurm-%j.out"
        build.note(0, f"logs.output: {logs['output']}", "mapped", "the script names no --output: sbatch's own name for it")


_MEMORY_OPTION = re.compile(r"--mem(-per-cpu)?\b")


def _compute_nodes_reach_pypi(profile: Optional[str]) -> str:
    """The cluster's name where its profile says its compute nodes reach the internet (Cedar,
    Fir): a ``pip install NAME`` there without ``--no-index`` could install from PyPI what the
    wheelhouse lacks. "" elsewhere, and where unknown."""
    from slurmkit.core.errors import SlurmkitError
    from slurmkit.sites.profiles import load_profile

    try:
        site = load_profile(profile) if profile else None
    except SlurmkitError:
        return ""
    return site.name if site is not None and site.storage.internet_on_compute else ""


def _memory_the_site_ignores(build: _Builder, profile: Optional[str]) -> None:
    """A memory request on a site that gives every job whole nodes with all their memory
    (Niagara) did nothing there, and ``check`` refuses it in a spec: dropped, with the reason."""
    from slurmkit.core.errors import SlurmkitError
    from slurmkit.sites.profiles import load_profile

    resources = build.spec["resources"]
    if not profile or not ("mem" in resources or "mem_per_cpu" in resources):
        return
    try:
        site = load_profile(profile)
    except SlurmkitError:
        return    # an unknown profile is check's to report
    if site.scheduling.mem_request is not False:
        return
    resources.pop("mem", None)
    resources.pop("mem_per_cpu", None)
    for index, note in enumerate(build.notes):
        if note.outcome == "mapped" and _MEMORY_OPTION.search(note.text):
            build.notes[index] = note._replace(outcome="dropped", reason=f"{site.name} gives every job whole nodes with all "
                                               "their memory and ignores memory requests")
            break
def _memory_per_core_of_a_gpu_job(build: _Builder) -> None:
    """``--mem-per-cpu`` in a GPU job that names no cores per task: SLURM gave each task one core,
    so the job had that much memory per task. A spec's GPU job gets the site's cores per GPU (12
    on one site, 24 on another), and per core its memory would grow as many times: the job keeps
    what it had, as ``mem`` per node, and its note says so."""
    from slurmkit.core.errors import SlurmkitError
    from slurmkit.core.units import format_size, parse_size

    res = build.spec["resources"]
    if "gpus" not in res or "mem_per_cpu" not in res or "cpus_per_task" in res or "cpus-per-gpu" in build.text:
        return
    try:
        per_core = parse_size(res["mem_per_cpu"])
    except SlurmkitError:
        return   # not a size: check says what is wrong with it
    tasks = res.get("tasks_per_node", 1)
    total = format_size(per_core * tasks)
    written = res.pop("mem_per_cpu")
    res["mem"] = total
    why = (f"mem: {total}: the script gave each of its {tasks} task(s) on a node one core (no --cpus-per-task), so "
           f"{written} each; slurmkit gives a GPU job the site's cores per GPU, "
           f"and per core the job's memory would grow as many times")
    for index, note in enumerate(build.notes):
        if "--mem-per-cpu" in note.text and note.outcome == "mapped":
            build.notes[index] = note._replace(reason=why)
            return
    build.note(0, "--mem-per-cpu", "mapped", why)


def _tasks_on_nodes(build: _Builder, profile: Optional[str]) -> None:
    """``--ntasks=N`` with no node count: SLURM placed the N tasks where it found room, on one
    node or several; a spec asks tasks per node, so the tasks go to the fewest nodes of the
    profile that hold them (one, when a node has the cores), evenly, on at most twice as many
    nodes as the cores need. Said in a note either way.
    Without a launcher the program ran once (_one_process), and this does not apply."""
    res = build.spec["resources"]
    if not build.ntasks or build.ntasks == 1 or "nodes" in res or "tasks_per_node" in res or build.launcher_name is None:
        return
    cpus, most = res.get("cpus_per_task", 1), _most_cores(profile, "gpus" in res)
    fewest = 1 if most is None else -(-build.ntasks * cpus // most)
    # an equal share on up to twice the fewest nodes; more would leave most of each node idle
    nodes = next((n for n in range(fewest, 2 * fewest + 1) if build.ntasks % n == 0 and (most is None or build.ntasks // n * cpus <= most)),
                 None)
    spelled = f"--ntasks={build.ntasks}"
    if nodes is None:
        build.note(0, spelled, "to do", f"no node of {profile} has {build.ntasks * cpus} cores and {build.ntasks} tasks do "
                                        "not divide evenly over nodes that do: set resources.nodes and tasks_per_node")
    elif nodes == 1:
        build.note(0, spelled, "mapped", f"no --nodes: SLURM could spread the {build.ntasks} tasks over several nodes; "
                                         f"tasks_per_node: {build.ntasks} keeps all of them on one node")
    else:
        res["nodes"] = nodes
        build.note(0, spelled, "mapped", f"no --nodes: SLURM spread the {build.ntasks} tasks over the nodes it found; a node "
                                         f"of {profile} has {most} cores, so nodes: {nodes}, tasks_per_node: "
                                         f"{build.ntasks // nodes} (the fewest nodes that take an equal share)")


def _most_cores(profile: Optional[str], gpus: bool) -> Optional[int]:
    """The cores of the profile's largest node (of those with GPUs where the job asks GPUs);
    None where the profile is not known."""
    from slurmkit.core.errors import SlurmkitError
    from slurmkit.sites.profiles import load_profile

    try:
        types = load_profile(profile).node_types if profile else ()
    except SlurmkitError:
        return None
    fitting = [t for t in types if bool(t.gpus) == gpus] or list(types)
    return max((t.cores for t in fitting if t.cores), default=None)


def _sets_errexit(script: bashtree.Script, text: str) -> bool:
    """Whether the script stops at a command that fails: ``set -e`` (``-euo pipefail``, ``-o
    errexit``) at its top level, or ``-e`` among the options of its ``#!`` line."""
    return _sets_option(script, text, "e", "errexit")


def _turns_on(words: Sequence[str], letter: str, name: str) -> bool:
    """Whether ``set``'s (or bash's) ``words`` turn on the option ``-LETTER`` (``-o NAME``)."""
    return any(re.fullmatch(rf"-[a-z]*{letter}[a-z]*", w) for w in words) or ["-o", name] in map(list, zip(words, words[1:]))


def _sets_option(script: bashtree.Script, text: str, letter: str, name: str) -> bool:
    """Whether the script turns on bash's option ``-LETTER`` (``-o NAME``) at its top level, or
    on its ``#!`` line."""
    first = text.split("\n", 1)[0]
    return first.startswith("#!") and _turns_on(first.split()[1:], letter, name) or any(
        isinstance(s, bashtree.Command) and s.name == "set" and _turns_on(s.argv[1:], letter, name) for s in script.statements)


def _setup_after_set_u(build: _Builder, script: bashtree.Script, text: str) -> bool:
    """Whether every set-up line kept ran under ``set -u``: none came before the line that set it
    (the #! line, or the first top-level ``set`` that turns it on)."""
    first = text.split("\n", 1)[0]
    if first.startswith("#!") and _turns_on(first.split()[1:], "u", "nounset"):
        return True
    setting = [s.line for s in script.statements if isinstance(s, bashtree.Command) and s.name == "set" and
               _turns_on(s.argv[1:], "u", "nounset")]
    return bool(setting) and not any(n.outcome == "kept" and 0 < n.line < setting[0] for n in build.notes)


def _as_plain_bash(build: _Builder, script: bashtree.Script, text: str) -> None:
    """slurmkit's own script runs under ``set -eu``; the user's lines it runs (environment.setup,
    the launch line) are run as the script ran them: a script without ``set -e`` went on past a
    setup line that failed, and one without ``set -u`` read an unset variable as empty (one its
    user exported when submitting, say). The spec says so: environment.errexit and nounset: false."""
    environment = build.spec.get("environment") or {}
    shell = (build.spec.get("launch") or {}).get("shell")
    several = isinstance(shell, str) and _runs_several_commands(shell)   # its own set -e would stop between them
    if (environment.get("setup") or several) and not build.errexit:
        environment["errexit"] = False
        build.note(0, "environment.errexit: false", "mapped", "the script had no set -e, so it went on past a command that "
                                                            "failed, and the job does too (delete the line, and a command of "
                                                            "its setup or launch line that fails stops the job)")
    kept_own = _unexported(environment.get("setup") or [])
    if kept_own:
        environment["allexport"] = False
        build.note(0, "environment.allexport: false", "mapped", f"the script did not export {', '.join(kept_own)}, so its "
                                                              f"programs did not see {'them' if kept_own[1:] else 'it'}, and the "
                                                              "job's do not either (delete the line, and what the setup lines "
                                                              "assign is exported)")
    stops_unset = _sets_option(script, text, "u", "nounset")
    if stops_unset and environment.get("setup") and _setup_after_set_u(build, script, text):
        environment["nounset"] = True
        build.note(0, "environment.nounset: true", "mapped", "the script ran under set -u: an unset variable stops the job in "
                                                           "its set-up lines too, as before (they read it as empty by default)")
    unset = [] if stops_unset else _unset_in_launch(build, script)
    if unset:
        environment["nounset"] = False
        build.note(0, "environment.nounset: false", "mapped", f"the script had no set -u, and it sets no {', '.join(unset)}: "
                                                            "read as empty where nothing sets them, as before (delete the "
                                                            "line, and an unset variable stops the job)")
    if _runs_as_login_shell(text):
        environment["login_shell"] = True
        build.note(1, text.split("\n", 1)[0], "mapped", "environment.login_shell: true: the script ran as a login shell, "
                                                          "its profiles (/etc/profile, ~/.bash_profile) before its first line, "
                                                          "and the job's does too (#!/bin/bash -l)")
    if environment:
        build.spec["environment"] = environment
        build.spec = {key: build.spec[key] for key in _SPEC_ORDER if key in build.spec}


def _unexported(setup: List[str]) -> List[str]:
    """The names the setup lines assign and never export (``export NAME``, ``declare -x NAME``):
    bash passes them to no program, where slurmkit's default (set -a) would pass them all
    (``LD_PRELOAD=...`` written without export changes nothing in the old job)."""
    lines = [line for line in setup if isinstance(line, str)]
    exported = {name for match in _EXPORTING.finditer("\n".join(lines))
                for name in re.findall(r"[A-Za-z_]\w*(?==|\s|$)", match.group(1))}
    allexport = False   # the script's own set -a ... set +a: what it assigns between them is exported
    for line in lines:
        allexport = bool(_ALLEXPORT_ON.search(line)) or allexport and not _ALLEXPORT_OFF.search(line)
        exported |= assigned_names([line]) if allexport else set()
    return sorted(assigned_names(lines) - exported)


_ALLEXPORT_ON = re.compile(r"\bset\s+(?:-\w*a\w*|-o\s+allexport)\b")
_ALLEXPORT_OFF = re.compile(r"\bset\s+(?:\+\w*a\w*|\+o\s+allexport)\b")
#: what export and declare -x name: ``export A=1 B``, ``declare -x C``
_EXPORTING = re.compile(r"\b(?:export|declare\s+-\w*x\w*|typeset\s+-\w*x\w*)((?:\s+[^\s;&|]+)+)")


def _runs_several_commands(shell: str) -> bool:
    """Whether set -e could stop a shell line between its commands: several statements, or a
    block (a loop, an if) holding them; not one command, pipeline or ``a && b``."""
    statements = bashtree.parse(shell).statements
    return len(statements) > 1 or any(isinstance(s, bashtree.Block) for s in statements)


def _runs_as_login_shell(text: str) -> bool:
    """``#!/bin/bash -l`` (``--login``, ``-le``): bash reads the login profiles before the script."""
    words = text.split("\n", 1)[0].split()
    return bool(words) and words[0].startswith("#!") and os.path.basename(words[0][2:]) == "bash" and any(
        w == "--login" or re.fullmatch(r"-[a-z]*l[a-z]*", w) for w in words[1:])


def _unset_in_launch(build: _Builder, script: bashtree.Script) -> List[str]:
    """The variables the launch command reads that neither SLURM, a login shell, a module, the
    spec nor the script sets: in the job, they are what the submitting shell exported, or unset."""
    from slurmkit.resolve.reads import BATCH_SET_BY, references

    launch = build.spec.get("launch") or {}
    # a shell line made only of a command with such a word (wordsplit.py) reads like a command
    command = launch.get("command") if "command" in launch else launch.get("shell") if build.submitted_words else None
    if not isinstance(command, str):
        return []
    known = (set(bashtree.assigned(script.statements)) | set((build.spec.get("environment") or {}).get("variables") or {})
             | set((build.spec.get("array") or {}).get("parameters") or {})
             | {name for name, kinds in BATCH_SET_BY.items() if build.spec.get("kind") in kinds})
    return sorted({name for name in references(command) if not (name in known or wordsplit.set_by_environment(name))})


def _tasks_per_gpu(build: _Builder) -> None:
    """--ntasks-per-gpu=N on G GPUs a node: N x G tasks a node (a count per node given wins)."""
    res = build.spec["resources"]
    count = str(res.get("gpus", "")).rpartition(":")[2]
    if not build.tasks_per_gpu or "tasks_per_node" in res:
        return
    if not count.isdigit():
        build.note(0, f"--ntasks-per-gpu={build.tasks_per_gpu}", "to do", "the GPUs per node are not known: set tasks_per_node")
        return
    res["tasks_per_node"] = build.tasks_per_gpu * int(count)
    build.note(0, f"--ntasks-per-gpu={build.tasks_per_gpu}", "mapped", f"tasks_per_node: {res['tasks_per_node']} "
                                                                        f"({build.tasks_per_gpu} a GPU, {count} GPUs a node)")


def _counts_per_node(build: _Builder) -> None:
    """The script's --ntasks, --gpus-per-task and --gpus as the spec's counts per node, now that
    the nodes are known (a count per node the script gave wins)."""
    res = build.spec["resources"]
    nodes = res.get("nodes", 1)
    if build.ntasks and "tasks_per_node" not in res:
        if build.ntasks % nodes == 0:
            res["tasks_per_node"] = build.ntasks // nodes
            build.ntasks_only = True
        else:
            build.note(0, f"--ntasks={build.ntasks}", "to do", f"{build.ntasks} tasks do not divide evenly over {nodes} nodes")
    _tasks_per_gpu(build)
    if build.gpus_per_task and "gpus" not in res:
        model, _, count = build.gpus_per_task.rpartition(":")
        res["gpus"] = f"{model + ':' if model else ''}{int(count) * res.get('tasks_per_node', 1)}"
        build.note(0, f"--gpus-per-task={build.gpus_per_task}", "mapped", f"gpus: {res['gpus']} per node")
    if build.gpus_total and "gpus" not in res:
        model, _, count = build.gpus_total.rpartition(":")
        res["gpus"] = f"{model + ':' if model else ''}{max(1, int(count) // nodes) if count.isdigit() else count}"


def _requirements_staged(build: _Builder) -> None:
    """A requirements file read from $SLURM_TMPDIR, where a copy the import staged puts it
    (``cp ~/proj/requirements.txt $SLURM_TMPDIR/req.txt``; ``pip install -r $SLURM_TMPDIR/req.txt``):
    slurmkit makes the virtualenv before it stages inputs, so it reads the file where the copy
    came from, the same file."""
    venv = (build.spec.get("environment") or {}).get("venv") or {}
    wanted = _tmpdir(str(venv.get("requirements") or ""))
    if not wanted:
        return
    for item in (build.spec.get("stage") or {}).get("inputs", []):
        source, to = (item["from"], item.get("to", "")) if isinstance(item, dict) else (item, "")
        if (to or posixpath.basename(str(source))) == wanted:
            venv["requirements"] = source
            build.note(0, f"pip install -r $SLURM_TMPDIR/{wanted}", "mapped", f"{source}: environment.venv.requirements, the file "
                       f"the job copied to $SLURM_TMPDIR/{wanted}; slurmkit makes the virtualenv before it stages inputs")
            return


def _gpus_bound_per_task(build: _Builder, kind: Any) -> None:
    """--gpus-per-task=N bound each task to its own N GPUs (sbatch: it implies --gpu-bind=per_task:N).
    A kind that picks each process's GPU itself does the same; for the others the job asks the
    binding as such (``#SBATCH --gpu-bind=per_task:N``, which the job's sruns take from it; proven
    on Slurm 22.05), or every task would see every GPU of its node."""
    if not build.gpus_per_task or kind.picks_its_gpu:
        return
    per_task = build.gpus_per_task.rpartition(":")[2]
    per_node = str(build.spec["resources"].get("gpus", "")).rpartition(":")[2]
    if not (per_task.isdigit() and per_node.isdigit()) or int(per_task) >= int(per_node):
        return   # one task a node (a torchrun): it sees the node's GPUs either way
    build.spec.setdefault("extra_directives", []).append(f"--gpu-bind=per_task:{per_task}")
    build.note(0, f"--gpus-per-task={build.gpus_per_task}", "mapped",
               f"extra_directives: --gpu-bind=per_task:{per_task}: each task sees its own GPU, as --gpus-per-task gave it")


def _gpus_bound_per_gpu_task(build: _Builder, kind: Any) -> None:
    """--ntasks-per-gpu=N bound each task to one GPU (sbatch: it implies --gpu-bind=single:N), so
    a program that uses device 0 in every rank used its own. A kind that starts one process per
    GPU shows each its own (launch.gpu_view: own, for one task a GPU); another asks the binding
    as such, or every task would see every GPU of its node."""
    if not build.tasks_per_gpu or kind.picks_its_gpu or not build.spec["resources"].get("gpus"):
        return
    said = f"--ntasks-per-gpu={build.tasks_per_gpu}"
    if kind.distributed and build.tasks_per_gpu == 1 and build.spec["launch"].get("gpu_view", kind.gpu_view_default) == "node":
        build.spec["launch"]["gpu_view"] = "own"
        build.note(0, said, "mapped", "launch.gpu_view: own: each process sees its own GPU (as device 0), as "
                                      "--ntasks-per-gpu bound it (it implies --gpu-bind=single:1)")
    elif not kind.distributed:
        build.spec.setdefault("extra_directives", []).append(f"--gpu-bind=single:{build.tasks_per_gpu}")
        build.note(0, said, "mapped", f"extra_directives: --gpu-bind=single:{build.tasks_per_gpu}: each task sees "
                                      "the GPU it is bound to, as --ntasks-per-gpu gave it")


def _chosen_kind(build: _Builder) -> str:
    """A task file is many-tasks, an array a sweep; else the kind the script's set-up tells."""
    spec = build.spec
    array = spec.pop("array_range", None)
    if "tasks" in spec:
        _many_tasks_shape(build)
        return first_kind(runs_task_file=True).name
    if array:
        spec["array"] = _array_section(array, build.text)
        _keep_task_ids(spec["array"], array)
        sweep = first_kind(sweeps=True).name
        return _one_process(build, sweep) if _tasks_of_one_process(build) else sweep
    return _distributed_kind(build) or _plain_kind(build)


_READS_TASK_ID = re.compile(r"\$\{?(SLURM_ARRAY_TASK_(ID|MIN|MAX|COUNT)|SLURM_ARRAY_JOB_ID)\b")
_ARRAY_LOG = re.compile(r"^#SBATCH\s+(-o|-e|--output|--error)\b.*%[aA]", re.MULTILINE)


_JOB_NAME_DIRECTIVE = re.compile(r"^#SBATCH\b.*\s(--job-name\b|-J\s*\S)", re.M)
_READS_JOB_NAME = re.compile(r"\$\{?(SLURM_JOB_NAME)\b")


def _given_at_submit(build: _Builder) -> None:
    """What the script leaves to sbatch's command line, where the spec must say it: no --time
    (the job ran with the time it was given, or the partition's default; the spec's 1h is a
    guess) and no --job-name while the script reads $SLURM_JOB_NAME (the spec's name is now the
    job's name, which the program reads). Each is a to-do."""
    if "time" not in build.spec["resources"]:
        build.note(0, "resources.time: 1h", "to do", "the script asks no --time: it ran with the time sbatch was given (or "
                   "the partition's default); 1h is a guess: set resources.time to what the job needs")
    body = [(n, line) for n, line in enumerate(build.text.splitlines(), 1) if not line.lstrip().startswith("#")]
    if not _JOB_NAME_DIRECTIVE.search(build.text) and any(_uses(build, n, line, _READS_JOB_NAME) for n, line in body):
        build.note(0, f"name: {build.spec['name']}", "to do", "the script reads $SLURM_JOB_NAME and names no job: it was "
                   "given with `sbatch -J NAME`, and the program reads it; the spec's name is now the job's name: set it "
                   "to the name the job was submitted with")


_ARRAY_DIRECTIVE = re.compile(r"^#SBATCH\b.*\s(--array\b|-a\s*\S)", re.M)


def _array_from_command_line(build: _Builder) -> None:
    """A script that reads $SLURM_ARRAY_TASK_ID with no #SBATCH --array was submitted as
    ``sbatch --array=...``: imported as it stands, every run would get the same (unset) id. It
    becomes an array of one task, id 0, which the spec reader and port take as any array, and
    the range it was submitted with is a to do, with where it goes."""
    if "array_range" in build.spec or "tasks" in build.spec or _ARRAY_DIRECTIVE.search(build.text):
        return    # (an --array import could not read has its own to-do)
    lines = [(n, line) for n, line in enumerate(build.text.splitlines(), 1) if not line.lstrip().startswith("#")]
    read = next(((n, line.strip()) for n, line in lines if _uses(build, n, line, _READS_TASK_ID)), None)
    if read is None:
        return
    logs = " (its log names hold %a/%A, an array's)" if _ARRAY_LOG.search(build.text) else ""
    build.spec["array_range"] = "0"
    build.note(read[0], read[1], "to do", f"the script reads $SLURM_ARRAY_TASK_ID but has no #SBATCH --array: it was "
               f"submitted with `sbatch --array=...`{logs}; the spec is an array of one task, id 0, in its place. Give "
               f"the range it was submitted with: array.parameters.{_free_parameter(build.text)}: [one value per task], "
               "and array.indices: 'FIRST-LAST' where the ids are not 0..N-1 (the ids the program reads), then remove "
               "this line")


def _uses(build: _Builder, number: int, line: str, reads: "re.Pattern") -> bool:
    """Whether line ``number`` reads a variable of ``reads`` (its group 1: the name) for more than
    printing it (bashtree's ``printed``): ``echo "task $SLURM_ARRAY_TASK_ID"`` needs no --array
    range, nor ``echo "$SLURM_JOB_NAME"`` the name the job was submitted with."""
    printed = Counter(build.printed.get(number, ()))
    for match in reads.finditer(line):
        if printed[match.group(1)] == 0:
            return True
        printed[match.group(1)] -= 1
    return False


def _tee_to_log(build: _Builder) -> None:
    """``srun prog | tee FILE`` on several tasks where the batch shell cannot run the line itself
    (a distributed kind, mpirun binding several cores a rank): in launch.shell each task would
    run its own tee, all writing FILE (and under kind lightning, bash and tee die of the USR1
    that saves the run). The job's log has every task's output, so the tee is dropped, with a
    note, and the program is the command."""
    res, launch = build.spec["resources"], build.spec["launch"]
    per_task = res.get("nodes", 1) * res.get("tasks_per_node", 1) > 1 or build.spec.get("kind") in DISTRIBUTED_KINDS
    if build.tee_free is None or "shell" not in launch or not per_task:
        return
    if build.spec.get("kind") not in DISTRIBUTED_KINDS and _launcher_stays_in_the_shell(build):
        return   # the batch shell runs the line as written, one tee for all the tasks (_per_task_shell)
    number, tee, command = build.tee_free
    log = (build.spec.get("logs") or {}).get("output", "%x-%j.out")
    del launch["shell"]
    launch["command"] = command
    build.per_task_shell = None
    build.notes[:] = [n._replace(reason="launch.command; the tee after it is dropped") if n.line == number and n.outcome == "mapped"
                      and n.reason.startswith("a shell line") else n for n in build.notes]
    build.note(number, tee, "dropped", "the script ran one tee for all the tasks; in launch.shell each task would run its "
                                       "own, all writing the same file (and under kind "
                                       f"{first_kind(requeues_on_signal=True).name} dying of the signal that saves the run); "
                                       f"the job's log ({log}) has every task's output: copy it to the "
                                       "file after the job if something reads it")


#: words that start no program of their own: a line starting with one cannot be exec'd
_SHELL_WORDS = frozenset(("if", "for", "while", "until", "case", "select", "{", "(", "((", "[[", "function", "time", "!",
                          "cd", "source", ".", "eval", "export", "set", "echo", "printf", "test", "[", "true", "false"))


def _shell_under_signal(build: _Builder) -> None:
    """A kind that saves on USR1 (lightning) runs a shell line only as ``exec PROGRAM`` with
    redirections: srun sends the signal to every process of a task, and bash, tee or a pipe
    would die of it. check refuses any other; import says so, and why."""
    shell, kind = build.spec["launch"].get("shell"), KINDS[build.spec["kind"]]
    if not (shell and kind.requeues_on_signal):
        return
    head, operators = split_at_operators(shell)
    redirections_only = all(">" in op or "<" in op for op in operators)
    if head.lstrip().startswith("exec ") and redirections_only:
        return
    first = head.split(maxsplit=1)[0] if head.split() else ""
    if redirections_only and first and not re.match(r"[A-Za-z_]\w*=", first) and first not in _SHELL_WORDS:
        build.spec["launch"]["shell"] = f"exec {shell.lstrip()}"
        build.note(0, "launch.shell", "mapped", f"`exec` put before it: kind {kind.name} saves on SIGUSR1, which srun sends "
                                                "to every process of a task; exec'd, the program is the task's only process")
        return
    build.note(0, "launch.shell", "to do", f"kind {kind.name} saves on SIGUSR1, which srun sends to every process of a task: "
                                           "bash and what else the line starts would die of it, so check refuses a shell line; "
                                           "write the program alone as launch.command, or `exec PROGRAM > FILE 2>&1`")


def _per_task_shell(build: _Builder) -> None:
    """``srun prog > log.txt``: the batch shell redirected srun's output, all tasks' together; as
    a shell line under the launcher each task runs the redirection (or pipe) itself. One task
    does what the script did; several write the same file at once, which the user must resolve."""
    if build.per_task_shell is None:
        return
    number, line, operators = build.per_task_shell
    res, launch = build.spec["resources"], build.spec["launch"]
    launcher = launch.get("launcher") or build.launcher_name
    if launcher is None or res.get("nodes", 1) * res.get("tasks_per_node", 1) == 1 and build.spec.get("kind") not in DISTRIBUTED_KINDS:
        return
    tail = [op for op in dict.fromkeys(operators) if ">" in op or "|" in op or op in ("&&", "||", ";", "&")]
    if tail and build.spec.get("kind") not in DISTRIBUTED_KINDS and _launcher_stays_in_the_shell(build):
        _launcher_into_the_shell(build)
        build.note(number, " ".join(tail), "kept", f"the batch shell ran it once, around all of {launcher}'s tasks: the "
                   f"launch is the script's own line, {launcher} and all, run once as written (launcher direct)")
        return
    if any(">" in op or "|" in op for op in operators):
        build.note(number, " ".join(dict.fromkeys(operators)), "to do",
                   f"the script applied it once to all of {launcher}'s tasks; in launch.shell each task runs it, so all "
                   "write the same file: name it per task ($SLURM_PROCID) or drop it (the job's log has every task's output)")
    chained = [op for op in dict.fromkeys(operators) if op in ("&&", "||", ";", "&")]
    if chained and not _only_reports(line):   # `srun ./app && touch DONE`: once, after every task ended
        build.note(number, " ".join(chained), "to do",
                   f"the script ran what follows {' '.join(chained)} once, after all of {launcher}'s tasks ended; in "
                   "launch.shell each task runs it after its own run (a task that failed does not stop the others' "
                   "marker): run it in a job that depends on this one (--dependency=afterok), or in the program's rank 0")


def _only_reports(line: str) -> bool:
    """Whether every command after a launch line's first one only prints (``&& echo ok``):
    run by each task, it prints once per task, and nothing else differs."""
    commands = list(bashtree.walk(bashtree.parse(line).statements))[1:]
    return bool(commands) and not _writes_a_file(line) and all(
        c.name in INFORMATIONAL or " ".join(c.argv[:2]) in INFORMATIONAL for c in commands)


def _tasks_of_one_process(build: _Builder) -> bool:
    """Tasks on one node, and a program the batch shell started itself (no srun or mpirun, none
    in the line, no task count read to start processes): it ran once, on the tasks' cores. Not
    where the set-up starts job steps in the background (``srun -n1 -c2 ./part &``): those used
    the tasks as the script sized them, and the job keeps its shape for them."""
    res, launch = build.spec["resources"], build.spec["launch"]
    tasks = res.get("tasks_per_node", 1) * res.get("nodes", 1)
    return tasks > 1 and build.launcher_name is None and res.get("nodes", 1) == 1 and not _starts_its_own_mpi(build) \
        and not _STEPS.search(launch.get("shell", "")) and not _reads_task_count(build) \
        and not any(_BACKGROUND_STEP.search(line) for line in build.setup)


def _plain_kind(build: _Builder) -> str:
    res, launch = build.spec["resources"], build.spec["launch"]
    tasks = res.get("tasks_per_node", 1) * res.get("nodes", 1)
    if _tasks_of_one_process(build):
        return _one_process(build, first_kind(pins_threads=True).name)
    if tasks > 1:
        if "launcher" not in launch and build.launcher_name is None and launch != {"command": "true"}:
            _started_once(build, tasks)
        launch.setdefault("launcher", "srun")
        return first_kind(rank_count_is_users=True).name
    if build.launcher_name == "torchrun" and "gpus" in res:
        launch["launcher"] = "torchrun"
        gpus = str(res["gpus"]).rpartition(":")[2]
        why = f"kind {first_kind(distributed=True, one_node_only=True).name}: torchrun starts one process per GPU of the node"
        if "cpus_per_task" in res and gpus.isdigit() and int(gpus) > 1:
            res["cpus_per_task"] = max(1, res["cpus_per_task"] // int(gpus))
            why += f"; the job's cores are shared among them ({res['cpus_per_task']} each)"
        if res.pop("tasks_per_node", None) is not None:   # torchrun's own task: the kind counts its processes
            why += "; the script's one task a node was torchrun's, so tasks_per_node goes"
        build.note(0, "torchrun", "mapped", why)
        return first_kind(distributed=True, one_node_only=True).name
    if "gpus" in res:
        return first_kind(gpu_required=True, processes=ONE).name
    return first_kind(pins_threads=True).name if res.get("cpus_per_task", 1) > 1 else DEFAULT_KIND


#: ``srun ... &`` in the set-up: a job step left running beside the program (a Ray head or worker,
#: a Dask worker), which the program, started once, then drives
_BACKGROUND_STEP = re.compile(r"(^|[\s;(])srun\s[^\n]*[^&\s]\s*&[ \t]*($|\n)")


#: programs that start their own MPI ranks over the job's tasks, run without srun or mpirun:
#: the ORCA page, "unlike most MPI programs, ORCA is not started with a parallel launch command
#: such as mpirun or srun, but requires the full path to the program" ($EBROOTORCA/orca, --ntasks=8)
OWN_MPI = {"orca": "https://docs.alliancecan.ca/wiki/ORCA/en"}


def _program_name(build: _Builder) -> str:
    return build.program.command.name.rsplit("/", 1)[-1] if build.program is not None else ""


def _starts_its_own_mpi(build: _Builder) -> bool:
    """Whether the program, started alone, starts its own MPI ranks (OWN_MPI): one task of all
    the cores (kind threaded) would leave its mpirun one slot."""
    return build.program is not None and build.program.launcher is None and _program_name(build) in OWN_MPI


#: a task count named in the program's own text (os.environ["SLURM_NTASKS"] in a here-document of
#: python, Sys.getenv("SLURM_NPROCS")), not read by the shell ($SLURM_NTASKS, which kind threaded rewrites)
_COUNT_NAMED = re.compile(r"(?<![$\w{])(SLURM_NTASKS|SLURM_NPROCS|SLURM_TASKS_PER_NODE|SLURM_NTASKS_PER_NODE)\b")


def _reads_task_count(build: _Builder) -> str:
    """The task count the program started once reads itself to start its own processes
    (multiprocessing.Pool(SLURM_NTASKS)): one process of kind threaded has one task, so the job
    keeps its tasks instead, and the program reads the same count."""
    launch = build.spec["launch"]
    text = "\n".join([str(launch.get("command", "")), str(launch.get("shell", ""))] + [str(line) for line in build.setup])
    found = _COUNT_NAMED.search(text)
    return found.group(1) if found else ""


#: a launch that starts job steps itself (``srun -n1 -c4 ./sim A &``, in a loop, under xargs):
#: they are placed on the job's tasks, which the job keeps (launcher direct, _started_once)
_STEPS = re.compile(r"(^|[\s;&|(`])(srun|mpirun|mpiexec)\s")


#: a launch that reaches the job's other nodes itself, with a remote shell to each host of the
#: node list (``ssh $NODE "torchrun …" &`` in a loop): those nodes do not stand idle
_REMOTE = re.compile(r"(^|[\s;&|(`])(ssh|pdsh|clush|pbsdsh)\s")


#: a host list given to the program (STAR-CCM+'s -machinefile, Fluent's -cnf=, a code's --hostfile),
#: or the job's node list read to make one (slurm_hl2hl.py, scontrol show hostnames)
_HOST_LIST = re.compile(r"(?:^|[\s;&|(`])(-{1,2}(?:machinefile|hostfile|nodefile|machines|hostlist)\b|-cnf=|slurm_hl2hl(?:\.py)?\b|"
                        r"scontrol\s+show\s+hostnames?\b|\$\{?SLURM_(?:JOB_)?NODELIST\b)")


def _host_list(build: _Builder) -> str:
    """How the launch or the set-up hands the program the job's hosts (_HOST_LIST), or ''."""
    launch = build.spec["launch"]
    lines = [launch.get("shell") or launch.get("command") or "", *build.setup]
    found = next(filter(None, (_HOST_LIST.search(line) for line in lines)), None)
    return found.group(1) if found else ""


def _started_once(build: _Builder, tasks: int) -> None:
    """Tasks on several nodes, and a program the batch shell started without srun or mpirun: it
    ran once, on the first node. Kind mpi with launcher direct does the same, with the job's shape
    kept, so that a program that starts its own processes over the tasks (charmrun; the driver of
    a Ray or Dask cluster the set-up started with ``srun ... &``) finds them. srun would start a
    copy per task: 80 charmruns, each starting 80 ranks. Where nothing shows the program uses
    the other nodes, they stood idle in the old job too: a to-do, as only the user knows."""
    res = build.spec["resources"]
    build.spec["launch"]["launcher"] = "direct"
    nodes = res.get("nodes", 1)
    shape = f"{nodes} node{'s' if nodes != 1 else ''} of {res.get('tasks_per_node', 1)} tasks"
    starter = build.program.launcher if build.program is not None else None
    name = build.program.command.name if build.program is not None else "the program"
    steps = _STEPS.search(build.spec["launch"].get("shell", ""))
    remote = next(filter(None, (_REMOTE.search(line) for line in [build.spec["launch"].get("shell", ""), *build.setup])), None)
    if starter and starter not in launch_options.LAUNCHERS:
        why = f"{starter} starts its own processes over the job's tasks"
    elif _starts_its_own_mpi(build):
        why = f"it starts its own MPI processes over the job's tasks ({OWN_MPI[_program_name(build)]})"
    elif steps:
        name, why = "the launch", f"it starts its own job steps ({steps.group(2)} in it)"
    elif remote:
        name, why = "the launch", f"it starts processes on the other nodes itself ({remote.group(2)} in it)"
    elif _reads_task_count(build):
        why = f"it reads the task count ({_reads_task_count(build)}) to start its own processes"
    elif any(_BACKGROUND_STEP.search(line) for line in build.setup):
        why = "the set-up starts job steps in the background (srun ... &) that the program drives"
    elif hosts := _host_list(build):
        why = f"it is given the job's hosts ({hosts}) to start its own processes there"
    else:
        build.note(0, "launcher: direct", "to do", f"the script started {name} without srun or mpirun on {res.get('nodes', 1)} "
                   f"nodes, so it ran once, on the first node, and so does the job (kind {first_kind(rank_count_is_users=True).name}, "
                   f"launcher direct, {shape} kept): unless it starts its own processes there, the other nodes stand idle; "
                   f"if it is an MPI program, set launcher: srun ({tasks} copies); if it runs alone, ask for one node")
        return
    build.note(0, "launcher: direct", "mapped", f"the script ran {name} once, on the first node, and {why}: "
               f"launcher direct starts it once the same way, with the job's {shape} kept for it")


#: SLURM's task counts a job of one node sets, as a word of a line (``$X``, ``${X}``); SLURM sets
#: SLURM_NTASKS_PER_NODE only where the script asked --ntasks-per-node
_ONE_NODE_COUNTS = ("SLURM_TASKS_PER_NODE", "SLURM_NTASKS", "SLURM_NPROCS")


def _task_counts(build: _Builder) -> "re.Pattern[str]":
    names = "|".join(_ONE_NODE_COUNTS + (() if build.ntasks_only else ("SLURM_NTASKS_PER_NODE",)))
    return re.compile(rf"\$(?:\{{({names})\}}|({names})(?!\w))")


def _counts_renamed(build: _Builder, launch: Dict) -> List[str]:
    """The task counts of SLURM that the launch and setup lines read, now $SLURM_CPUS_PER_TASK:
    the one process of kind threaded has the cores the tasks had (a job of one task would
    otherwise give it 1)."""
    counts, found = _task_counts(build), []
    for key in ("command", "shell"):
        if key in launch:
            found += [m.group(1) or m.group(2) for m in counts.finditer(launch[key])]
            launch[key] = counts.sub("$SLURM_CPUS_PER_TASK", launch[key])
    found += [m.group(1) or m.group(2) for line in build.setup for m in counts.finditer(line)]
    build.setup[:] = [counts.sub("$SLURM_CPUS_PER_TASK", line) for line in build.setup]
    return list(dict.fromkeys(found))


def _one_process(build: _Builder, kind: str) -> str:
    """Tasks asked for, but the program started without srun or mpirun: it ran once, on all of
    them as cores (GNU parallel, make -j, a threaded program). Kind threaded keeps that; an
    array's tasks are its cores in the same way (kind array runs one process a task)."""
    res, launch = build.spec["resources"], build.spec["launch"]
    tasks = res.pop("tasks_per_node")
    cores = tasks * res.get("cpus_per_task", 1)
    res["cpus_per_task"] = cores
    renamed = _counts_renamed(build, launch)
    build.note(0, f"tasks_per_node: {tasks}", "mapped",
               f"the program starts without srun or mpirun, so it ran once: kind {kind} with the same {cores} cores"
               + (f"; SLURM's task count in it ({', '.join('$' + n for n in renamed)}) became $SLURM_CPUS_PER_TASK"
                  if renamed else ""))
    return kind


def _distributed_kind(build: _Builder) -> Optional[str]:
    """DDP, Horovod and TF MultiWorker written by hand, recognised by their tell-tale lines; the
    hand-made rendezvous is dropped, since the kind sets it (and says so in the notes)."""
    if build.accelerate is not None:
        kind = first_kind(launches_per_node=True).name
        _drop_rendezvous_lines(build, kind)
        accelerate_import.adopt(build, kind)
        return kind
    found = _hand_made_kind(build)
    if found is not None:
        _adopt_rendezvous(build, found)
    return found


def _torchrun_over_nodes(build: _Builder) -> None:
    """torchrun on several nodes of GPUs (one per node under srun) started --nproc_per_node
    processes on each and gave them their ranks; kind ddp does the same with srun, one task per
    GPU, so the tasks per node are the GPUs and a torchrun's cores are shared among them. A
    count unlike that (several torchruns a node, processes unlike the GPUs) is a to do."""
    res = build.spec["resources"]
    gpus = str(res.get("gpus", "")).rpartition(":")[2]
    if build.launcher_name != "torchrun" or res.get("nodes", 1) < 2 or not gpus.isdigit():
        return
    kind, starters = first_kind(ranks_from_slurm=True, spreads_over_nodes=True).name, res.get("tasks_per_node", 1)
    procs = build.torchrun_procs
    if starters != 1 or (procs is not None and procs not in (gpus, "gpu", "auto", "$SLURM_GPUS_ON_NODE", "${SLURM_GPUS_ON_NODE}")):
        build.note(0, f"torchrun --nproc_per_node={procs or 1}", "to do", f"the script started {starters} torchrun(s) a node, "
                   f"each starting {procs or 1} processes, on nodes of {gpus} GPUs; kind {kind} starts one process per GPU: "
                   "check that the program expects that")
    res["tasks_per_node"] = int(gpus)
    shared = ""
    if res.get("cpus_per_task", 1) * starters >= int(gpus) and "cpus_per_task" in res:
        res["cpus_per_task"] = res["cpus_per_task"] * starters // int(gpus)
        shared = f"; each torchrun's cores are shared among its processes ({res['cpus_per_task']} each)"
    how = "srun started one torchrun per node" if build.torchrun_under_srun else "torchrun"
    build.note(0, "torchrun", "mapped", f"{how}, which started one process per GPU and gave each its rank: kind {kind}, "
                                        f"whose srun starts one task per GPU with the ranks and the rendezvous set{shared}")


def _hand_made_kind(build: _Builder) -> Optional[str]:
    """The distributed kind the script's lines tell of: horovodrun or hvd, TF_CONFIG, Lightning on
    GPUs, or a rendezvous of its own (MASTER_ADDR, tcp://, torchrun over nodes); None for none."""
    spec, res = build.spec, build.spec["resources"]
    launch = spec["launch"]
    text = " ".join([launch.get("command", ""), launch.get("shell", ""), *build.setup,
                     *spec.get("environment", {}).get("venv", {}).get("packages", [])]).lower()
    variables = {name for _, _, name in build.rendezvous}
    tasks = res.get("tasks_per_node", 1) * res.get("nodes", 1)
    if build.launcher_name == "horovodrun" or (tasks > 1 and re.search(r"horovod|\bhvd", text)):
        return first_kind(distributed=True, mpi_ranks=True).name
    if "TF_CONFIG" in variables or (tasks > 1 and "multiworker" in text):
        return first_kind(tf_config=True).name
    # srun python + Lightning (or LightningCLI's --trainer.*): Lightning reads SLURM's ranks itself
    if "gpus" in res and re.search(r"lightning|--trainer\.", text) and build.launcher_name in (None, "srun") \
            and (tasks > 1 or _asked_to_requeue(build)):
        return first_kind(requeues_on_signal=True).name
    if "gpus" in res and _several_processes(build) and (variables & {"MASTER_ADDR", "MASTER_PORT"} or "tcp://" in text
                                                         or "init_method" in text
                                                         or (build.launcher_name == "torchrun" and res.get("nodes", 1) > 1)):
        return first_kind(ranks_from_slurm=True, spreads_over_nodes=True).name
    return None


def _asked_to_requeue(build: _Builder) -> bool:
    """Whether the script asked for a signal before the limit or a requeue: Lightning's own
    SLURM recipe, which the kind that saves and requeues carries on. A one-process Lightning job
    that asked neither ran to its limit and ended; it stays a plain GPU job, since the kind
    would make it run again after the limit (more of the allocation, a run the user did not ask)."""
    return build.signal is not None or any(d == "--requeue" for _, _, d in build.requeue_lines)


def _several_processes(build: _Builder) -> bool:
    """Whether the script started more than one process of its program: several tasks (srun
    starts one each), or a launcher of its own (torchrun, mpirun...). A rendezvous line alone
    (``export MASTER_ADDR=127.0.0.1`` before one ``python``) is no such evidence: that one process
    may start its GPUs' workers itself, or use none, and kind ddp would start one copy per GPU."""
    res = build.spec["resources"]
    return res.get("tasks_per_node", 1) * res.get("nodes", 1) > 1 or build.launcher_name not in (None, "srun")


#: a hand-made rendezvous address: tcp://$MASTER_ADDR:3456, tcp://$(hostname):3456 (which, evaluated in each
#: task, would name each task's own node), tcp://${MASTER_ADDR}:$MASTER_PORT
_RENDEZVOUS_URL = re.compile(r"tcp://(\$\{?MASTER_ADDR\}?|\$\(hostname\)|`hostname`):(\d+|\$\{?MASTER_PORT\}?)")


def _drop_rendezvous_lines(build: _Builder, kind: str) -> None:
    """The script's MASTER_ADDR, RANK... lines, which a kind with a rendezvous sets itself (MPI
    ranks, Horovod: the script's own lines stay)."""
    spec, row = build.spec, KINDS[kind]
    variables = spec.get("environment", {}).get("variables", {})
    for _, unit, name in build.rendezvous:
        if not row.rendezvous:
            continue
        if unit in build.setup:
            build.setup.remove(unit)
        variables.pop(name, None)
        dropped = f"kind {kind} sets {row.sets_in_environment} itself"
        build.notes[:] = [n if n.text != unit else n._replace(outcome="dropped", reason=dropped) for n in build.notes]
    if not variables and "variables" in spec.get("environment", {}):
        del spec["environment"]["variables"]
        if not spec["environment"]:
            del spec["environment"]


def _adopt_rendezvous(build: _Builder, kind: str) -> None:
    """The kind's launch in place of the script's hand-made one: its launcher, framework and
    process per GPU, and the rendezvous address and world size in its own terms."""
    launch, row = build.spec["launch"], KINDS[kind]
    _drop_rendezvous_lines(build, kind)
    if row.rendezvous:
        launch["launcher"] = "srun"
    elif build.launcher_name == "horovodrun":
        launch.pop("launcher", None)
    if row.framework_default != "pytorch":
        launch["framework"] = row.framework_default
    if row.rendezvous:
        _one_process_per_gpu(build, kind)
    node_view = row.ranks_from_slurm and build.tasks_per_gpu != 1   # (--ntasks-per-gpu=1 bound each its own: _gpus_bound_per_gpu_task)
    if node_view and "gpus" in build.spec["resources"]:   # PyTorch picks its GPU by local rank
        launch["gpu_view"] = "node"
    rewritten = _rewritten_rendezvous(launch, row)
    view = "; every process keeps the node's GPUs in view, as under plain srun (launch.gpu_view: node)" if node_view else ""
    build.note(0, f"kind: {kind}", "mapped", f"a hand-made {kind} set-up: slurmkit sets {row.sets_in_environment}{rewritten}{view}"
                                            f"{_requeue_added(build, row)}")


def _requeue_added(build: _Builder, row: Kind) -> str:
    """What a kind that saves and requeues at the limit adds to a script that asked no requeue:
    said in the mapping, since the job may now run again after its time limit."""
    if not row.requeues_on_signal or _asked_to_requeue(build):
        return ""
    return (f"; unlike the script, kind {row.name} has Lightning save hpc_ckpt before the time limit and requeues the job, "
            "whose next run resumes from it (the script's job ended at the limit)")


def _one_process_per_gpu(build: _Builder, kind: str) -> None:
    """A kind with a rendezvous starts one process per GPU: the script's tasks per node give way,
    and their cores are shared among the processes."""
    res = build.spec["resources"]
    gpus = str(res.get("gpus", "")).rpartition(":")[2]
    if "tasks_per_node" not in res and not gpus.isdigit():
        return
    tasks = res.pop("tasks_per_node", 1)   # none: one process that started its GPUs' workers itself
    if not gpus.isdigit() or tasks == int(gpus):
        return
    cores = ""
    if "cpus_per_task" in res:
        res["cpus_per_task"] = max(1, res["cpus_per_task"] * tasks // int(gpus))
        cores = f"; the node's cores are shared among them ({res['cpus_per_task']} each)"
    build.note(0, f"tasks_per_node: {tasks}", "to do", f"kind {kind} runs one process per GPU ({gpus} per node) "
               f"where the script ran {tasks}{cores}: check that the program expects that")


def _rewritten_rendezvous(launch: Dict, row: Kind) -> str:
    """The launch's rendezvous address (and, where SLURM gives the ranks, its world size) as the
    kind sets them; what changed, for the note."""
    said = ""
    for key in ("command", "shell"):
        rewritten = _RENDEZVOUS_URL.sub("tcp://$MASTER_ADDR:$MASTER_PORT", launch.get(key, ""))
        if key in launch and rewritten != launch[key]:
            launch[key] = rewritten
            said = ("; the rendezvous address became tcp://$MASTER_ADDR:$MASTER_PORT (the first node, and a port from "
                    "the job id: jobs sharing a node do not clash)")
    if row.ranks_from_slurm and "shell" in launch and _WORLD_SIZE.search(launch["shell"]):
        launch["shell"] = _WORLD_SIZE.sub("$WORLD_SIZE", launch["shell"])
        said += "; the world size computed from SLURM's counts became $WORLD_SIZE"
    return said


_COUNT = r"\$?\{?(SLURM_NTASKS_PER_NODE|SLURM_JOB_NUM_NODES|SLURM_NNODES)\}?"
#: the world size as hand-made DDP scripts compute it: $((A * B)) of the tasks per node and nodes, or $SLURM_NTASKS
_WORLD_SIZE = re.compile(rf"\$\(\(\s*{_COUNT}\s*\*\s*{_COUNT}\s*\)\)|\$\{{?SLURM_NTASKS\}}?(?!_)")


def _signal_and_requeue(build: _Builder) -> None:
    """The script's --signal=USR1@N and its requeue options, each noted once, by what the kind does
    with them: a copy back before the limit takes the signal's time as stage.lead; a kind that
    saves and requeues on the signal (Lightning) writes all of them itself; any other job keeps
    them as they were, since the program may catch USR1 itself (a checkpoint, a requeue)."""
    kind, stage = KINDS[build.spec["kind"]], build.spec.get("stage")
    own = (f"kind {kind.name} asks for the signal (to the batch shell, which passes it to srun's tasks), the requeue and "
           "--open-mode=append itself")
    if build.signal is not None:
        number, line, directive, lead = build.signal
        if stage and stage.get("outputs"):
            stage["lead"] = f"{lead}s"
            build.note(number, line, "mapped", "the time before the limit becomes stage.lead where the script copies results "
                                               "back on USR1; slurmkit asks for the signal itself")
        elif kind.requeues_on_signal and int(lead) != requeue_lead(_time_s(build)):
            build.section("stage")["lead"] = f"{lead}s"
            build.note(number, line, "mapped", f"its {lead}s before the limit become stage.lead, when kind {kind.name} tells "
                                               "Lightning to save; the kind asks for the signal, the requeue and --open-mode=append itself")
        elif kind.requeues_on_signal:
            build.note(number, line, "dropped", own)
        elif build.unsaved_usr1 is not None:
            build.note(number, line, "dropped", f"it asked USR1 for the copy-back trap on line {build.unsaved_usr1}, left to do: "
                                                "once its copies are stage.outputs, slurmkit asks for the signal itself")
        else:
            _keep_directive(build, number, line, directive, "kept for the program, which may catch USR1 itself (to save a checkpoint)"
                            + _lightning_hint(build))
    for number, line, directive in build.requeue_lines:
        if not kind.requeues_on_signal:
            _keep_directive(build, number, line, directive, "")
        elif directive == "--no-requeue":
            build.note(number, line, "to do", f"the script asked never to be requeued, and kind {kind.name} requeues the job at "
                                              "the limit, after Lightning saves: use another kind if it must not be")
        else:
            build.note(number, line, "dropped", own)


def _time_s(build: _Builder) -> int:
    """The imported time limit in seconds (an hour where the script gave none, as the spec gets)."""
    try:
        return parse_duration(str(build.spec["resources"].get("time", "1h")))
    except ValueError:
        return 3600


def _keep_directive(build: _Builder, number: int, line: str, directive: str, reason: str) -> None:
    build.spec.setdefault("extra_directives", []).append(directive)
    build.note(number, line, "mapped", reason)


def _lightning_hint(build: _Builder) -> str:
    """A USR1 signal with a requeue and srun tasks on GPUs is Lightning's own SLURM recipe."""
    srun_gpus = build.launcher_name == "srun" and "gpus" in build.spec["resources"]
    if srun_gpus and any(directive == "--requeue" for _, _, directive in build.requeue_lines):
        lightning = first_kind(requeues_on_signal=True).name
        return (f"; with --requeue and srun tasks on GPUs this is PyTorch Lightning's recipe: if the program is Lightning, "
                f"use kind {lightning}")
    return ""


_ARRAY_RANGE = re.compile(r"(\d+)(?:-(\d+)(?::(\d+))?)?")


def array_range_problem(text: str) -> Optional[str]:
    """Why an ``--array`` value cannot become a sweep (checked before any id is made): not
    SLURM's FIRST[-LAST[:STEP]],...[%THROTTLE], a range backwards or with step 0, or more task
    ids than limits.DEFAULT_MAX_ARRAY_TASKS."""
    from slurmkit.sites.limits import DEFAULT_MAX_ARRAY_TASKS

    ranges, _, throttle = text.partition("%")
    if throttle and not throttle.isdigit():
        return f"--array={text}: the throttle after % is not a number"
    count = 0
    for part in ranges.split(","):
        match = _ARRAY_RANGE.fullmatch(part)
        if not match:
            return f"--array={text}: {part!r} is not FIRST, FIRST-LAST or FIRST-LAST:STEP"
        first, last, step = int(match.group(1)), int(match.group(2) or match.group(1)), int(match.group(3) or 1)
        if last < first or step < 1:
            return (f"--array={text}: {part!r} runs backwards or has step 0; write it FIRST-LAST (e.g. {last}-{first}) "
                    "with a step of 1 or more")
        count += (last - first) // step + 1
    if count > DEFAULT_MAX_ARRAY_TASKS:
        return f"--array={text}: {count} tasks, more than slurmkit's cap of {DEFAULT_MAX_ARRAY_TASKS} for one array; split the sweep"
    return None


def _array_section(text: str, script: str = "") -> Dict:
    """``--array=1-100%10`` -> the task ids as one parameter, ``task_id``, and the throttle
    (``text`` has passed array_range_problem)."""
    ranges, _, throttle = text.partition("%")
    ids: List[int] = []
    for match in _ARRAY_RANGE.finditer(ranges):   # one for each comma-separated part, as array_range_problem read them
        first, last, step = match.groups()
        ids += list(range(int(first), int(last or first) + 1, int(step or 1)))
    section: Dict = {"parameters": {_free_parameter(script): [str(i) for i in ids]}}
    if throttle:
        section["throttle"] = int(throttle)
    return section


#: the array parameter's name: the first of these that the script neither sets nor reads
_PARAMETER_NAMES = ("task_id", "array_task_id", "slurm_task_id")


def _free_parameter(script: str) -> str:
    """A name for the array's one parameter that no variable of the script has: the rendered job
    sets and exports it before the script's lines run, so a name the script sets or reads would
    change what they do. Any word of the script counts (``let task_id=$i`` and ``(( task_id ))``
    read and set a name without a ``$``)."""
    words = set(re.findall(r"[A-Za-z_]\w*", script))
    names = [*_PARAMETER_NAMES, *(f"array_task_id{n}" for n in range(2, len(words) + 3))]
    return next(name for name in names if name not in words)


def _keep_task_ids(section: Dict, text: str) -> None:
    """SLURM's own task ids (``--array=1-5`` gives 1..5), kept as array.indices where they are
    not slurmkit's 0..n-1: a program that reads $SLURM_ARRAY_TASK_ID itself (a seed, a file
    name) sees the numbers it saw."""
    ids = [int(i) for i in next(iter(section["parameters"].values()))]
    if ids != list(range(len(ids))):
        section["indices"] = text.partition("%")[0]


#: what stands in for a required field import had to leave out
_REQUIRED = {("name",): "imported", ("resources", "time"): "1h", ("launch",): {"command": "true"}}


def _validated(build: _Builder) -> None:
    """A spec import writes always reads: a value the spec reader refuses (a job name with a
    space, a memory sbatch took but slurmkit does not) is left out, or replaced where the field
    is required, with a "to do" that says what it was and why."""
    from slurmkit.core.errors import SpecError
    from slurmkit.core.yamlfile import format_keypath
    from slurmkit.spec.spec import spec_from_mapping

    for _ in range(20):
        try:
            spec_from_mapping(build.spec)
            return
        except SpecError as error:
            path = tuple(int(p) if p.isdigit() else p for p in re.findall(r"[^.\[\]]+", error.keypath))
            reason = f"the spec reader refuses it ({error.detail})"
            if error.detail == "is required" and len(path) > 1 and isinstance(path[-2], int):
                # an item of a list whose required key was left out before: the item goes whole
                path, reason = path[:-1], f"its {path[-1]} was left out"
            while path and not _leave_out(build.spec, path):
                path = path[:-1]   # a required key already left out: the entry that needs it goes too
            if not path:
                raise
            build.note(0, format_keypath(path), "to do", f"left out, {reason}: set it by hand")


def _leave_out(spec: Dict, path: Tuple) -> bool:
    parent = spec
    for key in path[:-1]:
        if not isinstance(parent, (dict, list)) or (isinstance(parent, dict) and key not in parent):
            return False
        parent = parent[key]
    last = path[-1]
    if isinstance(parent, list) and isinstance(last, int) and last < len(parent):
        parent.pop(last)
        if not parent and len(path) > 1:
            return _leave_out(spec, path[:-1])
    elif isinstance(parent, dict) and last in parent:
        del parent[last]
    else:
        return False
    for required, value in _REQUIRED.items():
        if required == path[:len(required)]:
            _put(spec, required, value)
    return True


def _put(spec: Dict, path: Tuple, value: Any) -> None:
    for key in path[:-1]:
        spec = spec.setdefault(key, {})
    spec[path[-1]] = value


# ------------------------------------------------------------------------------ the spec file



def imported_text(imported: Imported, script: str) -> str:
    """The spec as YAML, after comments listing every note that is not a plain mapping; a note the
    user must act on is a ``# to do:`` line, which ``slurmkit check`` reports until it is removed."""
    import yaml

    from slurmkit.core.output import escaped

    lines = [f"# Imported by slurmkit from {escaped(script)}."]
    for note in imported.notes:
        if note.outcome == "mapped" and not note.reason:
            continue
        where = f"line {note.line}" if note.line else "script"
        text = note.text.split("\n")[0]
        prefix = TODO_PREFIX if note.outcome == "to do" else f"# {note.outcome}: "
        # escaped: YAML refuses control characters even in comments, and the spec must read back
        reason = " ".join(note.reason.split("\n"))   # one comment line: a reason quoting several lines (a verify note) too
        lines.append(escaped(f"{prefix}{where}: {text + ': ' if text else ''}{reason}".rstrip(": ")))
    return "\n".join(lines) + "\n" + yaml.safe_dump(imported.spec, sort_keys=False, default_flow_style=False, width=1000)


