"""What the user asked for: the job spec, from ``job.yaml`` or from Python.

This module only reads and checks the *shape* of a request (known keys, types, units, safe
names). Whether the request fits a cluster is the resolver's business (resolve.py).

A spec looks like::

    name: resnet50
    profile: nibi
    account: def-someprof
    kind: mpi
    resources: {nodes: 2, tasks_per_node: 4, cpus_per_task: 8, mem: 64G, time: 3h}
    environment:
      modules: [python/3.11, openmpi]
      venv: {requirements: requirements.txt}
    launch: {command: python train.py --epochs 10}
"""

from __future__ import annotations

import re
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Dict, List, Mapping, NoReturn, Optional, Sequence, Tuple, TypeVar

from slurmkit.core import sanity
from slurmkit.core.errors import SpecError, SpecErrors, UnitError, closest
from slurmkit.core.kinds import DEFAULT_KIND, DISTRIBUTED_KINDS, KIND_NAMES, first_kind
from slurmkit.core.kinds import KINDS as KIND_ROWS
from slurmkit.core.launchers import LAUNCHERS, MIXED_PRECISIONS
from slurmkit.core.logpatterns import pattern_problem
from slurmkit.core.records import Record
from slurmkit.core.sbatch_options import DEPENDENCY_TYPES
from slurmkit.core.shellwords import split_at_operators
from slurmkit.core.units import parse_duration, parse_size, shown
from slurmkit.core.yamlfile import KeyPath, format_keypath, line_of, read_yaml_file

#: the kinds' names (kinds.py holds what each one is), and the distributed ones.
KINDS, DISTRIBUTED_KINDS = KIND_NAMES, DISTRIBUTED_KINDS
FRAMEWORKS = ("pytorch", "tensorflow")
#: what each process of a one-process-per-GPU kind sees: its own GPU, or every GPU of its node.
GPU_VIEWS = ("own", "node")
#: what environment.builds can build once per toolchain and cache as a wheel.
BUILDS = ("horovod", "mpi4py")
BUILD_RE = re.compile(rf"^({'|'.join(BUILDS)})(==[0-9][0-9A-Za-z.+]*)?$")
#: ``{nccl: PATH}`` in builds: NVIDIA's tarball, named as NVIDIA names it (the version comes from
#: the name), or with ``version`` given; the keys such an item may have.
NCCL_KEYS = ("nccl", "version")
NCCL_TARBALL_RE = re.compile(r"nccl_([0-9]+\.[0-9]+\.[0-9]+-[0-9]+\+cuda[0-9]+(?:\.[0-9]+)*)_[a-z0-9_]+\.(?:txz|tar\.xz|tgz|tar\.gz)")
NCCL_VERSION_RE = re.compile(r"^(?!.*\.(?:partial|lock)$)[0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.+-]{0,60}$")   # not the cache's own names
#: ``mem: node``: all the memory of each node (``--mem=0``).
NODE_MEMORY = "node"
MAIL_EVENTS = ("BEGIN", "END", "FAIL", "REQUEUE", "ALL", "TIME_LIMIT", "TIME_LIMIT_80", "ARRAY_TASKS")

# Values that end up inside #SBATCH lines or module commands, where shell quoting cannot help:
# they are restricted to characters that mean nothing to sbatch's or Lmod's parsers.
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")
MODULE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+/-]{0,127}$")
IDENTIFIER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Array parameters become shell variables of the job: not SLURM's, not the template's (_sk_*).
PARAMETER_RE = re.compile(r"^(?!SLURM_)[A-Za-z][A-Za-z0-9_]*$")
RESERVED_VARIABLES = frozenset({"PATH", "HOME", "USER", "SHELL", "PWD", "IFS", "LD_LIBRARY_PATH", "PYTHONPATH",
                                "MODULEPATH", "BASH_ENV", "CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS"})
_PACKAGE_RE = re.compile(r"^[^-\s].*$", re.S)
MAIL_RE = re.compile(r"^[^\s@'\"\\$`]+@[^\s@'\"\\$`]+$")


class GpuRequest(Record):
    """GPUs per node, as the user named them (``model`` is resolved against the profile)."""

    model: Optional[str]
    count: int  # type: ignore[assignment]  # a field, as at run time: mypy takes it for an override of tuple.count


class Resources(Record):
    nodes: int = 1
    tasks_per_node: Optional[int] = None   # None: not said (the resolver may fill whole nodes)
    cpus_per_task: Optional[int] = None
    time_s: int = 0
    mem_mb: Optional[int] = None           # per node (--mem); 0 (mem: node): all of each node's (--mem=0)
    mem_per_cpu_mb: Optional[int] = None   # per CPU (--mem-per-cpu)
    gpus: Optional[GpuRequest] = None
    tmp_mb: Optional[int] = None           # node-local disk (--tmp)


class Venv(Record):
    """A Python virtualenv: built in ``$SLURM_TMPDIR`` per job unless ``path`` names a lasting one."""

    path: Optional[str] = None
    requirements: Optional[str] = None
    packages: Tuple[str, ...] = ()


class Build(Record):
    """A Python package with compiled parts built against the loaded modules (``horovod``, ``mpi4py``)."""

    name: str
    version: Optional[str] = None      # "0.28.1": pinned; None: the newest the index has

    @property
    def requirement(self) -> str:
        """What pip is asked for: ``horovod`` or ``horovod==0.28.1``."""
        return self.name + (f"=={self.version}" if self.version else "")


class NcclTarball(Record):
    """NVIDIA's NCCL as downloaded from developer.nvidia.com (``nccl_2.21.5-1+cuda12.4_x86_64.txz``),
    for a Horovod build to compile against instead of the site's ``nccl`` module (the seed
    course's recipe: unpack, ``setrpaths.sh --path DIR --add_origin``, ``HOROVOD_NCCL_HOME=DIR``)."""

    path: str          # as written: ~ and $NAME expand in the job, a relative path is the spec folder's
    version: str       # "2.21.5-1+cuda12.4": from the file's name, or the item's `version`


