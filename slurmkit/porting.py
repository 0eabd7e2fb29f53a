"""Existing sbatch scripts into job specs (``slurmkit import``).

Users of the retired clusters arrive with scripts written by hand. ``import_script`` reads the
``#SBATCH`` directives in every spelling sbatch accepts, the ``module load`` lines, a
virtualenv recipe, staging to ``$SLURM_TMPDIR`` and the launch line, and reports every line it
could not map, so that nothing is silently lost.
"""

import re
import shlex
from typing import Dict, List, NamedTuple, Optional, Tuple

from .sanity import directive_problem
from .spec import NODE_MEMORY
from .units import format_duration
from .variables import typo_note

#: short sbatch options -> long names
SHORT = {"-J": "job-name", "-A": "account", "-t": "time", "-N": "nodes", "-n": "ntasks", "-c": "cpus-per-task",
         "-o": "output", "-e": "error", "-p": "partition", "-a": "array", "-d": "dependency", "-C": "constraint",
         "-G": "gpus", "-q": "qos", "-w": "nodelist", "-x": "exclude"}
#: long options that take no value
FLAGS = {"exclusive", "requeue", "no-requeue", "hold", "overcommit", "contiguous"}
#: options slurmkit sets itself, and why they are dropped
DROPPED = {"output": "slurmkit names the logs (<folder>/<id>_0_log.out)", "error": "slurmkit names the logs",
           "signal": "slurmkit asks for USR1 itself when the spec has stage outputs",
           "export": "jobs get the submitting environment, as sbatch's default",
           "partition": "the Alliance clusters choose the partition from the request; do not name one"}
DERIVED_VARIABLES = {"OMP_NUM_THREADS", "MKL_NUM_THREADS"}
SRUN_VALUE_OPTIONS = {"-N", "-n", "-c", "-p", "-w", "-o", "-e", "-t", "--ntasks", "--nodes", "--cpus-per-task",
                      "--ntasks-per-node", "--mpi", "--gres", "--gpus-per-task", "--cpu-bind", "--distribution", "-m"}
#: GNU Parallel's options that take the next word as their value (those of the Alliance's GNU Parallel page and more).
PARALLEL_VALUE_OPTIONS = {"-j", "--jobs", "-P", "--joblog", "--colsep", "-C", "--delay", "--sshdelay", "--workdir", "--wd",
                          "--env", "--sshloginfile", "--slf", "-S", "--sshlogin", "--results", "--tmpdir", "--halt", "--timeout",
                          "--memfree", "--load", "--retries", "--tagstring", "--block", "--recstart", "--recend", "-a", "--arg-file"}
#: GNU Parallel's options that the many-tasks kind sets itself, or replaces, and why.
PARALLEL_REPLACED = {"--joblog": "a joblog per node in <name>.joblog/, resumed with --resume-failed",
                     "--resume": "resumes with --resume-failed", "--resume-failed": "resumes with --resume-failed",
                     "--sshloginfile": "srun starts one GNU Parallel per node, not SSH", "--slf": "srun starts one GNU Parallel per node, not SSH",
                     "-S": "srun starts one GNU Parallel per node, not SSH", "--sshlogin": "srun starts one GNU Parallel per node, not SSH",
                     "--sshdelay": "no SSH", "--workdir": "tasks start in the spec's folder", "--wd": "tasks start in the spec's folder",
                     "--env": "tasks inherit the job's environment"}
MPIRUN_VALUE_OPTIONS = {"-np", "-n", "-c", "--map-by", "--bind-to", "-map-by", "-bind-to", "-x", "-mca", "--mca",
                        "-hostfile", "--hostfile", "-ppn", "-npernode", "--npernode", "-H", "--host", "-genv"}


class Note(NamedTuple):
    line: int
    text: str
    outcome: str        # mapped | dropped | unmapped
    reason: str = ""


