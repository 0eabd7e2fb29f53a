"""Import and port check themselves: the old script and the new one run side by side, and what
each really does is compared.

``trace`` runs a script under bash in a scratch folder (a submit folder, ``$SLURM_TMPDIR``,
``$HOME``, a job folder), with the SLURM variables of the job's shape and a PATH that holds only
recording stand-ins (trace.sh, tracerecord.py): every program start is logged with its words,
its folder, the variables that matter to it and its task count, and no real program runs. The
file tools really act inside the folder, so that the files staged in and saved out can be
compared; slurmkit's own machinery (its traps, exit file, staging and saving functions) runs as
written. ``compare`` lists every difference between two traces; one that slurmkit declared (an
import note, a port change) is shown as declared, any other is a finding, which import and port
write into the spec as a ``# to do:`` line that ``slurmkit check`` reports until removed. What
cannot be traced safely (a program named by an absolute path, ``eval`` of computed text, a
``source`` of a file outside the folder) is never run: it is a to do too.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from slurmkit.core.records import Record
from slurmkit.core.sbatch_options import SHORT_NAMES, full_long_name
from slurmkit.core.shellwords import assigned_names, launch_exports

#: a script that records nothing for this long is stopped, and said to wait for what does not
#: come; one that keeps recording is stopped at LOOP_LIMIT times it, and said to loop. Waiting
#: on the trace's progress, not on the clock alone, keeps a loaded machine from cutting a
#: script short that is only slow.
TIMEOUT_S = 10.0
LOOP_LIMIT = 6
#: the trace's own folders (tracerecord.FOLDERS names them as the shell does)
FOLDERS = ("submit", "tmpdir", "home", "scratch", "project", "job", "tmp", "spool", "abs", ".trace/bin")
#: what the trace keeps of the script's own output (for the reason a run ended early)
MAX_OUTPUT = 4000
#: the file tools the recorder stands in for on PATH (each acts inside the trace folder only)
FILE_TOOLS = ("cp", "mv", "rm", "rmdir", "mkdir", "touch", "ln", "tar", "rsync")
#: top-level folders never mirrored: the script reads them as they are (/dev/null, /proc/self/status)
NOT_MIRRORED = ("dev", "proc", "sys")
#: the variables slurmkit's scripts set from cpus_per_task (docs/job-spec.md), declared once for all
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
#: set-up programs, compared by the packages they install rather than start by start
SETUP = re.compile(r"(pip3?|virtualenv|python[0-9.]* -m (venv|pip|virtualenv))( |$)")
MAX_SAID = 3
#: how a program started in the background ends (Start.ends): waited for, or stopped when the job
#: ends with the batch script (SLURM ends a job when its script ends, and stops all it started)
BACKGROUND_WAITED = "waited for"
BACKGROUND_LEFT = "not waited for"


class Shape(Record):
    """The job as SLURM gives it to the batch script: its variables, the script's arguments, and
    the folder it starts in as a trace shows paths ("": the submit folder, $SLURM_SUBMIT_DIR)."""

    variables: Tuple[Tuple[str, str], ...]
    arguments: Tuple[str, ...] = ()
    folder: str = ""


class Start(Record):
    """One program start: its name, words (paths as the shell names them), folder, the variables
    that matter to it, the modules loaded, how many tasks run it, and what $SLURM_TMPDIR held."""

    program: str
    argv: Tuple[str, ...]
    folder: str
    env: Tuple[Tuple[str, Optional[str]], ...]
    modules: Tuple[str, ...]
    tasks: int             # how many tasks run it (srun -n 8: 8)
    via: str               # srun, mpirun or "" (started by the script)
    part: str              # program | setup | machinery (slurmkit's own functions)
    tmpdir: Tuple[str, ...]
    ends: str = ""         # "": in the foreground; BACKGROUND_WAITED or BACKGROUND_LEFT: in the background, waited for or not


class Trace(Record):
    starts: Tuple[Start, ...]
    files: Tuple[Dict[str, Any], ...]       # the file tools' calls, as logged
    untraceable: Tuple[str, ...]            # what was not run, and why
    saved: Tuple[str, ...]                  # files outside $SLURM_TMPDIR at the end (not the user's own data)
    inputs: Tuple[str, ...]                 # the user's files the script read
    status: Optional[int]                   # None: stopped (idle past TIMEOUT_S, or past LOOP_LIMIT times it)
    output: str = ""                        # the end of what the script wrote to stdout and stderr
    world: Tuple[Tuple[str, str], ...] = ()  # the user's files and folders the trace stood in for: (path, kind)
    variables: Tuple[Tuple[str, str], ...] = ()  # the job's SLURM variables it ran with (Shape.variables)


class Difference(Record):
    what: str          # start | count | argv | wait | folder | env | modules | staged | saved | input | package | exit | untraceable
    subject: str       # the program, variable, path or module family it is about
    text: str          # what differs, for a person
    old: str = ""      # the value in each trace, where it has one
    new: str = ""
    declared: str = ""  # the note or change that declared it; "" for a finding

    def __str__(self) -> str:
        return self.text + (f" (declared: {self.declared})" if self.declared else "")


class Declared(Record):
    """A difference slurmkit said it would make: ``what`` as a Difference's; ``subject`` as its, or
    "*" for any, or "PREFIX*" for those it starts; ``new``: "" for any, "yes" for what only the new
    script does, "exported" for a variable only the new script has, else the value the new script
    must show. (what "value": words a port changed, "OLD -> NEW".)"""

    what: str
    subject: str
    why: str
    new: str = ""

    def matches(self, difference: "Difference") -> bool:
        subject = self.subject == difference.subject or (self.subject.endswith("*") and difference.subject.startswith(self.subject[:-1]))
        new = not self.new or {"yes": bool(difference.new), "exported": difference.old == "(unset)" != difference.new}.get(
            self.new, difference.new == shlex.quote(self.new))
        return self.what == difference.what and subject and new


# ------------------------------------------------------------------------------------- shape

def shape_of(script: str, arguments: Sequence[str] = (), name: str = "job", array: str = "") -> Shape:
    """The SLURM variables a batch script of this header starts with: one node, task and array
    task, the first (SLURM_ARRAY_TASK_ID is the array's first index), for the trace's one run;
    ``name`` and ``array``: the job's name and --array where the header gives none."""
    options = _directives(script)
    nodes = _first_number(options.get("nodes")) or 1
    per_node = _first_number(options.get("ntasks-per-node") or options.get("tasks-per-node"))
    per_gpu = _first_number(options.get("ntasks-per-gpu"))
    if per_gpu and not per_node and not options.get("ntasks"):   # N tasks for each GPU of a node
        per_node = per_gpu * (_gpus_per_node(options, nodes) or 1)
    tasks = _first_number(options.get("ntasks")) or (per_node * nodes if per_node else None)
    cpus = _first_number(options.get("cpus-per-task"))
    node_tasks = per_node or (-(-tasks // nodes) if tasks else 1)
    variables = {"SLURM_JOB_ID": "1000", "SLURM_JOBID": "1000", "SLURM_NNODES": str(nodes), "SLURM_JOB_NUM_NODES": str(nodes),
                 "SLURM_JOB_NODELIST": _nodelist(nodes), "SLURM_NODELIST": _nodelist(nodes), "SLURMD_NODENAME": "node1",
                 "SLURM_NODEID": "0", "SLURM_TASKS_PER_NODE": _per_node(node_tasks, nodes),
                 "SLURM_CPUS_ON_NODE": str(node_tasks * (cpus or 1)), "SLURM_JOB_CPUS_PER_NODE": _per_node(node_tasks * (cpus or 1), nodes)}
    if tasks:
        variables.update(SLURM_NTASKS=str(tasks), SLURM_NPROCS=str(tasks))
    if per_node:
        variables["SLURM_NTASKS_PER_NODE"] = str(per_node)
    if cpus:
        variables["SLURM_CPUS_PER_TASK"] = str(cpus)
    gpus = _gpus_per_node(options, nodes) or _gpus_per_task(options) * node_tasks
    if gpus:
        variables.update(SLURM_GPUS_ON_NODE=str(gpus), CUDA_VISIBLE_DEVICES=",".join(map(str, range(gpus))))
    variables.update(_array_variables(options.get("array") or array))
    # and what sbatch sets for every job
    variables.update(SLURM_JOB_NAME=options.get("job-name") or name, SLURM_JOB_USER="user", SLURM_JOB_UID="1000",
                     SLURM_SUBMIT_HOST="login1", SLURM_CLUSTER_NAME="cluster", SLURM_JOB_PARTITION="default",
                     SLURM_JOB_ACCOUNT=options.get("account", "def-user"))
    return Shape(tuple(sorted(variables.items())), tuple(arguments), _start_folder(options.get("chdir")))


def _start_folder(chdir: Optional[str]) -> str:
    """Where SLURM starts the batch script: --chdir (-D) as written, from the submit folder where
    relative (SLURM_SUBMIT_DIR stays the submit folder); sbatch expands no variable in it, and a
    folder slurmd cannot enter ($SCRATCH/x, ~/x, taken as written) makes it start in /tmp."""
    if not chdir or chdir.strip() in (".", "./"):
        return ""
    chdir = chdir.strip()
    if "$" in chdir or chdir.startswith("~"):
        return "/tmp"
    return os.path.normpath(chdir if chdir.startswith("/") else f"$SLURM_SUBMIT_DIR/{chdir}")


def _directives(script: str) -> Dict[str, str]:
    """The header's #SBATCH options by long name (the last of each wins, as with sbatch)."""
    found: Dict[str, str] = {}
    for line in script.splitlines():
        line = line.strip()
        if line.startswith("#!"):
            continue
        if line and not line.startswith("#"):
            break
        if not line.startswith("#SBATCH"):
            continue
        try:
            words = shlex.split(line[len("#SBATCH"):], comments=True)
        except ValueError:
            continue
        for index, word in enumerate(words):
            name, value = _option(word, words[index + 1] if index + 1 < len(words) else "")
            if name:
                found[name] = value
    return found


def _option(word: str, following: str) -> Tuple[str, str]:
    if word.startswith("--"):
        name, equals, value = word[2:].partition("=")
        return full_long_name(name), value if equals else following
    if word.startswith("-") and len(word) >= 2 and word[1] in SHORT_NAMES:
        return SHORT_NAMES[word[1]], word[2:].lstrip("=") or following
    return "", ""


def _first_number(value: Optional[str]) -> Optional[int]:
    match = re.match(r"\d+", value or "")
    return int(match.group()) if match else None


def _nodelist(nodes: int) -> str:
    return "node1" if nodes == 1 else f"node[1-{nodes}]"


def _per_node(count: int, nodes: int) -> str:
    return str(count) if nodes == 1 else f"{count}(x{nodes})"


def _gpus_per_node(options: Dict[str, str], nodes: int) -> int:
    for name in ("gpus-per-node", "gres"):
        value = options.get(name, "")
        if name == "gres" and not value.startswith("gpu"):
            continue
        count = value.rpartition(":")[2]
        if count.isdigit():
            return int(count)
        if value == "gpu":
            return 1
    total = options.get("gpus", "").rpartition(":")[2]
    return max(1, int(total) // nodes) if total.isdigit() else 0


def _gpus_per_task(options: Dict[str, str]) -> int:
    """--gpus-per-task=[TYPE:]N: N for each of the node's tasks."""
    count = options.get("gpus-per-task", "").rpartition(":")[2]
    return int(count) if count.isdigit() else 0


def _array_variables(value: Optional[str]) -> Dict[str, str]:
    """--array=1-10:2%4: the first task's variables."""
    if not value:
        return {}
    ids: List[int] = []
    for part in value.partition("%")[0].split(","):
        match = re.fullmatch(r"(\d+)(?:-(\d+)(?::(\d+))?)?", part)
        if match:
            first, last, step = match.groups()
            ids += range(int(first), int(last or first) + 1, int(step or 1))
    if not ids:
        return {}
    return {"SLURM_ARRAY_JOB_ID": "1000", "SLURM_ARRAY_TASK_ID": str(ids[0]), "SLURM_ARRAY_TASK_MIN": str(min(ids)),
            "SLURM_ARRAY_TASK_MAX": str(max(ids)), "SLURM_ARRAY_TASK_COUNT": str(len(ids))}


def arguments_of(script: str) -> Tuple[str, ...]:
    """Arguments for a script that reads its positional parameters ($1, ${10}, "$@"): arg1 arg2 ...,
    as many as the highest it names (one for "$@" or $*), so that both scripts get the same."""
    numbers = [int(n) for n in re.findall(r"(?<!\$)\$\{?([1-9][0-9]*)\}?", script)]
    highest = max(numbers + ([1] if re.search(r"\$\{?[@*#]", script) else []), default=0)
    return tuple(f"arg{n}" for n in range(1, min(highest, 99) + 1))


# ------------------------------------------------------------------------------------- trace

def trace(script: str, shape: Shape, outputs: Sequence[str] = (), rendered: bool = False,
          world: Sequence[Tuple[str, str]] = (), timeout_s: float = TIMEOUT_S, files: Sequence[Tuple[str, str]] = (),
          watched: Sequence[str] = ()) -> Trace:
    """Run ``script`` under bash in a scratch folder with the job's ``shape``, every command a
    recording stand-in. ``outputs``: what the program writes in $SLURM_TMPDIR (the spec's
    stage.outputs), made at each program start, so that both scripts have the same to save.
    ``rendered``: a script slurmkit wrote, whose own machinery is told from the job's lines.
    ``world``: the user's files and folders another trace stood in for (Trace.world), there
    from the start, so that both scripts run in the same world. ``files``: (path, text) of files
    the spec names that slurmkit writes beside it (a task file), there from the start too.
    ``watched``: variables each program start records where its environment has them."""
    world = tuple(world) + tuple((path, "file") for path, _ in files)
    with tempfile.TemporaryDirectory(prefix="slurmkit-trace-") as folder:
        root = os.path.realpath(folder)
        _lay_out(root, shape, outputs, world, files, watched)
        script_path = os.path.join(root, "spool", "slurm_script")
        # ": ;" first: the DEBUG trap's first run turns function tracing back on (bash turns it off
        # when it finds no debugger for extdebug), before any subshell starts; the lines keep their numbers
        Path(script_path).write_text(": ; " + mirrored(script, root))
        status, output = _run(root, script_path, shape, timeout_s)
        events = _events(root)
        user_lines = _user_lines(script) if rendered else None
        made = tuple(dict.fromkeys(tuple(world) + tuple((p, k) for e in events for p, k in e.get("made", ())
                                                        if not p.startswith(("$SLURM_TMPDIR", "$SLURMKIT_JOB_DIR")))))
        waited = _waited(events)
        return Trace(tuple(_start(e, user_lines, waited) for e in events if e["kind"] == "start"),
                     tuple(e for e in events if e["kind"] == "file"), tuple(_untraceable(e) for e in events if e["kind"] == "untraceable"),
                     _saved(root, made), _inputs(events, made), status, output, made, shape.variables)


def _lay_out(root: str, shape: Shape, outputs: Sequence[str], world: Sequence[Tuple[str, str]],
             files: Sequence[Tuple[str, str]] = (), watched: Sequence[str] = ()) -> None:
    from slurmkit.port.tracerecord import make

    here = Path(__file__).resolve().parent
    for name in FOLDERS:
        os.makedirs(os.path.join(root, name), exist_ok=True)
    for path, kind in world:
        make(_real(root, path), kind)
    for path, text in files:
        make(_real(root, path), "file", content=text[:-1] if text.endswith("\n") else text)
    for tool in FILE_TOOLS:   # the file tools on PATH, each the recorder under its name
        stand_in = Path(root, ".trace", "bin", tool)
        stand_in.write_text(f'#!/bin/sh\nexec "$_TR_PYTHON" -S "$_TR_RECORDER" tool {tool} "$@"\n')
        stand_in.chmod(0o700)
    given = {**_folders(root), **dict(shape.variables)}
    lines = [f"variable\t{name}\t{value}" for name, value in given.items()] + [f"output\t{output}" for output in outputs]
    lines += [f"watch\t{name}" for name in watched]
    Path(root, ".trace", "shape").write_text("\n".join(lines) + "\n")
    Path(root, ".trace", "prelude.sh").write_text((here / "trace.sh").read_text())


def _run(root: str, script_path: str, shape: Shape, timeout_s: float) -> Tuple[Optional[int], str]:
    """bash on the script, in the submit folder, in a session of its own (stopped whole at the limit)."""
    env = {"USER": "user", "LOGNAME": "user", "SHELL": "/bin/bash", "LANG": "C.UTF-8", "TERM": "dumb", **_folders(root),
           "PATH": f"{root}/.trace/bin", "BASH_ENV": f"{root}/.trace/prelude.sh", "_TR_ROOT": root, "_TR_PATH": f"{root}/.trace/bin",
           "_TR_PYTHON": sys.executable, "_TR_BASH": "/bin/bash",
           "_TR_RECORDER": str(Path(__file__).resolve().parent / "tracerecord.py"), **dict(shape.variables)}
    start = _real(root, shape.folder) if shape.folder else f"{root}/submit"
    os.makedirs(start, exist_ok=True)   # the user's folder, there on the cluster
    process = subprocess.Popen(["/bin/bash", "--noprofile", "--norc", script_path, *shape.arguments], cwd=start, env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                               preexec_fn=lambda: confine(root))
    output, ended = _output_and_status(process, Path(root, ".trace", "log"), timeout_s)
    status = process.returncode if ended else None
    text = output.decode(errors="replace").replace(root, "<trace>")
    # extdebug, which lets the trace skip a command, makes bash look for its debugger at the start
    text = "".join(line for line in text.splitlines(keepends=True) if "bashdb" not in line and "start debugger" not in line)
    return status, text[-MAX_OUTPUT:]


def _output_and_status(process: "subprocess.Popen[bytes]", log: Path, timeout_s: float) -> Tuple[bytes, bool]:
    """The script's output, and whether it ended by itself: it is stopped, its session whole,
    where it records nothing for ``timeout_s`` or runs past LOOP_LIMIT times it (also where
    what it started in the background holds its output open after it ended)."""
    import threading

    chunks: List[bytes] = []
    reader = threading.Thread(target=lambda: chunks.append(process.stdout.read() if process.stdout else b""), daemon=True)
    reader.start()
    ended = _ended_in_time(process, reader, log, timeout_s)
    if not ended:
        os.killpg(process.pid, 9)
    reader.join()
    process.wait()
    return b"".join(chunks), ended


def _ended_in_time(process: "subprocess.Popen[bytes]", reader: Any, log: Path, timeout_s: float) -> bool:
    """Whether the script and its output ended before it recorded nothing for ``timeout_s``
    or ran LOOP_LIMIT times it (_output_and_status)."""
    import time

    start = last = time.monotonic()
    size = -1
    while reader.is_alive() or process.poll() is None:
        now = time.monotonic()
        grown = log.stat().st_size if log.exists() else 0
        if grown != size:
            size, last = grown, now
        if now - last > timeout_s or now - start > timeout_s * LOOP_LIMIT:
            return False
        reader.join(0.05)
    return True


def _folders(root: str) -> Dict[str, str]:
    """The variables that name the trace's folders, as the cluster would name the real ones."""
    return {"HOME": f"{root}/home", "TMPDIR": f"{root}/tmp", "SCRATCH": f"{root}/scratch", "PROJECT": f"{root}/project",
            "SLURM_TMPDIR": f"{root}/tmpdir", "SLURM_SUBMIT_DIR": f"{root}/submit", "SLURMKIT_JOB_DIR": f"{root}/job"}


#: Landlock (Linux 5.13+): its system calls, the ABI-1 rights to write, make and remove (and
#: ABI 2's REFER, ABI 3's TRUNCATE), and the prctl that must come first (linux/landlock.h)
_LANDLOCK_CREATE, _LANDLOCK_ADD_RULE, _LANDLOCK_RESTRICT = 444, 445, 446
_WRITE_RIGHTS = (1 << 1) | (0b11111111111 << 4)   # WRITE_FILE; REMOVE_DIR ... MAKE_SYM
_PR_SET_NO_NEW_PRIVS = 38


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 where it has none (or this is not Linux)."""
    import ctypes

    try:
        return max(0, ctypes.CDLL(None, use_errno=True).syscall(_LANDLOCK_CREATE, None, 0, 1))   # ..._VERSION
    except (OSError, AttributeError):
        return 0


def confine(root: str) -> bool:
    """Where the kernel offers Landlock, this process and all it starts may write, make and
    remove files only under ``root`` (and write /dev/null): the stand-ins keep a script inside
    it, and this holds where a line slips past them (a loop's output redirected by a computed
    path). Without Landlock, the stand-ins alone. Runs in the child, before bash starts."""
    import ctypes
    import struct

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        abi = landlock_abi()
        if abi < 1:
            return False
        handled = _WRITE_RIGHTS | (1 << 13 if abi >= 2 else 0) | (1 << 14 if abi >= 3 else 0)
        attribute = struct.pack("Q", handled)
        ruleset = libc.syscall(_LANDLOCK_CREATE, attribute, len(attribute), 0)
        if ruleset < 0:
            return False
        for path, rights in ((root, handled), ("/dev/null", (1 << 1) | (handled & (1 << 14)))):
            folder = os.open(path, os.O_PATH)
            rule = struct.pack("=Qi", rights, folder)
            libc.syscall(_LANDLOCK_ADD_RULE, ruleset, 1, rule, 0)   # LANDLOCK_RULE_PATH_BENEATH
            os.close(folder)
        confined = libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 and libc.syscall(_LANDLOCK_RESTRICT, ruleset, 0) == 0
        os.close(ruleset)
        return confined
    except (OSError, AttributeError):
        return False


_MIRRORED = re.compile(r"/([A-Za-z0-9._+-]+)")


def mirrored(script: str, root: str) -> str:
    """The script with each absolute path it writes out (``/project/x``, ``/usr/bin/python3``)
    moved under the trace folder's ``abs/``, outside comments: it reads and writes there, and a
    path the trace shows is the one written (``/project/x``). /dev, /proc and /sys stay."""
    lines = []
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("#"):
            lines.append(line)
            continue
        lines.append(_MIRRORED.sub(lambda m: _mirror(m, line, root), line))
    return "".join(lines)


def _mirror(match: "re.Match[str]", line: str, root: str) -> str:
    start = match.start()
    before = line[start - 1] if start else " "
    # a quote that opens a word ("/x, '"'"'/x), not one that closes an expansion ("$HOME"/x, "${X}"/x)
    opening_quote = before in "\"'" and (start < 2 or not (line[start - 2].isalnum() or line[start - 2] in "_})]"))
    if match.group(1) in NOT_MIRRORED or not (before in " \t=:(<>,;|&`{[" or opening_quote):
        return match.group()
    if before == "{" and line[match.end():match.end() + 1] == "}":   # GNU Parallel's {/.}, not a path
        return match.group()
    return f"{root}/abs{match.group()}"


def _events(root: str) -> List[Dict[str, Any]]:
    """The recorder's lines (Python literals: json costs each start 9 ms)."""
    import ast

    path = Path(root, ".trace", "log")
    if not path.exists():
        return []
    events = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            event = ast.literal_eval(line)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue   # a line cut short when the run was stopped
        if isinstance(event, dict):
            events.append(event)
    return events


def _start(event: Dict[str, Any], user_lines: Optional[Tuple[int, ...]], waited: Dict[int, bool]) -> Start:
    argv = tuple(event["argv"]) or ("",)
    jobs = [pid for pid in event.get("pids", ()) if pid in waited]   # the background jobs it runs in
    ends = "" if not jobs else BACKGROUND_WAITED if all(waited[pid] for pid in jobs) else BACKGROUND_LEFT
    return Start(os.path.basename(argv[0]), argv, event["cwd"], tuple(sorted(event["env"].items())), tuple(event["modules"]),
                 event["count"], event["via"], _part(event, argv, user_lines), tuple(event["tmpdir"]), ends)


def _waited(events: List[Dict[str, Any]]) -> Dict[int, bool]:
    """Each background job (its pid, trace.sh's async lines): whether the shell that started it
    waited for it (a wait after it: with no pid, or its pid; wait -n: the first not yet waited for),
    or a shell of the job killed it (``kill $wpid`` after the program, in the launch's own bash)."""
    pending: Dict[int, List[int]] = {}
    waited: Dict[int, bool] = {}
    for event in events:
        jobs = pending.setdefault(event.get("shell", 0), [])
        if event["kind"] == "async":
            jobs.append(event["pid"])
            waited[event["pid"]] = False
        elif event["kind"] == "kill" and event.get("pid") in waited:   # ended by the job, from any shell of it
            waited[event["pid"]] = True
        elif event["kind"] == "wait":
            named = str(event.get("pids", "")).split()
            covered = [pid for pid in jobs if not named or "%" in named or str(pid) in named]
            for pid in covered[:1] if event.get("any") else covered:
                waited[pid] = True
                jobs.remove(pid)
    return waited


def _part(event: Dict[str, Any], argv: Tuple[str, ...], user_lines: Optional[Tuple[int, ...]]) -> str:
    """setup (a virtualenv made, packages installed), machinery (slurmkit's own functions and
    lines), or program (the job's)."""
    if SETUP.match(" ".join((os.path.basename(argv[0]), *argv[1:]))):
        return "setup"
    if user_lines is None:
        return "program"
    callers = event["caller"].split()
    if "eval" in callers:   # the spec's environment.setup lines, run by eval
        return "program"
    lines = [int(n) for n in event["lines"].split() if n.isdigit() and n != "0"]
    if any(c.startswith("_sk_") for c in callers) or not lines or lines[-1] not in user_lines:
        return "machinery"
    return "program"


def _user_lines(script: str) -> Tuple[int, ...]:
    """The lines of a script slurmkit rendered that run the job's own words: the payload, the
    command ``slurmkit_run`` starts, or the command before ``_sk_payload=$!`` (all its lines, up
    to the comment above it)."""
    lines = script.splitlines()
    found: List[int] = []
    for index, line in enumerate(lines):
        if line.startswith("slurmkit_run "):
            found.append(index + 1)
        elif line.startswith("_sk_payload=$!") and index:
            first = index - 1
            while first > 0 and lines[first - 1].strip() and not lines[first - 1].startswith("#"):
                first -= 1
            found += range(first + 1, index + 1)
    return tuple(found)


#: why a builtin the trace stands in for was not run
_NOT_RUN = {"eval": "eval of text the script computed", "bash": "a shell running text the script computed",
            "sh": "a shell running text the script computed", "source": "a file not in the trace (outside it, or not made by the script)",
            "cd": "a folder outside the trace", "kill": "a process not the script's own", "trap": "a DEBUG trap (the trace's own)",
            "enable": "loads builtins"}


def _untraceable(event: Dict[str, Any]) -> str:
    words = " ".join(event["argv"])
    why = event.get("why") or _NOT_RUN.get(event["argv"][0] if event["argv"] else "", "could reach outside the trace")
    return f"{words[:200]}: {why}, not run"


def _real(root: str, shown: str) -> str:
    """A path as a trace shows it ($HOME/x, /project/x), in the trace folder ``root``."""
    from slurmkit.port.tracerecord import FOLDERS as NAMES

    for folder, name in NAMES:
        if name and (shown == name or shown.startswith(name + "/")):
            return f"{root}/{folder}{shown[len(name):]}"
    return f"{root}/abs{shown}" if shown.startswith("/") else f"{root}/{shown}"


def _in_world(path: str, world: Sequence[Tuple[str, str]]) -> bool:
    """``path`` is one of the user's files the trace stood in for, or inside one of their folders of data."""
    return any(path == p.rstrip("/") or (kind == "tree" and path.startswith(p.rstrip("/") + "/")) for p, kind in world)


def _saved(root: str, world: Sequence[Tuple[str, str]]) -> Tuple[str, ...]:
    """Files outside $SLURM_TMPDIR at the end, less the user's data: what the job saved or wrote."""
    from slurmkit.port.tracerecord import FOLDERS as NAMES

    found = []
    for folder, name in NAMES:
        if folder in ("tmpdir", "tmp", "job", "spool"):   # the job's own scratch ($TMPDIR too), slurmkit's job folder
            continue
        top = os.path.join(root, folder)
        for where, folders, files in os.walk(top):
            folders.sort()
            for file in sorted(files):
                shown = (name or "") + "/" + os.path.relpath(os.path.join(where, file), top)
                if not _in_world(shown, world):
                    found.append(shown)
    return tuple(found)


def _inputs(events: List[Dict[str, Any]], world: Sequence[Tuple[str, str]]) -> Tuple[str, ...]:
    """The user's files the script read: the file tools' sources that are the user's data."""
    return tuple(sorted({s.rstrip("/") for e in events for s in e.get("sources", ()) if _in_world(s.rstrip("/"), world)}))


# ----------------------------------------------------------------------------------- compare

def compare(old: Trace, new: Trace, declared: Sequence[Declared] = ()) -> List[Difference]:
    """Every difference between what the old script did and what the new one does: each program
    start (count, words, folder, variables, modules, what $SLURM_TMPDIR held), the packages set
    up, the files saved and read, how each ended, and what could not be traced. Each one a
    Declared matches is marked with its reason. A run that was stopped is compared by that alone."""
    differences = _ended(old, new)
    if None not in (old.status, new.status):
        differences += _starts(old, new) + _packages(old, new) + _file_sets(old, new)
    threads = dict(new.variables).get("SLURM_CPUS_PER_TASK", "1")
    declared = (*declared, *(Declared("env", name, f"slurmkit sets {name} from cpus_per_task", threads) for name in THREAD_VARIABLES))
    return [_marked(d, declared) for d in differences + _not_traced(old, new)]


def _ended(old: Trace, new: Trace) -> List[Difference]:
    said = []
    for label, one in (("old", old), ("new", new)):
        if one.status is None:
            said.append(Difference("exit", label, f"the {label} script was stopped (nothing new for {TIMEOUT_S:.0f}s, or "
                                                  f"{TIMEOUT_S * LOOP_LIMIT:.0f}s in all): it loops, or waits for something that "
                                                  "does not come (the rest was not traced)"))
    if None not in (old.status, new.status) and old.status != new.status:
        last = _last_line(new.output if new.status else old.output)
        said.append(Difference("exit", "", f"the old script ended with status {old.status}, the new one with {new.status}"
                                           + (f" ({last})" if last else ""), str(old.status), str(new.status)))
    return said


def _last_line(output: str) -> str:
    """The script's last word on why it ended (not bash's own aside on a background job it lost)."""
    lines = [line for line in output.splitlines() if line.strip() and "wait_for: No record of process" not in line]
    return lines[-1][:200] if lines else ""


def _program_starts(one: Trace, payload: str) -> Dict[str, List[Start]]:
    """The job's program starts by name, and slurmkit's own of ``payload``, the other script's program
    (kind many-tasks starts GNU Parallel in its machinery)."""
    grouped: Dict[str, List[Start]] = {}
    for start in one.starts:
        if start.part == "program" or (start.part == "machinery" and start.program == payload):
            grouped.setdefault(start.program, []).append(start)
    return grouped


def _payload(one: Trace) -> str:
    """The program the script runs last: the job's own."""
    return next((s.program for s in reversed(one.starts) if s.part == "program"), "")


def _starts(old: Trace, new: Trace) -> List[Difference]:
    """Starts compared program by program, the first with the first, and so on."""
    before, after = _program_starts(old, _payload(new)), _program_starts(new, _payload(old))
    said: List[Difference] = []
    for name in sorted(set(before) | set(after)):
        runs, reruns = before.get(name, []), after.get(name, [])
        if len(runs) != len(reruns):
            said.append(Difference("start", name, f"{name} starts {len(runs)} time(s) in the old script, {len(reruns)} in the new"
                                                   + _example(runs or reruns), str(len(runs)), str(len(reruns))))
        for one, other in _paired(runs, reruns):
            said += _start_differences(name, one, other)
    return _deduplicated(said)


def _paired(runs: List[Start], reruns: List[Start]) -> List[Tuple[Start, Start]]:
    """Starts of one program paired: the same start in both first (runs in the background start in
    any order), then the same words and folder (a declared change of their variables aside), then
    those with the same first word (the script they run), then in order."""
    runs, reruns = list(runs), list(reruns)
    pairs: List[Tuple[Start, Start]] = []
    for same in (lambda a, b: a == b, lambda a, b: (a.argv, a.folder) == (b.argv, b.folder),
                 lambda a, b: a.argv[:2] == b.argv[:2], lambda a, b: True):
        for run in list(runs):
            match = next((r for r in reruns if same(run, r)), None)
            if match is not None:
                pairs.append((run, match))
                runs.remove(run)
                reruns.remove(match)
    return pairs


def _example(starts: List[Start]) -> str:
    return f" ({_words(starts[0].argv)})" if starts else ""


def _start_differences(name: str, old: Start, new: Start) -> List[Difference]:
    said = []
    if old.tasks != new.tasks:
        said.append(Difference("count", name, f"{name} runs as {old.tasks} task(s) in the old script ({_via(old)}), "
                                              f"{new.tasks} in the new ({_via(new)})", str(old.tasks), str(new.tasks)))
    if old.argv[1:] != new.argv[1:]:
        what = "rendezvous" if _rendezvous_only(old.argv, new.argv) else "argv"
        old_text, new_text = _differing_words(old.argv, new.argv)
        said.append(Difference(what, name, f"{name}'s words differ: old `{old_text}`, new `{new_text}`",
                               shlex.join(old.argv), shlex.join(new.argv)))
    if (old.ends == BACKGROUND_LEFT) != (new.ends == BACKGROUND_LEFT):
        left, other = ("old", "new") if old.ends == BACKGROUND_LEFT else ("new", "old")
        said.append(Difference("wait", name, f"{name} runs in the background and nothing waits for it in the {left} script (the job "
                                             f"ends when the script does, and stops it), while the {other} script lets it end",
                               old.ends or "foreground", new.ends or "foreground"))
    if old.folder != new.folder:
        said.append(Difference("folder", name, f"{name} starts in {old.folder} in the old script, {new.folder} in the new",
                               old.folder, new.folder))
    before, after = dict(old.env), dict(new.env)
    for variable in sorted(set(before) | set(after)):
        if before.get(variable) != after.get(variable):
            said.append(Difference("env", variable, f"{name} gets {variable}={_value(before.get(variable))} in the old script, "
                                                    f"{_value(after.get(variable))} in the new", _value(before.get(variable)),
                                   _value(after.get(variable))))
    for module in sorted(set(old.modules) ^ set(new.modules)):
        where = "old" if module in old.modules else "new"
        said.append(Difference("modules", _family(module), f"{name} runs with module {module} loaded only in the {where} script",
                               module if where == "old" else "", module if where == "new" else ""))
    return said + _staged_differences(name, old, new)


def _staged_differences(name: str, old: Start, new: Start) -> List[Difference]:
    """The files in $SLURM_TMPDIR when ``name`` starts in one script only (slurmkit's own aside)."""
    said = []
    for path in sorted(p for p in set(old.tmpdir) ^ set(new.tmpdir) if not _SLURMKITS_OWN.search(p)):
        where = "old" if path in old.tmpdir else "new"
        said.append(Difference("staged", path, f"$SLURM_TMPDIR/{path} is there when {name} starts only in the {where} script",
                               "there" if where == "old" else "", "there" if where == "new" else ""))
    return said


#: the words of a hand-made rendezvous: an address, and the world size after its option
_RENDEZVOUS_WORD = re.compile(r"(tcp|env)://")
_WORLD_OPTIONS = ("--world_size", "--world-size", "--nnodes", "--nproc_per_node", "--nproc-per-node", "--dist-url", "--init_method")


def _rendezvous_only(old: Tuple[str, ...], new: Tuple[str, ...]) -> bool:
    """The two differ only in the words of a rendezvous (tcp://HOST:PORT, the world size), which a
    distributed kind sets itself."""
    if len(old) != len(new):
        return False
    return all(a == b or _RENDEZVOUS_WORD.search(a + b) or (i and old[i - 1].partition("=")[0] in _WORLD_OPTIONS)
               for i, (a, b) in enumerate(zip(old, new)))


def _family(module: str) -> str:
    """Lmod's name of a module (StdEnv of StdEnv/2023): one version of a name is loaded at a time."""
    return module.rpartition("/")[0] or module


def _via(start: Start) -> str:
    return start.via or "started by the script"


def _words(argv: Tuple[str, ...]) -> str:
    text = shlex.join(argv)
    return text if len(text) <= 160 else text[:160] + "..."


def _differing_words(old: Tuple[str, ...], new: Tuple[str, ...]) -> Tuple[str, str]:
    """Both command lines as the user reads them; a long one is shown from the first word that
    differs (after the program's name and one word of context), so that the cut never hides the difference."""
    if len(shlex.join(old)) <= 160 and len(shlex.join(new)) <= 160:
        return shlex.join(old), shlex.join(new)
    first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    start = max(first - 1, 1)   # one word before it, for context
    gap = " ... " if start > 1 else " "
    return tuple(_words(argv[:1]) + gap + _words(argv[start:]) for argv in (old, new))   # type: ignore[return-value]


def _value(value: Optional[str]) -> str:
    return "(unset)" if value is None else shlex.quote(value)


def _deduplicated(said: List[Difference]) -> List[Difference]:
    """A difference said once, and one of a kind about one subject MAX_SAID times at most (a loop of runs)."""
    kept: List[Difference] = []
    seen: Dict[Tuple[str, str], int] = {}
    texts = set()
    for difference in said:
        key = (difference.what, difference.subject)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= MAX_SAID and difference.text not in texts:
            kept.append(difference)
            texts.add(difference.text)
    return kept


def _packages(old: Trace, new: Trace) -> List[Difference]:
    """The packages each script installs (pip install's words), compared as sets: slurmkit makes
    the virtualenv its own way, and must install what the old script installed."""
    before, after = _installed(old), _installed(new)
    return [Difference("package", p, f"{p} is installed only by the {'old' if p in before else 'new'} script",
                       "yes" if p in before else "", "" if p in before else "yes") for p in sorted(before ^ after)] \
        + (_install_order(old, new) if before == after else [])


#: pip's options that change nothing of what is installed (slurmkit adds --no-index on a wheelhouse site).
_PIP_PLAIN = frozenset(("--no-index", "-q", "--quiet", "-qq", "-v", "--verbose", "--no-cache-dir",
                        "--disable-pip-version-check", "--no-warn-script-location", "--no-color"))


def _install_order(old: Trace, new: Trace) -> List[Difference]:
    """The same packages installed in another order, or with other options (``--no-deps``
    dropped): pip resolves each line against what the lines before it installed."""
    before, after = _install_steps(old), _install_steps(new)
    if before == after:
        return []
    return [Difference("package", "order", "pip installs in another order or with other options: old "
                       + "; ".join(before) + ", new " + "; ".join(after), "; ".join(before), "; ".join(after))]


def _install_steps(one: Trace) -> List[str]:
    """Each package (or ``-r FILE``) pip installs, in order, with the options of its line that matter."""
    steps: List[str] = []
    for start in one.starts:
        words = list(start.argv)
        if start.part != "setup" or "install" not in words or not start.program.startswith(("pip", "python")):
            continue
        rest = words[words.index("install") + 1:]
        options = sorted({w for i, w in enumerate(rest) if w.startswith("-") and w not in _PIP_PLAIN
                          and w not in ("-r", "--requirement") and not (i and rest[i - 1] in _PIP_VALUES)})
        for index, word in enumerate(rest):
            after = rest[index - 1] if index else ""
            if after in ("-r", "--requirement"):
                word = f"-r {os.path.basename(word)}"
            elif word.startswith("-") or word == "pip" or after in _PIP_VALUES + ("-c", "--constraint"):
                continue
            step = " ".join([*options, word])
            if step not in steps:
                steps.append(step)
    return steps


_PIP_VALUES = ("-i", "--index-url", "-f", "--find-links", "--extra-index-url", "--prefix", "--target", "-t", "--root")


def _installed(one: Trace) -> set:
    found = set()
    for start in one.starts:
        words = list(start.argv)
        if start.part != "setup" or "install" not in words:
            continue
        rest = words[words.index("install") + 1:]
        for index, word in enumerate(rest):
            after = rest[index - 1] if index else ""
            if word in ("-r", "--requirement", "-c", "--constraint", *_PIP_VALUES) or after in _PIP_VALUES:
                continue
            if after in ("-r", "--requirement", "-c", "--constraint"):
                found.add(f"-r {os.path.basename(word)}")
            elif not word.startswith("-") and word != "pip":
                found.add(word)
    return found


#: files of slurmkit's runtime, which only the new script makes: its task env, a copy kept
#: beside a destination (DEST.partial-JOBID), the previous copy during a swap, the runtime itself
_SLURMKITS_OWN = re.compile(r"(^|/)(slurmkit-[\w.-]+|[^/]+\.partial-\d[\w-]*|[^/]+\.slurmkit-old)(/|$)")


def _file_sets(old: Trace, new: Trace) -> List[Difference]:
    said = []
    for path in sorted(p for p in set(old.saved) ^ set(new.saved) if not _SLURMKITS_OWN.search(p)):
        where = "old" if path in old.saved else "new"
        said.append(Difference("saved", path, f"{path} is saved (or written) only by the {where} script",
                               "yes" if where == "old" else "", "yes" if where == "new" else ""))
    for path in sorted(p for p in set(old.inputs) ^ set(new.inputs) if not _SLURMKITS_OWN.search(p)):
        where = "old" if path in old.inputs else "new"
        said.append(Difference("input", path, f"{path} is read only by the {where} script"))
    return said


#: why a step neither script's trace could follow is not a finding
UNTRACED_ALIKE = "the same step in both scripts, so no difference was seen; what it does is not compared"


def _not_traced(old: Trace, new: Trace) -> List[Difference]:
    """What a trace did not run. The same step in both traces (a file sourced from the user's
    home, a program this host cannot run) is no difference, and the user cannot act on "not
    traced": it is marked UNTRACED_ALIKE, for a note. One in only one trace stays a finding: the
    two scripts may differ there."""
    alike = set(old.untraceable) & set(new.untraceable)
    return [Difference("untraceable", text, f"not traced: {text}", declared=UNTRACED_ALIKE if text in alike else "")
            for text in dict.fromkeys(old.untraceable + new.untraceable)]


def _marked(difference: Difference, declared: Sequence[Declared]) -> Difference:
    """The difference with the reason slurmkit gave for it, if it gave one: a Declared of its
    kind about its subject (or any); words that differ only by values a port changed, or by a
    path it moved under a module's folder."""
    for declaration in declared:
        if declaration.matches(difference):
            return difference._replace(declared=declaration.why)
    if difference.what == "env":
        why = _moved_by(f"{difference.old} -> {difference.new}", declared)
        return difference._replace(declared=why) if why else difference
    if difference.what == "argv":
        values = {d.subject: d.why for d in declared if d.what == "value"}
        pairs = _changed_words(difference.old, difference.new)
        whys = [values.get(pair) or values.get(_inner_change(pair)) or _moved_by(pair, declared) for pair in pairs]
        if pairs and all(whys):
            return difference._replace(declared="; ".join(dict.fromkeys(w for w in whys if w)))
    return difference


def _inner_change(pair: str) -> str:
    """"OLD -> NEW" of the part two words differ in, whole numbers kept whole
    (``--num-cpus=40 -> --num-cpus=64``: ``40 -> 64``, a count a port changed)."""
    old, _, new = pair.partition(" -> ")
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    while start and old[start - 1].isdigit():
        start -= 1
    while end and old[len(old) - end].isdigit():
        end -= 1
    return f"{old[start:len(old) - end]} -> {new[start:len(new) - end]}"


def _moved_by(pair: str, declared: Sequence[Declared]) -> str:
    """Why the words "OLD -> NEW" differ, where a port moved the path in them (_path_moved); else ""."""
    return next((d.why for d in declared if d.what == "path" and _path_moved(pair, d)), "")


def _changed_words(old: str, new: str) -> List[str]:
    """The words that differ between two commands of as many words, as "OLD -> NEW"."""
    before, after = shlex.split(old), shlex.split(new)
    if len(before) != len(after):
        return []
    return [f"{a} -> {b}" for a, b in zip(before, after) if a != b]


def _path_moved(pair: str, declaration: Declared) -> bool:
    """Whether the words "OLD -> NEW" differ by a path a port moved under a module's folder
    (oldpaths.module_file): OLD names the old path, NEW the module's folder (the trace's stand-in,
    of whichever version) and the same rest, with the same words around it."""
    old, _, new = pair.partition(" -> ")
    at = old.find(declaration.subject)
    root, _, rest = declaration.new.partition("|")
    if at < 0:
        return False
    before, after = old[:at], old[at + len(declaration.subject):]
    return bool(re.fullmatch(re.escape(before) + r".*" + re.escape(root) + r"[^/]+" + (re.escape("/" + rest) if rest else "")
                             + re.escape(after), new))


# ------------------------------------------------------------------------------ declarations

def declared_by_import(notes: Iterable[Any], spec: Dict[str, Any]) -> List[Declared]:
    """What import declared, by its notes (porting.Note) and the spec it wrote."""
    return [d for note in notes for d in _declared_by_note(note)] + _declared_by_spec(spec)


def _declared_by_note(note: Any) -> List[Declared]:
    """A line import dropped no longer starts its program, nor those of its $(...); a variable it
    dropped (OMP_NUM_THREADS, a rendezvous) is the kind's to set; a module it dropped is not
    loaded. Packages a line installed with conda, which it mapped, are installed by pip."""
    words = _note_words(note.text)
    if note.outcome == "mapped":
        return _declared_by_mapping(note, words)
    if note.outcome != "dropped" or not words:
        return []
    declared = [Declared("start", os.path.basename(program), note.reason) for program in _substituted(note.text)]
    assigned = re.match(r"(?:export\s+)?([A-Za-z_]\w*)=", note.text)
    if assigned:
        return declared + [Declared("env", assigned.group(1), note.reason)]
    if words[0] in ("module", "ml"):
        return declared + [Declared("modules", _family(w), note.reason) for w in words[1:] if not w.startswith("-") and w != "load"]
    return declared + [Declared("start", os.path.basename(words[0]), note.reason)] + _declared_by_tee(words, note.reason)


def _declared_by_mapping(note: Any, words: List[str]) -> List[Declared]:
    """What a line import mapped changes: pip lines the virtualenv installs (a requirements file
    read where it came from), a decompressor whose archive tar now reads, an array line run twice."""
    from slurmkit.port.porting import ARRAY_RUN_TWICE, PIPED_ARCHIVE

    if note.text.startswith("pip install -r $SLURM_TMPDIR/"):   # its source read instead
        return [Declared("package", f"-r {os.path.basename(path)}", note.reason) for path in (words[-1], note.reason.split(":")[0])]
    if "install" in words[:3]:
        return [Declared("package", w, "import moved it into the virtualenv slurmkit makes", "yes")
                for w in words[words.index("install") + 1:] if not w.startswith("-")]
    if PIPED_ARCHIVE in note.reason:   # the decompressor's work is tar's now
        return [Declared("start", os.path.basename(words[0]), note.reason)]
    if ARRAY_RUN_TWICE in note.reason:   # the line that makes an array, run in both places
        return [Declared("start", os.path.basename(program), note.reason) for program in [*_substituted(note.text), *words[:1]]]
    return []


def _declared_by_tee(words: List[str], why: str) -> List[Declared]:
    """A tee import dropped no longer writes its files (in the submit folder, as the trace shows them)."""
    if words[0] != "tee":
        return []
    return [Declared("saved", w if w.startswith(("/", "$")) else f"$SLURM_SUBMIT_DIR/{w}", why) for w in words[1:] if not w.startswith("-")]


def _declared_by_spec(spec: Dict[str, Any]) -> List[Declared]:
    """stage.outputs are saved on every exit (the old script may have saved them on a signal
    only); environment.modules and environment.variables (an ``export`` import moved) come before
    the job's lines, so a program started before the old script's export sees them; under environment.allexport:
    false, the names launch.shell reads are exported after the setup lines. (Under set -a, the
    default, a name the old script assigned without export reaches its programs: a finding.)"""
    declared = [Declared("saved", destination + "*", "slurmkit saves stage.outputs on every exit", "yes")
                for destination in _destinations(spec)]
    declared += [Declared("staged", folder + "*", "slurmkit stages stage.inputs before the job's lines", "yes")
                 for folder in _staged_folders(spec)]
    environment = spec.get("environment") or {}
    declared += [Declared("modules", _family(str(module)), "environment.modules are loaded before the job's lines", "yes")
                 for module in environment.get("modules") or ()]
    variables = environment.get("variables")
    declared += [Declared("env", str(name), "environment.variables are exported before the job's lines", "exported")
                 for name in (variables if isinstance(variables, dict) else ())]
    launch = spec.get("launch") or {}
    shell = launch.get("shell") if isinstance(launch, dict) else None
    if environment.get("allexport") is False and isinstance(shell, str):
        setup = [str(line) for line in environment.get("setup") or ()]
        declared += [Declared("env", name, "launch.shell reads it in a bash of its own, so slurmkit exports it", "exported")
                     for name in launch_exports(setup, [shell])]
    return declared


def _destinations(spec: Dict[str, Any]) -> List[str]:
    """Where the spec's stage.outputs go, as a trace shows paths."""
    found = []
    for output in (spec.get("stage") or {}).get("outputs") or ():
        to = str(output.get("to", "")) if isinstance(output, dict) else ""
        to = "$HOME/" + to[2:] if to.startswith("~/") else to
        found.append(to.rstrip("/") + "/" if to.startswith(("$", "/")) else f"$SLURM_SUBMIT_DIR/{to.rstrip('/')}/")
    return [f for f in found if f.strip("/")]


def _staged_folders(spec: Dict[str, Any]) -> List[str]:
    """Where the spec's stage.inputs land, as a trace shows paths in $SLURM_TMPDIR ("" for its
    top): what is there earlier than the old script put it, since staging comes first."""
    found = []
    for staged in (spec.get("stage") or {}).get("inputs") or ():
        to = str(staged.get("to") or "") if isinstance(staged, dict) else ""
        to = re.sub(r"^\$(?:SLURM_TMPDIR|\{SLURM_TMPDIR\})/?", "", to)
        if not to.startswith(("/", "$", "~")):
            found.append(to.strip("/") + "/" if to.strip("/") else "")
    return found


def _substituted(text: str) -> List[str]:
    """The programs a line's $(...) and `...` run: the first word of each command of it."""
    return [command.split()[0] for inner in re.findall(r"\$\(([^)]*)\)|`([^`]*)`", text) for part in inner
            for command in re.split(r"\||;|&&", part) if command.strip()]


def _note_words(text: str) -> List[str]:
    try:
        return shlex.split(text.split("\n", 1)[0][:8192], comments=True)
    except ValueError:
        return []


#: what a port change to a field may change in a trace
_CHANGED_BY = {"resources.cpus_per_task": (("env", "OMP_NUM_THREADS"), ("env", "MKL_NUM_THREADS"), ("env", "SLURM_CPUS_PER_TASK")),
               "resources.tasks_per_node": (("count", "*"), ("env", "SLURM_NTASKS_PER_NODE"), ("env", "SLURM_NTASKS")),
               "resources.nodes": (("count", "*"), ("env", "SLURM_NNODES"), ("env", "SLURM_NTASKS")),
               "resources.gpus": (("env", "CUDA_VISIBLE_DEVICES"), ("count", "*")),
               "environment.modules": (("modules", "*"),)}


def declared_by_port(changes: Iterable[Any]) -> List[Declared]:
    """What port's changes (retarget.Change) declared, by the field each changed, and the words
    that carry a changed count (-j 40 -> -j 192)."""
    declared = [Declared(what, subject, f"port changed {change.field}") for change in changes
                for what, subject in _CHANGED_BY.get(change.field, ())]
    declared += [Declared(what, subject, f"port changed {change.field}", *rest) for change in changes
                 for what, subject, *rest in getattr(change, "declares", ())]
    declared += [Declared("start", word, f"port changed {change.field}") for change in changes for word in _renamed_words(change)]
    # a variable the job sets from the count (JULIA_NUM_THREADS=$SLURM_CPUS_PER_TASK) shows the new count
    declared += [Declared("env", "*", f"port changed {change.field} ({change.old} -> {change.new})", str(change.new))
                 for change in changes if change.field == "resources.cpus_per_task" and isinstance(change.new, int)]
    return declared + [Declared("value", f"{change.old} -> {change.new}", f"port changed {change.field} ({change.old} -> {change.new})")
                       for change in changes if isinstance(change.old, (int, str)) and isinstance(change.new, (int, str))]


#: the fields whose lines a port rewrites word by word (a renamed program: namd2 -> namd3)
_LINE_FIELDS = ("launch.command", "launch.shell", "environment.setup")


def _renamed_words(change: Any) -> List[str]:
    """The words a port put in or took out of a job's lines: a program it renamed starts in one
    trace only, which the change declared."""
    if change.field not in _LINE_FIELDS:
        return []
    old, new = (set(" ".join(map(str, v)).split() if isinstance(v, list) else str(v or "").split()) for v in (change.old, change.new))
    return sorted(os.path.basename(w) for w in old ^ new)


def declared_by_plan(plan: Any, named: Iterable[str]) -> Tuple[Declared, ...]:
    """What a rendered script does by its plan (core.plan.Plan) beyond the spec's words: the
    modules slurmkit loads that the spec does not name (the site's standard environment, the
    python a Python program runs with), and what a distributed kind sets for each process."""
    declared = [Declared("modules", _family(m), f"slurmkit loads {m} on {plan.profile} itself (the site's standard environment, "
                                                "or what the job's kind needs)") for m in plan.modules if m not in set(named)]
    if plan.tasks is not None:   # GNU Parallel's joblogs, kept beside the spec for a later job to resume from
        joblog = re.sub(r"\$\{(\w+)\}", r"$\1", plan.tasks.joblog).rstrip("/")
        tasks = re.sub(r"\$\{(\w+)\}", r"$\1", plan.tasks.file)
        declared += [Declared("saved", f"{joblog}/*", f"kind {plan.kind} keeps its joblogs in {joblog} to resume from", "yes"),
                     Declared("input", tasks, f"kind {plan.kind} reads its tasks from {tasks}")]
        if plan.tasks.one_node:   # GNU Parallel shares the job's cores out: each task's threads are its own cores
            env = dict(plan.environment)
            declared += [Declared("env", name, f"kind {plan.kind} sets {name} to each task's cores", str(env[name]))
                         for name in THREAD_VARIABLES if name in env]
    shared = plan.distributed
    if shared is not None:
        kind = f"kind {plan.kind}"
        if shared.gpu_rank:
            declared.append(Declared("env", "CUDA_VISIBLE_DEVICES", f"{kind} gives each process its own GPU"))
        if shared.rendezvous or shared.master_env:
            why = f"{kind} sets the rendezvous (MASTER_ADDR, MASTER_PORT) itself"
            declared.append(Declared("rendezvous", "*", why))
            declared += [Declared("env", name, why) for name in ("MASTER_ADDR", "MASTER_PORT")]
            # the script's own way of naming the first node is not run
            declared += [Declared("start", name, why) for name in ("hostname", "scontrol", "head")]
        if shared.ranks_from_slurm:
            declared += [Declared("env", name, f"{kind} sets it from SLURM's") for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE")]
        if shared.tf_config:
            declared.append(Declared("env", "TF_CONFIG", f"{kind} builds it for each task"))
    return tuple(declared)


def unseen_changes(changes: Iterable[Any], new: Trace) -> List[Difference]:
    """A port change to the modules that the new script does not keep: a module the port loads
    that is not loaded when the program starts (a kept line loads another version after it)."""
    # An option word (a line bash ran as a command of its own, `--nthread 4`) is no program: none is said of it.
    last = next((s for s in reversed(new.starts) if s.part == "program" and not s.program.startswith("-")), None)
    if last is None:
        return []
    said = []
    for change in changes:
        if change.field != "environment.modules":
            continue
        for module in change.new or ():
            if module not in last.modules:
                loaded = next((m for m in last.modules if _family(m) == _family(module)), "none")
                said.append(Difference("modules", _family(module), f"port loads {module}, but {last.program} runs with "
                                                                    f"{_family(module)}: {loaded} (a line of the job loads it after)"))
    return said


# ------------------------------------------------------------------------- import and port

class Verification(Record):
    """What verification found: every difference, and why it did not run (where it did not)."""

    differences: Tuple[Difference, ...] = ()
    not_run: str = ""

    @property
    def findings(self) -> Tuple[Difference, ...]:
        return tuple(d for d in self.differences if not d.declared)

    @property
    def declared(self) -> Tuple[Difference, ...]:
        return tuple(d for d in self.differences if d.declared and d.declared != UNTRACED_ALIKE)

    @property
    def untraced(self) -> Tuple[Difference, ...]:
        """The steps neither trace ran, the same in both: notes, not to-dos (_not_traced)."""
        return tuple(d for d in self.differences if d.declared == UNTRACED_ALIKE)

    @property
    def refused_by_check(self) -> bool:
        """Not run because a spec does not render, which ``check`` of that spec reports itself as
        an error: a to-do would say it twice, and would stay in the ported spec (carried with
        import's lines) where the new cluster renders it."""
        return self.not_run.startswith(DOES_NOT_RENDER)

    def notes(self) -> Tuple[str, ...]:
        """The lines import and port write as notes: what verification did not cover."""
        refused = (f"verify: not verified: {self.not_run}",) if self.refused_by_check else ()
        return refused + tuple(f"verify: {d.text} ({UNTRACED_ALIKE})" for d in self.untraced)

    def todos(self) -> Tuple[str, ...]:
        """The lines import and port write into the spec, for ``check`` to report until removed."""
        if self.not_run:
            return () if self.refused_by_check else (f"verify: not verified: {self.not_run}",)
        return tuple(f"verify: {d.text}" for d in self.findings)


#: why verification did not run where a spec does not render (Verification.refused_by_check)
DOES_NOT_RENDER = "the spec does not render on "


class NotVerified(Exception):
    """Verification could not run (a spec that does not render): the reason."""


class Rendered(Record):
    script: str
    site: str
    declared: Tuple[Declared, ...]   # what the plan says the script does beyond the spec's words
    cc_cluster: str = ""             # $CC_CLUSTER on the cluster, as the Alliance's shell profile sets it


def rendered(mapping: Dict[str, Any], profile: Optional[str]) -> Rendered:
    """The script slurmkit renders of a spec (a YAML mapping) on ``profile`` (else the spec's, else this host's)."""
    from slurmkit.core.errors import SlurmkitError
    from slurmkit.render.render import render
    from slurmkit.resolve.resolve import resolve
    from slurmkit.sites.profiles import select_profile
    from slurmkit.spec.spec import spec_from_mapping

    try:
        spec = spec_from_mapping(mapping, source="the spec")
        site, _ = select_profile(profile or spec.profile, warn_retired=False)
        resolution = resolve(spec, site)
        if resolution.plan is None and site.retired_node_types:
            resolution = resolve(spec, site_as_it_was(site))
        if resolution.plan is None:
            first = resolution.errors[0]
            raise NotVerified(f"{DOES_NOT_RENDER}{site.name}: {first.field}: {first.message}")
        return Rendered(render(resolution.plan, inline=True), site.name, declared_by_plan(resolution.plan, spec.environment.modules),
                        next(iter(site.detect.cc_cluster), ""))
    except SlurmkitError as error:
        raise NotVerified(f"the spec does not render: {error}") from error


def site_as_it_was(site: Any) -> Any:
    """``site`` with the node types it retired back in service: an old script that asks for them
    (Cedar's P100s) is traced as the cluster ran it then; check and submit still refuse it."""
    return site._replace(node_types=site.node_types + site.retired_node_types, retired_node_types=())


def outputs_of(*mappings: Dict[str, Any]) -> Tuple[str, ...]:
    """What the program writes in $SLURM_TMPDIR for the specs to save: their stage.outputs and checkpoint."""
    found: List[str] = []
    for mapping in mappings:
        stage = mapping.get("stage") or {}
        for output in stage.get("outputs") or ():
            found.append(str(output.get("from", "") if isinstance(output, dict) else output))
        if isinstance(stage.get("checkpoint"), dict):
            found.append(str(stage["checkpoint"].get("from", "")))
    return tuple(dict.fromkeys(o.strip("/") for o in found if o))


def not_traceable(script: str) -> str:
    """Why this host cannot trace the script: no bash 4.4 or newer (the stand-ins need it), or a
    script for another interpreter (its #! line); "" where it can."""
    first = script.split("\n", 1)[0]
    interpreter = os.path.basename(first[2:].split()[0]) if first.startswith("#!") and first[2:].split() else "bash"
    if interpreter == "env" and len(first.split()) > 1:
        interpreter = os.path.basename(first.split()[1])
    if interpreter not in ("bash", "sh"):
        return f"the script runs under {interpreter} (its #! line), not bash: it is not traced"
    try:
        version = subprocess.run(["/bin/bash", "-c", "echo ${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}"], capture_output=True,
                                 text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "this host has no /bin/bash to run the scripts with"
    major, _, minor = version.partition(".")
    if not (major.isdigit() and minor.isdigit()) or (int(major), int(minor)) < (4, 4):
        return f"the trace needs bash 4.4 or newer, and this host's /bin/bash is {version or 'unknown'}"
    return ""


def side_by_side(old: str, new: str, outputs: Sequence[str], old_rendered: bool = False,
                 files: Sequence[Tuple[str, str]] = (), clusters: Tuple[str, str] = ("", "")) -> Tuple[Trace, Trace]:
    """Both scripts traced with the same arguments, program outputs and user's files, each with
    its own header's shape; ``files``: those slurmkit writes beside the new spec (Imported.files);
    ``clusters``: $CC_CLUSTER where each runs ("": unset), so that a branch on it goes as there."""
    why = not_traceable(old)
    if why:
        raise NotVerified(why)
    arguments, given = arguments_of(old), _directives(new)   # the old job gets the new one's name and array (sbatch's line)
    watched = () if old_rendered else _assigned_by(old)   # two of slurmkit's scripts export alike
    before = trace(old, _on_cluster(shape_of(old, arguments, given.get("job-name", "job"), given.get("array", "")), clusters[0]),
                   outputs, rendered=old_rendered, watched=watched)
    return before, trace(new, _on_cluster(shape_of(new, arguments), clusters[1]), outputs, rendered=True, world=before.world,
                         files=files, watched=watched)


#: names a script may assign whose value the trace does not compare: the shell's own, and PATH,
#: which a virtualenv or module of slurmkit's sets differently (the programs found are compared)
_UNWATCHED = frozenset(("PATH", "PWD", "OLDPWD", "SHLVL", "BASH_ENV", "IFS", "HOME", "VIRTUAL_ENV", "PS1"))


def _assigned_by(script: str) -> Tuple[str, ...]:
    """The names the old script assigns: each program start records those in its environment,
    so that one exported in one script and not in the other (``LD_PRELOAD=...`` without export,
    run under set -a) is a difference."""
    return tuple(sorted(name for name in assigned_names(script.splitlines())
                        if name not in _UNWATCHED and not name.startswith(("SLURM_", "_TR_"))))


def _on_cluster(shape: Shape, cc_cluster: str) -> Shape:
    """``shape`` with $CC_CLUSTER as the cluster's shell profile sets it for every job."""
    return shape._replace(variables=tuple(sorted(shape.variables + (("CC_CLUSTER", cc_cluster),)))) if cc_cluster else shape


def verify_import(script: str, imported: Any, profile: Optional[str] = None) -> Verification:
    """The script and the one slurmkit renders of its import (porting.Imported), side by side; of a
    submit wrapper, the job it submits (porting.submitted_script). CRLF line ends read as LF, as
    import reads them (sbatch refuses a script with DOS line breaks, so the one that ran had LF)."""
    from slurmkit.port.porting import submitted_script

    script = submitted_script(script.replace("\r\n", "\n"))
    try:
        new = rendered(imported.spec, profile)
        beside = tuple((f"$SLURM_SUBMIT_DIR/{name}", text) for name, text in imported.files)
        old_trace, new_trace = side_by_side(script, new.script, outputs_of(imported.spec), files=beside,
                                            clusters=(new.cc_cluster, new.cc_cluster))
    except NotVerified as why:
        return Verification(not_run=str(why))
    except OSError as error:
        return Verification(not_run=f"the scripts could not be run here ({error})")
    declared = declared_by_import(imported.notes, imported.spec) + list(new.declared)
    return Verification(tuple(compare(old_trace, new_trace, declared)))


def verify_port(original: Dict[str, Any], ported: Any, source: str) -> Verification:
    """The spec rendered on its old cluster and the ported one (retarget.Ported) on the new, side by side."""
    try:
        old, new = rendered(original, source), rendered(ported.spec, ported.target)
        old_trace, new_trace = side_by_side(old.script, new.script, outputs_of(original, ported.spec), old_rendered=True,
                                            clusters=(old.cc_cluster, new.cc_cluster))
    except NotVerified as why:
        return Verification(not_run=str(why))
    except OSError as error:
        return Verification(not_run=f"the scripts could not be run here ({error})")
    declared = declared_by_port(ported.changes) + list(old.declared + new.declared)
    return Verification(tuple(compare(old_trace, new_trace, declared)) + tuple(unseen_changes(ported.changes, new_trace)))


def verified_import(script: str, imported: Any, profile: Optional[str] = None) -> Tuple[Any, Verification]:
    """The import with a "to do" note for each difference verification found (or for why it did
    not run), and the verification: what ``slurmkit import`` writes unless told --no-verify."""
    from slurmkit.port.porting import Note

    verification = verify_import(script, imported, profile)
    notes = tuple(Note(0, "", "to do", todo) for todo in verification.todos()) + tuple(
        Note(0, "", "note", note) for note in verification.notes())
    return imported._replace(notes=imported.notes + notes), verification


def verified_port(original: Dict[str, Any], ported: Any, source: str) -> Tuple[Any, Verification]:
    """The port with a to-do for each difference verification found: what ``slurmkit port`` writes."""
    verification = verify_port(original, ported, source)
    todos = verification.todos() + _sourced_elsewhere(verification, source, ported.target)
    return ported._replace(todos=ported.todos + todos, notes=ported.notes + verification.notes()), verification


def _sourced_elsewhere(verification: Verification, source: str, target: str) -> Tuple[str, ...]:
    """A file the job sources that neither trace could read (the user's, not the trace's) is no difference
    between the scripts, but on another cluster what it loads or sets may not work (the old
    stack's modules, the old cluster's paths): a to-do the user can act on, not "not traced"."""
    if source == target:
        return ()
    files = [d.subject.split(":")[0].split()[1] for d in verification.untraced if re.match(r"(source|\.) \S", d.subject)]
    files = [f for f in files if f != "activate"]   # conda's (source activate ENV), which the conda to-do names
    return tuple(f"environment.setup: the job sources {file}, whose lines slurmkit neither traced nor ported: check that the "
                 f"modules it loads and the paths it sets work on {target} (they were {source}'s), then remove this line"
                 for file in dict.fromkeys(files))