class Environment(Record):
    modules: Tuple[str, ...] = ()
    venv: Optional[Venv] = None
    variables: Tuple[Tuple[str, str], ...] = ()
    builds: Tuple[Build, ...] = ()
    nccl: Optional[NcclTarball] = None   # written as a builds item: {nccl: PATH}
    build_cache: Optional[str] = None  # where built wheels are kept (a shell word); None: the site's default
    setup: Tuple[str, ...] = ()        # shell lines run as written before the payload (kept by `import`)
    # as a plain bash script runs them (false), or under slurmkit's own rules (true, the default):
    errexit: bool = True               # a setup line that fails stops the job (set -e)
    # an unset variable stops the job (set -u): true, in setup and the launch line (as a script with
    # set -u ran them); None (the default), in the launch line only; false, nowhere
    nounset: Optional[bool] = None
    allexport: bool = True             # what setup assigns is exported (set -a); false: what it exports
    login_shell: bool = False          # the script runs as a login shell (#!/bin/bash -l): the profiles first


class Launch(Record):
    """``command`` is an argv; ``$NAME``/``${NAME}`` in it expand at run time, ``$$`` is a ``$``.

    A ``shell`` line (redirections, pipes, ``&&``) is run by bash under the launcher: ``command``
    is then ``("bash", "-c", LINE)`` with every ``$`` doubled, so that the line reaches bash as written."""

    command: Tuple[str, ...]
    launcher: Optional[str] = None
    framework: Optional[str] = None     # pytorch | tensorflow, for the distributed kinds
    batch_size: Optional[int] = None    # per process; lets the resolver warn about jobs too small for their GPUs
    gpu_view: Optional[str] = None      # own | node; None: the kind's default (resolve._gpu_rank)
    mixed_precision: Optional[str] = None   # no | fp16 | bf16, for kind accelerate (framework_kinds.py)
    text: str = ""                      # the command as written, when one line (its quotes: reads.py)
    shell: Optional[str] = None         # the bash line as the user wrote it, when given as launch.shell


class ArraySpec(Record):
    """A sweep: the grid of ``parameters`` (task i gets the i-th point), run ``throttle`` at a time."""

    parameters: Tuple[Tuple[str, Tuple[str, ...]], ...]
    throttle: Optional[int] = None
    indices: Optional[str] = None      # SLURM's task ids as written (1-9:2): point i goes to the i-th; None: 0..n-1


class Tasks(Record):
    """Many small tasks that GNU Parallel runs inside the job's nodes (kind ``many-tasks``):
    each non-blank line of ``file`` is one task, a shell command of its own (``commands``) or
    the arguments of launch.command, which GNU Parallel puts where ``{}`` is (``arguments``)."""

    file: str                          # relative to the spec's folder, or absolute
    lines: str                         # "commands" | "arguments"
    separator: Optional[str] = None    # arguments: split each line into {1} {2} ... (GNU Parallel's --colsep)
    joblog: Optional[str] = None       # the joblog folder; None: <name>.joblog beside the spec


class Dependency(Record):
    type: str
    job_ids: Tuple[str, ...]


class Mail(Record):
    """``user`` None: SLURM mails the address registered with the account (the Alliance's CCDB one)."""

    user: Optional[str]
    events: Tuple[str, ...] = ("END", "FAIL")


class StageInput(Record):
    """A file, folder or archive (``.tar``, ``.tar.gz``, ``.tar.zst``, ...; a pack manifest) to
    bring into ``$SLURM_TMPDIR/<to>`` before the payload; ``source`` is relative to the spec's folder."""

    source: str
    to: str = ""


class StageOutput(Record):
    """``$SLURM_TMPDIR/<source>`` copied back to ``<to>`` (relative to the spec's folder) on every exit."""

    source: str
    to: str


class Checkpoint(Record):
    """A folder in ``$SLURM_TMPDIR`` synced back every ``every_s`` seconds and at the end."""

    source: str
    to: str
    every_s: int = 1800


class Stage(Record):
    inputs: Tuple[StageInput, ...] = ()
    outputs: Tuple[StageOutput, ...] = ()
    checkpoint: Optional[Checkpoint] = None
    lead_s: Optional[int] = None          # how long before the time limit to stop and copy back


class Resubmit(Record):
    """Run as a chain of jobs (afterany) that resume from the checkpoint: at most ``max_links``."""

    max_links: int = 10


class Monitor(Record):
    """What the job measures about itself: ``gpu`` None means the default (on where it has GPUs)."""

    gpu: Optional[bool] = None


class Logs(Record):
    """Where sbatch writes the job's output and error (``--output``/``--error``), as sbatch
    patterns (logpatterns.py); ``error`` None: stderr joins the output, as sbatch does."""

    output: str
    error: Optional[str] = None


class JobSpec(Record):
    name: str
    launch: Launch
    resources: Resources
    kind: str = DEFAULT_KIND
    profile: Optional[str] = None
    account: Optional[str] = None
    environment: Environment = Environment()
    array: Optional[ArraySpec] = None
    tasks: Optional[Tasks] = None
    dependencies: Tuple[Dependency, ...] = ()
    mail: Optional[Mail] = None
    extra_directives: Tuple[str, ...] = ()
    stage: Optional[Stage] = None
    resubmit: Optional[Resubmit] = None
    monitor: Monitor = Monitor()
    logs: Optional[Logs] = None
    source: Optional[str] = None
    lines: Mapping[KeyPath, int] = MappingProxyType({})

    def line_of(self, dotted: str) -> Optional[int]:
        """The line in the spec file of a field such as ``resources.gpus`` (or its section)."""
        path = tuple(int(part) if part.isdigit() else part for part in dotted.split("."))
        return line_of(dict(self.lines), path) if dotted else None   # line_of's hint asks a dict; it only reads


# ------------------------------------------------------------------------------------ reading


_T = TypeVar("_T")


class _Stopped(Exception):
    """A part of the spec that cannot be read further, its errors already noted."""