class Imported(NamedTuple):
    spec: Dict
    notes: Tuple[Note, ...]

    @property
    def unmapped(self) -> Tuple[Note, ...]:
        return tuple(n for n in self.notes if n.outcome == "unmapped")


class _Builder:
    def __init__(self):
        self.spec: Dict = {"resources": {}}
        self.notes: List[Note] = []
        self.ntasks: Optional[int] = None
        self.gpus_total: Optional[str] = None
        self.parallel_jobs: Optional[str] = None    # GNU Parallel's --jobs, for the many-tasks shape

    def note(self, line, text, outcome, reason=""):
        self.notes.append(Note(line, text, outcome, reason))

    def section(self, name) -> Dict:
        return self.spec.setdefault(name, {})


def import_script(text: str, name: Optional[str] = None, profile: Optional[str] = None) -> Imported:
    """Read an sbatch script; return the spec (as a mapping for job.yaml) and a note a line."""
    build = _Builder()
    lines = text.splitlines()
    body_started = False
    launch: Optional[Tuple[int, str]] = None
    heredoc_end = None
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if heredoc_end is not None:
            if line == heredoc_end:
                heredoc_end = None
                continue
            _body_line(build, number, line)
            continue
        if not line or (line.startswith("#") and not line.startswith("#SBATCH")):
            continue
        if line.startswith("#SBATCH"):
            if body_started:
                build.note(number, line, "unmapped", "an #SBATCH line after the first command is ignored by sbatch")
            else:
                _directive_line(build, number, line[len("#SBATCH"):])
            continue
        body_started = True
        heredoc = re.search(r"<<-?\s*'?\"?(\w+)", line)
        if heredoc:
            heredoc_end = heredoc.group(1)
            build.note(number, line, "mapped", "per-node setup; slurmkit builds the environment in each job")
            continue
        if _is_launch(line):
            if launch is not None:
                build.note(launch[0], launch[1], "unmapped", "a command before the last one: put it in your program or a wrapper script")
            launch = (number, line)
            continue
        _body_line(build, number, line)
    if launch is not None:
        _launch_line(build, *launch)
    else:
        build.note(0, "", "unmapped", "no command to run was found; set launch.command")
        build.spec["launch"] = {"command": "true"}
    _finish(build, name, profile)
    return Imported(build.spec, tuple(sorted(build.notes, key=lambda n: n.line)))


# ---------------------------------------------------------------------------------- directives

def _directive_line(build: _Builder, number: int, text: str) -> None:
    try:
        tokens = shlex.split(text, comments=True)
    except ValueError as error:
        build.note(number, "#SBATCH" + text, "unmapped", f"cannot read it ({error})")
        return
    index = 0
    while index < len(tokens):
        token = tokens[index]
        option, value = _split_option(token)
        if option is None:
            build.note(number, "#SBATCH" + text, "unmapped", f"{token!r} is not an option")
            return
        if value is None and option not in FLAGS and index + 1 < len(tokens):
            index += 1
            value = tokens[index]
        _directive(build, number, "#SBATCH" + text, option, value)
        index += 1


def _split_option(token: str):
    if token.startswith("--"):
        option, _, value = token[2:].partition("=")
        return option, (value if "=" in token else None)
    if token.startswith("-") and len(token) >= 2 and f"-{token[1]}" in SHORT:
        long = SHORT[f"-{token[1]}"]
        rest = token[2:]
        return long, (rest.lstrip("=") if rest else None)
    return None, None


def _directive(build: _Builder, number: int, line: str, option: str, value: Optional[str]) -> None:
    res = build.spec["resources"]
    simple = {"job-name": ("name", None), "account": ("account", None)}
    if option in simple:
        build.spec[simple[option][0]] = value
    elif option == "time" and value and re.fullmatch(r"\d+:\d+", value):
        minutes, seconds = (int(part) for part in value.split(":"))
        res["time"] = format_duration(minutes * 60 + seconds)  # a spec refuses M:S, which users misread
        build.note(number, line, "mapped", f"SLURM reads {value} as minutes:seconds: time {res['time']}")
        return
    elif option == "time":
        res["time"] = value
    elif option in ("nodes",) and value and value.isdigit():
        res["nodes"] = int(value)
    elif option == "ntasks" and value and value.isdigit():
        build.ntasks = int(value)
    elif option in ("ntasks-per-node", "tasks-per-node") and value and value.isdigit():
        res["tasks_per_node"] = int(value)
    elif option == "cpus-per-task" and value and value.isdigit():
        res["cpus_per_task"] = int(value)
    elif option == "mem" and value:
        res["mem"] = NODE_MEMORY if value == "0" else value   # --mem=0: all of each node's memory
    elif option == "mem-per-cpu" and value:
        res["mem_per_cpu"] = value
    elif option == "tmp" and value:
        res["tmp"] = value
    elif option in ("gres",) and value and value.startswith("gpu"):
        parts = value.split(":")[1:]
        res["gpus"] = ":".join(parts) if parts else "1"
    elif option == "gpus-per-node" and value:
        res["gpus"] = value
    elif option == "gpus" and value:
        build.gpus_total = value
    elif option == "array" and value:
        problem = array_range_problem(value)
        if problem:
            build.note(number, line, "unmapped", problem)
            return
        build.spec["array_range"] = value
    elif option == "mail-user" and value:
        build.section("mail")["user"] = value
    elif option == "mail-type" and value:
        build.section("mail")["events"] = value.split(",")
    elif option == "dependency" and value:
        deps = []
        for part in value.split(","):
            kind, _, jobs = part.partition(":")
            deps.append({"after": kind.replace("after", "") or "start", "jobs": jobs.split(":")})
        build.spec["dependencies"] = deps
    elif option in DROPPED and not (option == "partition" and value == "debug"):
        build.note(number, line, "dropped", DROPPED[option])
        return
    elif re.fullmatch(r"[A-Za-z][A-Za-z0-9-]*", option) and (value is None or re.fullmatch(r"[^\s'\"\\$`]*", value)):
        directive = f"--{option}" + (f"={value}" if value is not None else "")
        problem = directive_problem(directive, {d.partition("=")[0]: 0 for d in build.spec.get("extra_directives", [])})
        if problem:  # a spec would refuse it: say why here, not in a spec that fails to load
            build.note(number, line, "unmapped", problem)
            return
        build.spec.setdefault("extra_directives", []).append(directive)
    else:
        build.note(number, line, "unmapped", f"--{option}={value} has no spec field and cannot pass through")
        return
    build.note(number, line, "mapped")


# ---------------------------------------------------------------------------------------- body

def _body_line(build: _Builder, number: int, line: str) -> None:
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        build.note(number, line, "unmapped", "cannot read it as a command")
        return
    if not words or words[0] in ("set", "shopt") or line.startswith("#!"):
        return
    handlers = (_module_line, _venv_line, _export_line, _stage_line)
    for handler in handlers:
        outcome = handler(build, words)
        if outcome:
            build.note(number, line, *outcome)
            return
    build.note(number, line, "unmapped", "a command slurmkit does not model: put it in your program or a wrapper script")


def _module_line(build, words):
    if words[0] not in ("module", "ml"):
        return None
    rest = [w for w in words[1:] if not w.startswith("-")]
    if words[0] == "module" and rest[:1] in (["load"], ["add"]):
        build.section("environment").setdefault("modules", []).extend(rest[1:])
        return ("mapped",)
    if words[0] == "ml" and rest:
        build.section("environment").setdefault("modules", []).extend(rest)
        return ("mapped",)
    if rest[:1] == ["purge"]:
        return ("dropped", "slurmkit loads the site's standard environment itself")
    return None