class _Reader:
    """Walks a mapping with its key path, so that every error names file, line and key.

    ``fail`` stops the part being read; ``part`` reads one part and notes its error, so that
    independent fields are all checked and a spec's every error is reported in one run."""

    def __init__(self, source: Optional[str], lines: Dict[KeyPath, int]):
        self.source = source
        self.lines = lines
        # A number or boolean read as text keeps the spelling the YAML file gave it (yamlfile.KeyLines):
        # an array value 0.00001 reaches the job as 0.00001, not as Python's 1e-05.
        self.spellings: Dict[KeyPath, str] = getattr(lines, "spellings", {})
        self.errors: List[SpecError] = []
        self.meant: set = set()   # the key paths that an unknown key's did-you-mean names

    def error(self, path: KeyPath, message: str) -> SpecError:
        return SpecError(self.source, line_of(self.lines, path), format_keypath(path), message)

    def fail(self, path: KeyPath, message: str) -> NoReturn:
        raise self.error(path, message)

    def note(self, path: KeyPath, message: str) -> None:
        """An error that leaves the rest of its part readable (an unknown key is ignored)."""
        self.errors.append(self.error(path, message))

    def part(self, reader: Callable[..., _T], *args: Any) -> _T:
        """``reader(*args)``, its error noted; None where it failed (the spec is then refused)."""
        try:
            return reader(*args)
        except SpecError as error:
            self.errors.append(error)
        except _Stopped:
            pass
        return None  # type: ignore[return-value]  # never seen: finish() raises once an error is noted

    def finish(self) -> None:
        """Raise every error noted, in file order: the one, or SpecErrors for several."""
        if self.errors:
            errors = sorted(self.errors, key=_file_order)
            raise errors[0] if len(errors) == 1 else SpecErrors(errors)

    def mapping(self, value, path: KeyPath, allowed: Sequence[str], required: Sequence[str] = ()) -> Mapping:
        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            self.fail(path, f"expected a mapping with keys {', '.join(allowed)}, got {_describe(value)}")
        for key in value:
            if key not in allowed:
                close = closest(key, allowed)
                hint = f"did you mean '{close}'? " if close else ""
                self.meant.add(path + (close,))
                self.note(path + (key,), f"unknown key; {hint}allowed: {', '.join(allowed)}")
        missing = [key for key in required if value.get(key) is None]
        for key in missing:
            if path + (key,) not in self.meant:   # a misspelt key's did-you-mean already says it
                self.note(path + (key,), "is required")
        if missing:
            raise _Stopped
        return value

    def require(self, value: _T, path: KeyPath) -> _T:
        """``value``, which must be given (a misspelt key's did-you-mean already says so)."""
        if value is None:
            if path in self.meant:
                raise _Stopped
            self.fail(path, "is required")
        return value

    def named(self, value, path: KeyPath, what: str) -> Mapping:
        """A mapping whose keys the user chooses (variable or parameter names); None is empty."""
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.fail(path, f"expected a mapping of {what}, got {_describe(value)}")
        return value

    def integer(self, value, path: KeyPath, minimum: int = 1, maximum: int = sanity.MAX_COUNT) -> int:
        self.plain_number(value, path, "count")
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
            self.fail(path, f"expected a whole number from {minimum} to {maximum:,}, got {_describe(value)}")
        return value

    def plain_number(self, value, path: KeyPath, what: str) -> None:
        """Refuse a number that YAML 1.1 read otherwise than sbatch would (``010`` is 8 to it)."""
        problem = sanity.number_spelling_problem(self.spellings[path], value, what) if path in self.spellings else None
        if problem:
            self.fail(path, problem)

    def text(self, value, path: KeyPath, pattern=None, what: str = "") -> str:
        if not isinstance(value, str) and path in self.spellings:
            value = self.spellings[path]
        elif isinstance(value, bool) or not isinstance(value, (str, int, float)):
            self.fail(path, f"expected text, got {_describe(value)}")
        if isinstance(value, int) and value.bit_length() > 100:  # str() fails past 4,300 digits
            self.fail(path, f"expected text, got int, {shown(value)}")
        value = str(value)
        self.no_nul(value, path)
        if pattern is not None and not pattern.fullmatch(value):  # fullmatch: "$" would let a trailing newline in
            self.fail(path, f"{value!r} is not allowed here: {what}")
        return value

    def no_nul(self, value: str, path: KeyPath) -> None:
        """Every string of a spec reaches bash, which cannot hold a NUL character in a word: it
        would drop it, and the job would see another value than the spec says."""
        if "\x00" in value:
            self.fail(path, f"holds a NUL character (\\0) at position {value.index(chr(0)) + 1}, which bash cannot carry "
                            f"(it would drop it and the job would see another value); remove it")

    def choice(self, value, path: KeyPath, choices: Sequence[str]) -> str:
        value = self.text(value, path)
        if value not in choices:
            close = closest(value, choices)
            hint = f"did you mean '{close}'? " if close else ""
            self.fail(path, f"{value!r} is not one of them; {hint}allowed: {', '.join(choices)}")
        return value

    def text_list(self, value, path: KeyPath, pattern=None, what: str = "") -> Tuple[str, ...]:
        if path in self.spellings:  # one number or boolean, as the YAML file spelled it
            return (self.text(value, path, pattern, what),)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, (list, tuple)):
            self.fail(path, f"expected a list, got {_describe(value)}")
        return tuple(self.text(item, path + (i,), pattern, what) for i, item in enumerate(value))

    def unit(self, parse, value, path: KeyPath) -> int:
        self.plain_number(value, path, "time" if parse is parse_duration else "size")
        try:
            return parse(value)
        except UnitError as error:
            self.fail(path, error.message)

    def duration(self, value, path: KeyPath, minimum_s: int = 0) -> int:
        """A duration in seconds; ``M:S`` (what SLURM makes of ``25:00``) is refused with the
        spelling that means hours, and anything under ``minimum_s``."""
        problem = sanity.minutes_seconds_problem(value)
        if problem:
            self.fail(path, problem)
        seconds = self.unit(parse_duration, value, path)
        if seconds < minimum_s:
            self.fail(path, f"at least {minimum_s // 60} minute{'s' if minimum_s > 60 else ''}, got {_describe(value)}; "
                            f"a shorter interval copies without pause")
        return seconds


def _file_order(error: SpecError) -> Tuple[int, int]:
    """Errors by line, then (for a spec without lines, from Python) by the order of SPEC_KEYS."""
    top = error.keypath.split(".")[0].split("[")[0]
    return error.line or 0, SPEC_KEYS.index(top) if top in SPEC_KEYS else len(SPEC_KEYS)


def _describe(value) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 100:
        return f"int, {shown(value)}"  # repr would fail past 4,300 digits
    if value is None:
        return "nothing"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"{type(value).__name__} {value!r}"


SPEC_KEYS = ("name", "profile", "account", "kind", "resources", "environment", "launch", "array", "tasks", "stage",
             "resubmit", "dependencies", "mail", "extra_directives", "monitor", "logs")
RESOURCE_KEYS = ("nodes", "tasks_per_node", "cpus_per_task", "mem", "mem_per_cpu", "gpus", "time", "tmp")
#: The keys of every mapping in a spec, by its key path ("*": any item of a list): the reader
#: allows these and nothing else, and slurmkit/spec/schemas.py makes job.yaml's JSON Schema from them.
SECTION_KEYS = {
    "": SPEC_KEYS,
    "resources": RESOURCE_KEYS,
    "resources.gpus": ("model", "count"),
    "environment": ("modules", "venv", "variables", "builds", "build_cache", "setup", "errexit", "nounset", "allexport", "login_shell"),
    "environment.venv": ("path", "requirements", "packages"),
    "launch": ("command", "shell", "launcher", "framework", "batch_size", "gpu_view", "mixed_precision"),
    "array": ("parameters", "throttle", "indices"),
    "tasks": ("commands", "arguments", "separator", "joblog"),
    "dependencies.*": ("after", "jobs"),
    "mail": ("user", "events"),
    "stage": ("inputs", "outputs", "checkpoint", "lead"),
    "stage.inputs.*": ("from", "to"),
    "stage.outputs.*": ("from", "to"),
    "stage.checkpoint": ("from", "to", "every"),
    "resubmit": ("max_links",),
    "monitor": ("gpu",),
    "logs": ("output", "error"),
}


def spec_from_mapping(data: Any, source: Optional[str] = None, lines: Optional[Dict[KeyPath, int]] = None) -> JobSpec:
    """Check ``data`` (as loaded from YAML) and build the JobSpec; raise SpecError for its one
    problem, SpecErrors for several (each independent field is checked)."""
    read = _Reader(source, {} if lines is None else lines)
    spec = read.part(_read_spec, read, data, source, lines)
    read.finish()
    return spec


def _read_spec(read: _Reader, data: Any, source: Optional[str], lines: Optional[Dict[KeyPath, int]]) -> JobSpec:
    top = read.mapping(data, (), SPEC_KEYS)
    kind = read.part(read.choice, top.get("kind", DEFAULT_KIND), ("kind",), KINDS)
    array = read.part(_read_array, read, top.get("array"))
    tasks = read.part(_kind_parts, read, top, kind, array) if kind else None
    commands_file = tasks is not None and tasks.lines == "commands"
    return JobSpec(
        name=read.part(_read_name, read, top.get("name")),
        profile=None if top.get("profile") is None else read.part(read.text, top["profile"], ("profile",), NAME_RE,
                                                                  "a profile name"),
        account=None if top.get("account") is None else read.part(read.text, top["account"], ("account",), NAME_RE,
                                                                  "an account name such as def-someprof"),
        kind=kind,
        resources=read.part(_read_resources, read, top.get("resources")),
        environment=read.part(_read_environment, read, top.get("environment")),
        launch=Launch(command=()) if commands_file or top.get("launch") is None else read.part(_read_launch, read, top["launch"]),
        array=array,
        tasks=tasks,
        dependencies=read.part(_read_dependencies, read, top.get("dependencies")),
        mail=read.part(_read_mail, read, top.get("mail")),
        extra_directives=read.part(_read_extra, read, top.get("extra_directives")),
        stage=read.part(_read_stage, read, top.get("stage")),
        resubmit=read.part(_read_resubmit, read, top.get("resubmit")),
        monitor=read.part(_read_monitor, read, top.get("monitor")),
        logs=read.part(_read_logs, read, top.get("logs")),
        source=source,
        lines=dict(lines or {}),
    )


def _kind_parts(read: _Reader, top: Mapping, kind: str, array: Optional[ArraySpec]) -> Optional[Tasks]:
    """What the kind asks of the other sections (an array to sweep, a task file, a launch
    line), and the tasks section: checked only once the kind itself is known."""
    sweeps = KIND_ROWS[kind].sweeps
    sweeper = first_kind(sweeps=True).name
    if sweeps and array is None and top.get("array") is None:
        read.note(("array",), f"kind {sweeper!r} needs an array section with the parameters to sweep")
    if top.get("array") is not None and not sweeps:
        read.note(("array",), f"only kind {sweeper!r} sweeps parameters; set kind: {sweeper} (it is {kind!r})")
    tasks = _read_tasks(read, top.get("tasks"), kind)
    commands_file = tasks is not None and tasks.lines == "commands"
    if not commands_file:
        read.require(top.get("launch"), ("launch",))
    if top.get("launch") is not None and commands_file:
        read.fail(("launch",), "each line of tasks.commands is a command of its own: leave launch out, or give the lines "
                  "as tasks.arguments of launch.command")
    return tasks


def load_spec(path) -> JobSpec:
    """Read a job spec file; every error names the file, line and key."""
    _, (data, lines, _) = read_yaml_file(Path(path), SpecError)
    return spec_from_mapping(data, str(path), lines)


def _read_name(read: _Reader, value) -> str:
    return read.text(read.require(value, ("name",)), ("name",), NAME_RE, "use letters, digits, '.', '_', '+' and '-'")


def _read_resources(read: _Reader, value) -> Resources:
    """Each field on its own: a wrong size does not hide a wrong time."""
    res = read.mapping(read.require(value, ("resources",)), ("resources",), RESOURCE_KEYS)
    at = lambda key: ("resources", key)  # noqa: E731 - a key path, nothing more
    if res.get("mem") is not None and res.get("mem_per_cpu") is not None:
        read.note(at("mem_per_cpu"), "give either mem (per node) or mem_per_cpu, not both")
    count = lambda key: None if res.get(key) is None else read.part(read.integer, res[key], at(key))  # noqa: E731
    return Resources(
        nodes=read.part(read.integer, res.get("nodes", 1), at("nodes")),
        tasks_per_node=count("tasks_per_node"),
        cpus_per_task=count("cpus_per_task"),
        time_s=read.part(_read_time, read, res.get("time")),
        mem_mb=None if res.get("mem") is None else read.part(_read_memory, read, res["mem"], at("mem")),
        mem_per_cpu_mb=None if res.get("mem_per_cpu") is None else read.part(_read_memory_per_cpu, read, res["mem_per_cpu"],
                                                                              at("mem_per_cpu")),
        gpus=read.part(_read_gpus, read, res.get("gpus")),
        tmp_mb=None if res.get("tmp") is None else read.part(read.unit, parse_size, res["tmp"], at("tmp")),
    )