def _venv_line(build, words):
    venv = build.section("environment").setdefault("venv", {}) if _is_venv(words) else None
    if venv is None:
        return None
    if words[0] in ("virtualenv", "python", "python3"):
        path = next((w for w in words[1:] if not w.startswith("-") and w not in ("venv",)), "")
        if path and not path.startswith("$SLURM_TMPDIR"):
            venv["path"] = path
        return ("mapped",)
    if words[0] in ("source", "."):
        return ("mapped",)
    requirements = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-r", "--requirement")]
    packages = [w for i, w in enumerate(words[2:], 2) if not w.startswith("-") and words[i - 1] not in ("-r", "--requirement")]
    if requirements:
        venv["requirements"] = requirements[0]
    packages = [p for p in packages if p != "pip"]
    if packages:
        venv.setdefault("packages", []).extend(packages)
    return ("mapped",)


def _is_venv(words) -> bool:
    if words[0] == "virtualenv" or words[:3] in (["python", "-m", "venv"], ["python3", "-m", "venv"]):
        return True
    if words[0] in ("source", ".") and len(words) > 1 and words[1].endswith("/bin/activate"):
        return True
    return words[:2] in (["pip", "install"], ["pip3", "install"])


def _export_line(build, words):
    if words[0] != "export" or len(words) < 2 or "=" not in words[1]:
        return None
    name, _, value = words[1].partition("=")
    typo = typo_note(name)
    if typo:  # it does nothing where it is; setting the right one would change what the job does
        return ("dropped", typo)
    if name in DERIVED_VARIABLES:
        return ("dropped", f"slurmkit sets {name} from cpus_per_task")
    if "$" in value or "`" in value:
        return ("unmapped", f"{name}'s value is computed by the shell; set it in your program or as a literal")
    build.section("environment").setdefault("variables", {})[name] = value
    return ("mapped",)


def _stage_line(build, words):
    """``tar -xf X -C $SLURM_TMPDIR`` / ``cp [-r] X $SLURM_TMPDIR[/..]`` in; ``cp -r $SLURM_TMPDIR/X Y`` out."""
    paths = [w for w in words[1:] if not w.startswith("-")]
    if words[0] == "tar" and "-C" in words and words[words.index("-C") + 1].startswith("$SLURM_TMPDIR"):
        archive = next((w for w in words[1:] if re.search(r"\.(tar|tgz|tar\.\w+)$", w)), None)
        if archive:
            build.section("stage").setdefault("inputs", []).append(archive)
            return ("mapped",)
    if words[0] == "cp" and len(paths) == 2:
        source, target = paths
        if target.startswith("$SLURM_TMPDIR") and not source.startswith("$"):
            to = target[len("$SLURM_TMPDIR"):].strip("/")
            build.section("stage").setdefault("inputs", []).append({"from": source, "to": to} if to else source)
            return ("mapped",)
        if source.startswith("$SLURM_TMPDIR/") and not target.startswith("$"):
            build.section("stage").setdefault("outputs", []).append({"from": source[len("$SLURM_TMPDIR/"):].strip("/"), "to": target})
            return ("mapped",)
    return None


# -------------------------------------------------------------------------------------- launch

def _is_launch(line: str) -> bool:
    first = line.split()[0] if line.split() else ""
    return first in ("srun", "mpirun", "mpiexec", "torchrun", "python", "python3", "horovodrun", "parallel") or first.startswith("./")


def _launch_line(build: _Builder, number: int, line: str) -> None:
    words = shlex.split(line, comments=True)
    if words[0] == "parallel":
        _parallel_line(build, number, line, words)
        return
    launcher = None
    if words[0] in ("srun", "mpirun", "mpiexec"):
        launcher = "srun" if words[0] == "srun" else "mpirun"
        values = SRUN_VALUE_OPTIONS if launcher == "srun" else MPIRUN_VALUE_OPTIONS
        index = 1
        while index < len(words) and words[index].startswith("-"):
            index += 2 if words[index] in values else 1
        words = words[index:]
    command = " ".join(_spec_word(w) for w in words)
    build.spec["launch"] = {"command": command, **({"launcher": launcher} if launcher else {})}
    reason = "launcher flags dropped: slurmkit derives binding and mapping" if launcher == "mpirun" else ""
    if "$(" in line or "`" in line:
        build.note(number, line, "unmapped", "$(...) in the command is literal in a spec; compute it in your program")
    else:
        build.note(number, line, "mapped", reason)