def _read_time(read: _Reader, value) -> int:
    path = ("resources", "time")
    time_s = read.duration(read.require(value, path), path)
    if time_s <= 0:
        read.fail(path, "must be longer than zero")
    return time_s


def _read_memory(read: _Reader, value, path: KeyPath) -> int:
    """A size in MiB, or ``node`` (0): all the memory of each node, as sbatch's ``--mem=0`` means
    (Advanced MPI scheduling: a whole-node job asks ``--ntasks-per-node=<cores> --mem=0``)."""
    if isinstance(value, str) and value.strip().lower() == NODE_MEMORY:
        return 0
    read.plain_number(value, path, "size")
    try:
        mib = parse_size(value)
    except UnitError as error:
        if not isinstance(value, str):   # a number: negative
            read.fail(path, error.message)
        close = closest(value.strip().lower(), [NODE_MEMORY], cutoff=0.7)
        hint = f"did you mean '{close}'? " if close else ""
        read.fail(path, error.message.replace("is not a size: ", "is not a size: " + hint, 1)
                  + f"; or '{NODE_MEMORY}' for all the memory of each node (--mem=0)")
    if mib == 0:  # sbatch's --mem=0, all of each node's memory: said by its name, never by a number that looks like none
        read.fail(path, f"{shown(value)} is no memory at all to a reader, and all of each node's memory "
                        f"to sbatch: write `mem: {NODE_MEMORY}` for all of each node's memory")
    return mib


def _read_memory_per_cpu(read: _Reader, value, path: KeyPath) -> int:
    """A size in MiB, at least 1: ``--mem-per-cpu=0`` is no request sbatch documents."""
    mib = read.unit(parse_size, value, path)
    if mib == 0:
        read.fail(path, f"{shown(value)} is no memory: ask at least 1M a CPU, or give "
                        f"`mem: {NODE_MEMORY}` (not mem_per_cpu) for all of each node's memory")
    return mib


def _read_gpus(read: _Reader, value) -> Optional[GpuRequest]:
    """``gpus: 2``, ``gpus: h100:2``, ``gpus: h100`` or ``gpus: {model: h100, count: 2}``."""
    path = ("resources", "gpus")
    if value is None:
        return None
    if isinstance(value, Mapping):
        gpus = read.mapping(value, path, SECTION_KEYS["resources.gpus"])
        model = None if gpus.get("model") is None else read.text(gpus["model"], path + ("model",), NAME_RE, "a GPU model such as h100")
        return GpuRequest(model, read.integer(gpus.get("count", 1), path + ("count",)))
    if isinstance(value, int) and not isinstance(value, bool):
        return GpuRequest(None, read.integer(value, path))
    if not isinstance(value, str):
        read.fail(path, f"expected a count, MODEL:COUNT or a mapping, got {_describe(value)}")
    text = value
    if len(text) > 64:  # int() of thousands of digits is refused by Python itself
        read.fail(path, f"{len(text):,} characters is not a GPU request: give a count, MODEL:COUNT (e.g. h100:2) or a mapping")
    if text.isascii() and text.isdigit():  # "2", as sbatch's --gres=gpu:2 means: any model
        return GpuRequest(None, read.integer(int(text), path))
    model, colon, count = text.partition(":")
    if colon and not (count.isascii() and count.isdigit()):  # isdigit alone takes '²', which int() refuses
        read.fail(path, f"{text!r} is not MODEL:COUNT (e.g. h100:2)")
    read.text(model, path, NAME_RE, "a GPU model such as h100, optionally with :COUNT")
    return GpuRequest(model, read.integer(int(count) if count else 1, path))


def _read_environment(read: _Reader, value) -> Environment:
    env = read.mapping(value, ("environment",), SECTION_KEYS["environment"])
    variables = read.named(env.get("variables"), ("environment", "variables"), "variable names to values")
    for name in variables:
        read.text(name, ("environment", "variables", name), IDENTIFIER_RE, "a variable name is letters, digits and '_'")
    return Environment(
        modules=read.text_list(env.get("modules") or [], ("environment", "modules"), MODULE_RE, "a module name such as python/3.11"),
        venv=_read_venv(read, env.get("venv")),
        variables=tuple((str(name), read.text(v, ("environment", "variables", name))) for name, v in sorted(variables.items())),
        builds=_read_builds(read, env.get("builds")),
        nccl=_read_nccl(read, env.get("builds")),
        build_cache=None if env.get("build_cache") is None else read.text(env["build_cache"], ("environment", "build_cache")),
        setup=_read_setup(read, env.get("setup")),
        errexit=_read_switch(read, env.get("errexit"), ("environment", "errexit")),
        nounset=None if env.get("nounset") is None else _read_switch(read, env.get("nounset"), ("environment", "nounset")),
        allexport=_read_switch(read, env.get("allexport"), ("environment", "allexport")),
        login_shell=_read_switch(read, env.get("login_shell"), ("environment", "login_shell"), default=False),
    )



def _read_switch(read: _Reader, value, path: KeyPath, default: bool = True) -> bool:
    """A true/false setting: ``default`` unless the spec says otherwise."""
    if value is not None and not isinstance(value, bool):
        read.fail(path, f"must be true or false, not {value!r}")
    return default if value is None else value


def _read_setup(read: _Reader, value) -> Tuple[str, ...]:
    """Shell lines, each at most as long as a launch command (sanity.MAX_COMMAND_CHARS)."""
    path = ("environment", "setup")
    for index, line in enumerate(value if isinstance(value, list) else [value] if value else []):
        too_long = sanity.command_length_problem(len(line)) if isinstance(line, str) else None
        if too_long:
            read.fail(path + (index,) if isinstance(value, list) else path, too_long)
    return read.text_list(value or [], path, _SETUP_RE, "a shell line (no NUL byte)")


_SETUP_RE = re.compile(r"^[^\x00]*\S[^\x00]*$")


def _listed(value) -> list:
    return value if isinstance(value, list) else [] if value is None else [value]