def _parallel_line(build: _Builder, number: int, line: str, words: List[str]) -> None:
    """GNU Parallel as the Alliance's GNU Parallel page runs it: ``parallel [OPTIONS] < FILE`` (a
    command a line) or ``parallel [OPTIONS] COMMAND :::: FILE`` (an argument line each)."""
    options: Dict[str, str] = {}
    index = 1
    while index < len(words) and words[index].startswith("-") and words[index] not in (":::", "::::"):
        option, equals, value = words[index].partition("=")
        if not equals and option in PARALLEL_VALUE_OPTIONS and index + 1 < len(words):
            index, value = index + 1, words[index + 1]
        elif not equals and re.fullmatch(r"-j\d+", option):
            option, value = "-j", option[2:]
        options[option] = value
        index += 1
    rest, file = words[index:], options.get("-a") or options.get("--arg-file")
    command = rest
    for position, word in enumerate(rest):
        if word in (":::", "::::", "<") or word.startswith("<"):
            command, after = rest[:position], rest[position + 1:position + 2]
            file = None if word == ":::" else word[1:] if word not in ("::::", "<") else (after[0] if after else None)
            break
    if not file:
        build.note(number, line, "unmapped", "kind many-tasks reads GNU Parallel's tasks from a file (`:::: FILE`, `< FILE`): "
                   "put them in one, a line each, as tasks.arguments")
        build.spec["launch"] = {"command": "true"}
        return
    # With a command, each line is its argument; without one, each line is a command.
    build.spec["tasks"] = {"arguments" if command else "commands": file}
    colsep = options.get("--colsep", options.get("-C"))
    if colsep is not None and (colsep == "\\t" or not re.search(r"[\\^$.|?*+()\[\]{}]", colsep)):
        build.spec["tasks"]["separator"] = "\t" if colsep == "\\t" else colsep
    elif colsep is not None:   # tasks.separator is literal text, --colsep a regular expression
        build.note(number, line, "unmapped", f"--colsep {colsep!r} is a regular expression; set tasks.separator to the text between columns")
    if command:
        build.spec["launch"] = {"command": " ".join(_spec_word(w) for w in command)}
    build.parallel_jobs = options.get("-j", options.get("--jobs", options.get("-P")))
    replaced = sorted({f"{o} ({PARALLEL_REPLACED[o]})" for o in options if o in PARALLEL_REPLACED})
    build.note(number, line, "mapped", "kind many-tasks" + (f"; dropped: {', '.join(replaced)}" if replaced else ""))


def _many_tasks_shape(build: _Builder) -> None:
    """GNU Parallel's page asks ``--cpus-per-task=32`` and runs ``-j $SLURM_CPUS_PER_TASK``: 32
    tasks of one core. A many-tasks spec says that as tasks_per_node (tasks at a time) x cpus_per_task."""
    res, jobs = build.spec["resources"], build.parallel_jobs
    cpus = res.get("cpus_per_task")
    if "tasks_per_node" in res or not cpus:
        return
    if jobs in (None, "$SLURM_CPUS_PER_TASK", "${SLURM_CPUS_PER_TASK}"):
        res["tasks_per_node"] = res.pop("cpus_per_task")
    elif jobs.isdigit() and int(jobs) and cpus % int(jobs) == 0:
        res["tasks_per_node"], res["cpus_per_task"] = int(jobs), cpus // int(jobs)