def _read_nccl(read: _Reader, value) -> Optional[NcclTarball]:
    """``builds: [horovod, {nccl: ~/nccl_2.21.5-1+cuda12.4_x86_64.txz}]``: at most one, with its version."""
    items = [(i, item) for i, item in enumerate(_listed(value)) if isinstance(item, Mapping)]
    path = ("environment", "builds")
    if len(items) > 1:
        read.fail(path + (items[1][0],), "names a second NCCL; a job builds against one")
    if not items:
        return None
    index, item = items[0]
    here = path + ((index,) if isinstance(value, list) else ())
    item = read.mapping(item, here, NCCL_KEYS, required=("nccl",))
    tarball = read.text(item["nccl"], here + ("nccl",))
    if not tarball.strip():
        read.fail(here + ("nccl",), "is empty: give the path of NVIDIA's NCCL tarball")
    if re.search(r"[\x00-\x1f\x7f]", tarball):
        read.fail(here + ("nccl",), f"{tarball!r} has a control character (a newline?): give the tarball's path on one line")
    if tarball.rstrip().endswith("/") or tarball.rsplit("/", 1)[-1] in (".", ".."):
        read.fail(here + ("nccl",), f"{tarball!r} names a folder: give the path of NVIDIA's NCCL tarball itself "
                  "(nccl_2.21.5-1+cuda12.4_x86_64.txz), which slurmkit unpacks once into the build cache")
    named = NCCL_TARBALL_RE.fullmatch(tarball.rsplit("/", 1)[-1])
    if item.get("version") is not None:
        version = read.text(item["version"], here + ("version",), NCCL_VERSION_RE, "an NCCL version such as 2.21.5-1+cuda12.4")
        if named and named.group(1) != version:
            read.fail(here + ("version",), f"{version!r} is not the version the tarball's name says ({named.group(1)}); "
                      "leave version out, or give the tarball that holds it")
    elif named:
        version = named.group(1)
    else:
        read.fail(here + ("nccl",), f"{tarball.rsplit('/', 1)[-1]!r} is not named as NVIDIA names NCCL's tarballs "
                  "(nccl_2.21.5-1+cuda12.4_x86_64.txz), so its version is unknown: add version: 2.21.5-1+cuda12.4 "
                  "(the version it unpacks, part of the build's cache key)")
    return NcclTarball(tarball, version)


def _read_builds(read: _Reader, value) -> Tuple[Build, ...]:
    """``builds: [horovod, mpi4py==4.0.3]`` (an ``{nccl: PATH}`` item is _read_nccl's)."""
    path = ("environment", "builds")
    if isinstance(value, list):
        items = [(i, read.text(item, path + (i,))) for i, item in enumerate(value) if not isinstance(item, Mapping)]
    else:
        items = [] if isinstance(value, Mapping) else list(enumerate(read.text_list(value or [], path)))
    builds = []
    for i, item in items:
        if not BUILD_RE.fullmatch(item):
            name = item.split("=")[0]
            close = closest(name, BUILDS)
            hint = f"did you mean '{close}'? " if close and close != name else ""
            if name.strip().lower() == "nccl":
                hint = "NCCL is not built from source: name NVIDIA's tarball as {nccl: PATH}, or load the site's nccl module; "
            read.fail(path + (i,), f"{item!r} cannot be built; {hint}slurmkit builds: {', '.join(BUILDS)} (optionally ==VERSION)")
        name, _, version = item.partition("==")
        builds.append(Build(name, version or None))
    if len({b.name for b in builds}) != len(builds):
        read.fail(path, "names a package twice")
    return tuple(builds)


def _read_venv(read: _Reader, value) -> Optional[Venv]:
    if value is None or value is False:
        return None
    path = ("environment", "venv")
    venv = read.mapping({} if value is True else value, path, SECTION_KEYS["environment.venv"])
    return Venv(
        path=None if venv.get("path") is None else read.text(venv["path"], path + ("path",)),
        requirements=None if venv.get("requirements") is None else read.text(venv["requirements"], path + ("requirements",)),
        packages=read.text_list(venv.get("packages") or [], path + ("packages",), _PACKAGE_RE,
                                "a requirement such as numpy or torch==2.3 (options are not packages)"),
    )


def _read_launch(read: _Reader, value) -> Launch:
    if isinstance(value, (str, list)):
        value = {"command": value}  # the short form: launch's own items are the command's
        read.spellings = {**read.spellings, **{("launch", "command", *path[1:]): text for path, text in read.spellings.items()
                                               if path[:1] == ("launch",)}}
    launch = read.mapping(value, ("launch",), SECTION_KEYS["launch"])
    if launch.get("shell") is None:
        read.require(launch.get("command"), ("launch", "command"))
    if launch.get("command") is not None and launch.get("shell") is not None:
        read.fail(("launch", "shell"), "give command (a program and its arguments) or shell (a bash line), not both")
    shell = None
    argv: Tuple[str, ...]
    if launch.get("shell") is not None:
        shell = read.text(launch["shell"], ("launch", "shell"), _SETUP_RE, "a bash line such as: python t.py > log.txt")
        too_long = sanity.command_length_problem(len(shell))
        if too_long:
            read.fail(("launch", "shell"), too_long)
        argv = ("bash", "-c", shell.replace("$", "$$"))
    else:
        argv = _read_command(read, launch["command"])
    launcher = None if launch.get("launcher") is None else read.choice(launch["launcher"], ("launch", "launcher"), tuple(LAUNCHERS))
    framework = None if launch.get("framework") is None else read.choice(launch["framework"], ("launch", "framework"), FRAMEWORKS)
    batch = None if launch.get("batch_size") is None else read.integer(launch["batch_size"], ("launch", "batch_size"),
                                                                       maximum=sanity.MAX_BATCH)
    view = None if launch.get("gpu_view") is None else read.choice(launch["gpu_view"], ("launch", "gpu_view"), GPU_VIEWS)
    precision = None if launch.get("mixed_precision") is None else read.choice(
        _precision_word(launch["mixed_precision"]), ("launch", "mixed_precision"), MIXED_PRECISIONS)
    command = launch.get("command")
    return Launch(command=argv, launcher=launcher, framework=framework, batch_size=batch, gpu_view=view, mixed_precision=precision,
                  text=command if isinstance(command, str) else "", shell=shell)


def _precision_word(value):
    """YAML reads a bare ``no`` as false: it is Accelerate's word ``no``."""
    return "no" if value is False else value


def _read_command(read: _Reader, command) -> Tuple[str, ...]:
    """A command string is split as the shell would, quotes and all: ``$NAME`` expands unquoted or
    in double quotes, and stays as written in single quotes or after a backslash. An unquoted
    ``>``, ``|`` or ``&&`` in it is refused, since as an argument it would reach the program as
    text instead of redirecting."""
    path = ("launch", "command")
    words = command if isinstance(command, list) else []
    # a word that is a number is short, or text() refuses it (str() of a huge int would fail here)
    length = len(command) if isinstance(command, str) else sum((len(w) if isinstance(w, str) else 32) + 1 for w in words)
    too_long = sanity.command_length_problem(length)
    if too_long:
        read.fail(path, too_long)
    if not isinstance(command, str):
        argv = read.text_list(command, path)
    else:
        read.no_nul(command, path)
        try:
            argv = sanity.split_command_words(command)
        except ValueError as error:
            read.fail(path, f"cannot split it into arguments ({error}); give a list of arguments instead")
        doubled = sanity.doubled_dollar_in_single_quotes(command)
        if doubled:
            read.fail(path, f"{doubled} holds $$ inside single quotes, where every $ stays as written, as in a shell: the program "
                            f"would get $$; write {doubled.replace('$$', '$')} for it to get {doubled[1:-1].replace('$$', '$')}")
        operators = split_at_operators(command)[1]
        if operators:
            read.fail(path, f"{operators[0]!r} is shell syntax, not an argument: write launch: {{shell: {command!r}}} "
                            f"to run it as a bash line, or quote it ('{operators[0]}') to pass it to the program")
    if not argv:
        read.fail(path, "is empty: say what the job runs")
    return argv


def _read_array(read: _Reader, value) -> Optional[ArraySpec]:
    if value is None:
        return None
    array = read.mapping(value, ("array",), SECTION_KEYS["array"], required=("parameters",))
    params = read.named(array["parameters"], ("array", "parameters"), "parameter names to lists of values")
    if not params:
        read.fail(("array", "parameters"), "name at least one parameter and its values")
    parameters = []
    for name, values in params.items():
        at = ("array", "parameters", name)
        read.text(name, at, PARAMETER_RE,
                  "a parameter name is a shell variable name (letters, digits, '_'), not SLURM_* or a name starting with '_'")
        if name in RESERVED_VARIABLES:
            read.fail(at, f"{name!r} would replace the shell's own variable; choose another name")
        values = read.text_list(values, at)
        if not values:
            read.fail(at, "has no values")
        parameters.append((str(name), values))
    throttle = None if array.get("throttle") is None else read.integer(array["throttle"], ("array", "throttle"))
    indices = None if array.get("indices") is None else _read_indices(read, array["indices"], parameters)
    return ArraySpec(tuple(parameters), throttle, indices)


def _read_indices(read: _Reader, value, parameters: Sequence[Tuple[str, Sequence[str]]]) -> str:
    """``array.indices``: SLURM's task ids (``--array`` as an old script wrote it), one for each
    point of the grid, so a program that reads $SLURM_ARRAY_TASK_ID itself sees the ids it did."""
    from slurmkit.core.array_ids import array_ids

    at = ("array", "indices")
    text = read.text(value, at)
    try:
        ids = array_ids(text)
    except ValueError as error:
        read.fail(at, str(error))
    points = 1
    for _, values in parameters:
        points *= len(values)
    if len(ids) != points:
        read.fail(at, f"{text!r} names {len(ids)} task ids and the grid has {points} points: give one id for each point")
    return text


def _read_tasks(read: _Reader, value, kind: str) -> Optional[Tasks]:
    """``tasks: {commands: FILE}`` or ``tasks: {arguments: FILE, separator: "\\t"}``, and ``joblog``."""
    path, runs_task_file, runner = ("tasks",), KIND_ROWS[kind].runs_task_file, first_kind(runs_task_file=True).name
    if value is None:
        if runs_task_file:
            read.fail(path, f"kind {runner!r} needs a tasks section: {{commands: FILE}} (a command a line) "
                      "or {arguments: FILE} (the arguments of launch.command, a line each)")
        return None
    if not runs_task_file:
        read.fail(path, f"only kind {runner!r} runs a task file; set kind: {runner} (it is {kind!r})")
    tasks = read.mapping(value, path, SECTION_KEYS["tasks"])
    given = [key for key in ("commands", "arguments") if tasks.get(key) is not None]
    if not given and {path + ("commands",), path + ("arguments",)} & read.meant:
        raise _Stopped   # a misspelt key's did-you-mean already says which
    if len(given) != 1:
        read.fail(path, "give one of commands (a file with a command a line) or arguments (a file with the arguments "
                  "of launch.command, a line each)" + (", not both" if given else ""))
    lines = given[0]
    if lines == "commands" and tasks.get("separator") is not None:
        read.fail(path + ("separator",), "splits argument lines into {1} {2} ...; a commands file has no columns: use arguments")
    file = read.text(tasks[lines], path + (lines,), _ANY_PATH_RE, "a file path (relative to the spec's folder, or absolute)")
    separator = None if tasks.get("separator") is None else read.text(tasks["separator"], path + ("separator",), _ANY_PATH_RE,
                                                                      'a column separator such as "\\t" or ","')
    joblog = None if tasks.get("joblog") is None else read.text(tasks["joblog"], path + ("joblog",), _ANY_PATH_RE,
                                                               "a folder (relative to the spec's folder, or absolute)")
    return Tasks(file, lines, separator, joblog)


def _read_dependencies(read: _Reader, value) -> Tuple[Dependency, ...]:
    """``dependencies: [{after: ok, jobs: [123]}]``, or a bare job id / list meaning ``ok``."""
    if value is None:
        return ()
    if not isinstance(value, list):
        value = [value]
    result = []
    for i, item in enumerate(value):
        at = ("dependencies", i)
        if not isinstance(item, Mapping):
            item = {"jobs": item}
        dep = read.mapping(item, at, SECTION_KEYS["dependencies.*"], required=("jobs",))
        kind = read.choice(dep.get("after", "ok"), at + ("after",), tuple(DEPENDENCY_TYPES))
        jobs = read.text_list(dep["jobs"], at + ("jobs",), re.compile(r"^\d+(_\d+)?$"), "a job id such as 12345")
        result.append(Dependency(kind, jobs))
    return tuple(result)