def _finish(build: _Builder, name: Optional[str], profile: Optional[str]) -> None:
    spec, res = build.spec, build.spec["resources"]
    nodes = res.get("nodes", 1)
    if build.ntasks and "tasks_per_node" not in res:
        if build.ntasks % nodes == 0:
            res["tasks_per_node"] = build.ntasks // nodes
        else:
            build.note(0, f"--ntasks={build.ntasks}", "unmapped", f"{build.ntasks} tasks do not divide evenly over {nodes} nodes")
    if build.gpus_total and "gpus" not in res:
        model, _, count = build.gpus_total.rpartition(":")
        res["gpus"] = f"{model + ':' if model else ''}{max(1, int(count) // nodes) if count.isdigit() else count}"
    spec.setdefault("name", name or "imported")
    if profile:
        spec["profile"] = profile
    res.setdefault("time", "1h")
    array = spec.pop("array_range", None)
    tasks = res.get("tasks_per_node", 1) * nodes
    if "tasks" in spec:
        spec["kind"] = "many-tasks"
        _many_tasks_shape(build)
    elif array:
        spec["kind"] = "array"
        spec["array"] = _array_section(array)
        spec["launch"]["command"] = spec["launch"]["command"].replace("$SLURM_ARRAY_TASK_ID", "$task_id").replace("${SLURM_ARRAY_TASK_ID}", "$task_id")
    elif tasks > 1:
        spec["kind"] = "mpi"
        spec["launch"].setdefault("launcher", "srun")
    elif "gpus" in res:
        spec["kind"] = "gpu"
    elif res.get("cpus_per_task", 1) > 1:
        spec["kind"] = "threaded"
    else:
        spec["kind"] = "serial"
    if spec["kind"] in ("serial", "threaded", "gpu") and spec["launch"].get("launcher") == "mpirun":
        spec["launch"].pop("launcher")
    order = ["name", "profile", "account", "kind", "resources", "environment", "stage", "tasks", "launch", "array",
             "dependencies", "mail", "extra_directives"]
    build.spec = {key: spec[key] for key in order if key in spec}


_ARRAY_RANGE = re.compile(r"(\d+)(?:-(\d+)(?::(\d+))?)?")


def array_range_problem(text: str) -> Optional[str]:
    """Why an ``--array`` value cannot become a sweep (checked before any id is made): not
    SLURM's FIRST[-LAST[:STEP]],...[%THROTTLE], a range backwards or with step 0, or more task
    ids than limits.DEFAULT_MAX_ARRAY_TASKS."""
    from .limits import DEFAULT_MAX_ARRAY_TASKS

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
            return f"--array={text}: {part!r} runs backwards or has step 0; write it FIRST-LAST (e.g. {last}-{first}) with a step of 1 or more"
        count += (last - first) // step + 1
    if count > DEFAULT_MAX_ARRAY_TASKS:
        return f"--array={text}: {count} tasks, more than slurmkit's cap of {DEFAULT_MAX_ARRAY_TASKS} for one array; split the sweep"
    return None


def _array_section(text: str) -> Dict:
    """``--array=1-100%10`` -> the task ids as one parameter, ``task_id``, and the throttle
    (``text`` has passed array_range_problem)."""
    ranges, _, throttle = text.partition("%")
    ids: List[int] = []
    for part in ranges.split(","):
        first, last, step = _ARRAY_RANGE.fullmatch(part).groups()
        ids += list(range(int(first), int(last or first) + 1, int(step or 1)))
    section: Dict = {"parameters": {"task_id": [str(i) for i in ids]}}
    if throttle:
        section["throttle"] = int(throttle)
    return section


def _spec_word(word: str) -> str:
    """A word of the script as a word of a spec command: variables still expand, nothing else does."""
    if "$" not in word:
        return shlex.quote(word)
    escaped = re.sub(r"\$(?!\{?[A-Za-z_][A-Za-z0-9_]*)", "$$", word)
    return '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"' if re.search(r"[\s'\"]", word) else escaped