def _read_mail(read: _Reader, value) -> Optional[Mail]:
    if value is None:
        return None
    if isinstance(value, str):
        value = {"user": value}
    mail = read.mapping(value, ("mail",), SECTION_KEYS["mail"])
    events = tuple(read.choice(str(e).upper(), ("mail", "events", i), MAIL_EVENTS)
                   for i, e in enumerate(read.text_list(mail.get("events", ["END", "FAIL"]), ("mail", "events"))))
    user = None if mail.get("user") is None else read.text(mail["user"], ("mail", "user"), MAIL_RE, "an e-mail address")
    return Mail(user, events)


_DIRECTIVE_RE = re.compile(r"^--?[A-Za-z][A-Za-z0-9-]*(=[^\s'\"\\$`]*)?$")


def _read_extra(read: _Reader, value) -> Tuple[str, ...]:
    directives = read.text_list(value or [], ("extra_directives",), _DIRECTIVE_RE,
                                "an sbatch option such as --constraint=cascade (one option, no spaces or quotes)")
    seen: Dict[str, int] = {}
    for index, directive in enumerate(directives):
        problem = sanity.directive_problem(directive, seen)
        if problem:
            read.fail(("extra_directives", index), problem)
        seen.setdefault(directive.partition("=")[0], index)
    return directives


# A staged path is relative (to the spec's folder, or to $SLURM_TMPDIR) and stays inside it.
_STAGE_PATH_RE = re.compile(r"^(?!/)(?!.*(^|/)\.\.(/|$))[^\x00\n]+$")
_STAGE_PATH_HELP = "a relative path without '..' (inputs: from the spec's folder; outputs: inside $SLURM_TMPDIR)"


def _read_stage(read: _Reader, value) -> Optional[Stage]:
    if value is None:
        return None
    stage = read.mapping(value, ("stage",), SECTION_KEYS["stage"])
    inputs = tuple(_read_staged(read, item, ("stage", "inputs", i), StageInput, source_relative=False)
                   for i, item in enumerate(_as_list(stage.get("inputs"))))
    outputs = tuple(_read_staged(read, item, ("stage", "outputs", i), StageOutput, source_relative=True)
                    for i, item in enumerate(_as_list(stage.get("outputs"))))
    checkpoint = None
    if stage.get("checkpoint") is not None:
        at = ("stage", "checkpoint")
        spec = read.mapping(stage["checkpoint"], at, SECTION_KEYS["stage.checkpoint"], required=("from", "to"))
        every = read.duration(spec.get("every", "30m"), at + ("every",), sanity.MIN_CHECKPOINT_S)
        checkpoint = Checkpoint(read.text(spec["from"], at + ("from",), _STAGE_PATH_RE, _STAGE_PATH_HELP),
                                read.text(spec["to"], at + ("to",), _STAGE_PATH_RE, _STAGE_PATH_HELP), every)
    lead = None if stage.get("lead") is None else read.duration(stage["lead"], ("stage", "lead"))
    destinations: List[Tuple[KeyPath, str]] = [(("stage", "outputs", i, "to"), out.to) for i, out in enumerate(outputs)]
    destinations += [(("stage", "checkpoint", "to"), checkpoint.to)] if checkpoint else []
    collision = sanity.output_collision(destinations)
    if collision:
        read.fail(*collision)
    return Stage(inputs, outputs, checkpoint, lead)


def _as_list(value):
    return [] if value is None else value if isinstance(value, list) else [value]


def _read_staged(read: _Reader, item, at: KeyPath, kind, source_relative: bool):
    """``path`` or ``{from: path, to: path}``; outputs need a ``to``."""
    if isinstance(item, str):
        item = {"from": item}
    section = "stage.inputs.*" if kind is StageInput else "stage.outputs.*"
    entry = read.mapping(item, at, SECTION_KEYS[section], required=("from",) if kind is StageInput else ("from", "to"))
    source = read.text(entry["from"], at + ("from",), _STAGE_PATH_RE if source_relative else _ANY_PATH_RE,
                       _STAGE_PATH_HELP if source_relative else "a path (relative to the spec's folder, or absolute)")
    to_pattern = _ANY_PATH_RE if source_relative else _STAGE_PATH_RE
    to = "" if entry.get("to") is None else read.text(entry["to"], at + ("to",), to_pattern, _STAGE_PATH_HELP)
    return kind(source, to)


_ANY_PATH_RE = re.compile(r"^[^\x00\n]+$")


def _read_monitor(read: _Reader, value) -> Monitor:
    """``monitor: {gpu: false}`` turns the GPU sampler off; true or nothing: on where the job has GPUs."""
    if value is None:
        return Monitor()
    monitor = read.mapping(value, ("monitor",), SECTION_KEYS["monitor"])
    gpu = monitor.get("gpu")
    if gpu is not None and not isinstance(gpu, bool):
        read.fail(("monitor", "gpu"), f"must be true or false, not {gpu!r}")
    return Monitor(gpu)


def _read_logs(read: _Reader, value) -> Optional[Logs]:
    """``logs: {output: PATTERN, error: PATTERN}`` (or ``logs: PATTERN`` for the output alone):
    sbatch's file name patterns, relative to the spec's folder (where the job starts)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = {"output": value}
    logs = read.mapping(value, ("logs",), SECTION_KEYS["logs"], required=("output",))
    output = _log_pattern(read, logs["output"], ("logs", "output"))
    error = None if logs.get("error") is None else _log_pattern(read, logs["error"], ("logs", "error"))
    return Logs(output, error)


def _log_pattern(read: _Reader, value, path: KeyPath) -> str:
    text = read.text(value, path)
    problem = pattern_problem(text)
    if problem:
        read.fail(path, f"{text!r}: {problem}")
    return text


def _read_resubmit(read: _Reader, value) -> Optional[Resubmit]:
    """``resubmit: true`` or ``resubmit: {max_links: 5}``."""
    if value is None or value is False:
        return None
    if value is True:
        return Resubmit()
    resubmit = read.mapping(value, ("resubmit",), SECTION_KEYS["resubmit"])
    return Resubmit(read.integer(resubmit.get("max_links", 10), ("resubmit", "max_links")))
