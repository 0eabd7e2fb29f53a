"""What must be built again when a job moves to another cluster's stack.

A virtualenv made once and reused (``environment.venv.path``) holds compiled packages linked
against one StdEnv, one Python and one CPU architecture; a program the job runs from the user's
own folders (``./app``, ``$HOME/bin/x``, ``build/solver``) was compiled against the old stack's
libraries. Moved to another cluster, either may fail to start or run slowly, so ``port`` writes
a to-do to rebuild each, whenever the cluster changes: also when the old script named no StdEnv
(the 2020-era habit: the old cluster's default applied, which its profile names) or loaded
``scipy-stack`` without a python (scipy-stack loads one itself).
"""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Sequence, Set, Tuple

from slurmkit.port import bashtree
from slurmkit.port.cluster_branches import values_on, walk_run
from slurmkit.sites.modulecat import and_list, python_held, served_python
from slurmkit.sites.profiles import SiteProfile
from slurmkit.spec.spec import JobSpec

#: Words that start another program: the program a job runs is the first word after them that is
#: neither an option nor a number (``mpirun -np 4 ./app``, ``srun --ntasks 8 ./app``).
LAUNCHERS = ("srun", "mpirun", "mpiexec", "charmrun", "ibrun", "time", "timeout", "nohup", "numactl", "taskset", "stdbuf", "env")

#: A path in the user's folders: relative with a folder (``./app``, ``build/app``), under home,
#: project or scratch, by name or variable.
USER_PATH = re.compile(r"^(\.{1,2}/|~/|\$\{?(HOME|PROJECT|SCRATCH|USER)\}?/|/home/|/project/|/scratch/|/lustre\d*/|[\w.-]+/)")

#: Files that are read by an interpreter, not compiled: nothing to rebuild.
SCRIPT_SUFFIXES = (".py", ".sh", ".bash", ".r", ".pl", ".jl", ".m", ".rb", ".lua", ".awk", ".tcl", ".nf", ".smk", ".ipynb")
#: Data a launcher option may name (``srun -o logs/out.txt ./app``): not the program (``a.out`` is one).
DATA_SUFFIXES = (".txt", ".log", ".err", ".dat", ".csv", ".json", ".yaml", ".yml", ".in", ".inp")
#: A launcher's option value standing alone: a count or a duration (``timeout 2h``).
OPTION_VALUE = re.compile(r"^\d+[smhd]?$")


#: The default StdEnv over the years, for a job built under the default of its day (facts §3:
#: https://docs.alliancecan.ca/wiki/Standard_software_environments/en: 2020 the default from
#: April 2021; https://docs.alliancecan.ca/wiki/Migration_to_the_new_standard_environment/en:
#: 2023 the default for all clusters after 2024-04-01).
DEFAULTS_OVER_TIME = "StdEnv/2020 from April 2021, StdEnv/2023 from April 2024"


def stack_of(modules: Sequence[str], profile: SiteProfile, venv: bool, built: bool = False) -> Tuple[str, str]:
    """(StdEnv, python) a job with ``modules`` runs under on ``profile``: those it names, else the
    profile's default StdEnv and (for a virtualenv, which slurmkit gives the site's python) python;
    scipy-stack with no python loads its own, which is said as such. ``built``: what the old job
    was built under, where the job names none: the default of the day it was built, not today's."""
    stdenv = next((m for m in modules if m.startswith("StdEnv/")), None)
    python = next((m for m in modules if m.split("/")[0] == "python"), None)
    scipy = next((m for m in modules if m.split("/")[0] == "scipy-stack"), None)
    if stdenv is None and built:
        stdenv = f"the StdEnv that was {profile.name}'s default when it was built ({DEFAULTS_OVER_TIME}; the job loads none)"
    elif stdenv is None:
        stdenv = f"{profile.software.stdenv} ({profile.name}'s default: the job loads no StdEnv)" if profile.software.stdenv else ""
    if python is None and scipy:
        python = f"the python {scipy} loads"
    if python is None and venv:
        python = "the python it was made with" if built else profile.software.modules.get("python") or ""
    return stdenv, python or ""


def _venv_stack(modules: Sequence[str], profile: SiteProfile) -> Tuple[str, str]:
    """What a virtualenv is rebuilt under (stack_of): a python the site no longer builds wheels
    for (python/3.10 where 3.12 is the oldest served) is named with the served one to load, as
    check asks, so that the to-do and check's warning name one python; where a module the job
    loads is built for older pythons only (arrow/14.0.1), the python is kept, with that module
    named and what would move with it, as check's warning says too."""
    stdenv, python = stack_of(modules, profile, True)
    loaded = next((m for m in modules if m.split("/")[0] == "python"), None)
    served = served_python(loaded, profile) if loaded else None
    if served is None:
        return stdenv, python
    held = python_held(profile, modules, served.new.partition("/")[2])
    if held is not None:
        move = f" until {and_list(held.stuck)} is built for a newer python" if held.stuck else \
            f", or load {served.new} with {and_list(held.moves)} in environment.modules"
        return stdenv, f"{loaded} ({profile.name} builds no new wheels for it, but {held.conflict}: keep it{move})"
    return stdenv, (f"{served.new} ({loaded} is older than the pythons {profile.name} builds wheels for: load {served.new} in "
                    "environment.modules too)")


#: A virtualenv's folder name that says Python 2 (venv_py2.7, env-python2, py27).
PYTHON2_NAME = re.compile(r"(?i)(py|python)[-_.]?2(?:\.?[0-7](?:\.\d+)?)?(?!\d)")


def python2_venv(path: str, modules: Sequence[str]) -> bool:
    """Whether a virtualenv is, by its folder's name, a Python 2 one, under no python module that
    says otherwise (a python/3.x module would make the name wrong, not the job)."""
    named = any(m.split("/")[0] == "python" for m in modules)
    return not named and bool(PYTHON2_NAME.search(path.rstrip("/").split("/")[-1]))


def _under(stack: Tuple[str, str]) -> str:
    return " and ".join(filter(None, stack)) or "its software stack"


def rebuild_todos(spec: JobSpec, new_modules: Sequence[str], shell: Sequence[Tuple[str, str]],
                  source: SiteProfile, target: SiteProfile) -> List[str]:
    """The to-dos to rebuild a reused virtualenv and the programs from the user's folders, for a
    job moving from ``source`` (running ``spec``'s modules) to ``target`` (running ``new_modules``)."""
    if source.name == target.name:
        return []
    venv = spec.environment.venv
    todos = []
    if venv is not None and venv.path is not None and python2_venv(venv.path, spec.environment.modules):
        old, new = stack_of(spec.environment.modules, source, True, built=True), stack_of(new_modules, target, False)
        todos.append(f"environment.venv.path: {venv.path} is by its name a Python 2 virtualenv, built under {_under(old)} on "
                     f"{source.name}; {target.name}'s stack ({_under(new)}) has no Python 2: move the code to Python 3, then make "
                     "the virtualenv again with a python module of that stack (virtualenv --no-download, pip install --no-index "
                     "-r requirements.txt), then remove this line")
    elif venv is not None and venv.path is not None:
        old, new = stack_of(spec.environment.modules, source, True, built=True), _venv_stack(new_modules, target)
        todos.append(f"environment.venv.path: {venv.path} was built under {_under(old)} on {source.name}; a virtualenv works only "
                     f"with the Python, StdEnv and CPUs it was made with: rebuild it for {target.name}'s stack, under {_under(new)} "
                     "(virtualenv --no-download, pip install --no-index -r requirements.txt), then remove this line")
    for field, path in dict.fromkeys(_activated_venvs(shell, target)):
        if venv is None or venv.path is None or venv.path.rstrip("/") != path:
            old, new = stack_of(spec.environment.modules, source, True, built=True), _venv_stack(new_modules, target)
            todos.append(f"{field}: the virtualenv {path}, entered as written, was built under {_under(old)} on {source.name}; a "
                         "virtualenv works only with the Python, StdEnv and CPUs it was made with: rebuild it for "
                         f"{target.name}'s stack, under {_under(new)} (virtualenv --no-download, pip install --no-index -r "
                         "requirements.txt), then remove this line")
    old, new = stack_of(spec.environment.modules, source, False, built=True), stack_of(new_modules, target, False)
    built_here = _built_by_the_job(shell)
    for field, program in dict.fromkeys(_user_programs(spec, shell)):
        if program in built_here or ("*" in built_here and program.startswith("./")):
            continue   # the job builds it itself, under the modules it loads: the new stack's build
        todos.append(f"{field}: {program} is a program from your folders, built on {source.name} under {_under(old)}: rebuild it "
                     f"for {target.name}'s stack, under {_under(new)} (load the modules it needs, build it again), then remove this line")
    return todos


#: commands that build programs: a job that runs one builds what it runs, each time, on the new stack
#: (cmake only with --build: ``cmake ..`` alone configures; cargo and go only with ``build``)
BUILD_COMMANDS = frozenset(("make", "gmake", "cmake", "ninja", "scons", "cargo", "go"))
#: compilers, whose ``-o PROGRAM`` names what they built
COMPILERS = re.compile(r"^(gcc|g\+\+|gfortran|cc|c\+\+|icc|icpc|icx|icpx|ifort|ifx|nvcc|"
                       r"mpicc|mpicxx|mpic\+\+|mpif90|mpifort|clang|clang\+\+)$")


def _built_by_the_job(shell: Sequence[Tuple[str, str]]) -> Set[str]:
    """The programs the job's own lines build (``gcc -o app``), and "*" where they run a build
    tool (make, cmake): then every program of the submit folder (``./app``) is built by the job."""
    built: Set[str] = set()
    for _, text in shell:
        for command in bashtree.walk(bashtree.parse(text).statements):
            argv = list(command.argv)
            name = argv[0].rsplit("/", 1)[-1] if argv else ""
            if name in BUILD_COMMANDS and (name not in ("cargo", "go", "cmake") or argv[1:2] == ["build"] or "--build" in argv):
                built.add("*")
            elif COMPILERS.match(name) and "-o" in argv[:-1]:
                out = argv[argv.index("-o") + 1]
                built.update((out, f"./{out}" if "/" not in out else out))
    return built


def _user_programs(spec: JobSpec, shell: Sequence[Tuple[str, str]]) -> Iterator[Tuple[str, str]]:
    """(field, path) of each program the job starts from the user's folders."""
    if spec.launch.shell is None and spec.launch.command:
        program = _program([spec.launch.launcher or "", *spec.launch.command] if spec.launch.launcher else list(spec.launch.command))
        if program:
            yield "launch.command", program
    for field, text in shell:
        for command in bashtree.walk(bashtree.parse(text).statements):
            program = _program(command.argv)
            if program:
                yield field, program
    yield from _multi_prog_programs(spec, shell)


#: a program of the user's folder as a line of srun's --multi-prog file names it (``0-3 ./ocean``)
_MULTI_PROG_LINE = re.compile(r"(?:^|\n|\\n|['\"])\s*[\d,*-]+\s+(\./[\w.+-]+)")


def _multi_prog_programs(spec: JobSpec, shell: Sequence[Tuple[str, str]]) -> Iterator[Tuple[str, str]]:
    """(field, path) of each program an ``srun --multi-prog FILE`` job names in the lines that
    write FILE (a here-document, ``printf``): srun starts them as ``srun ./app`` would."""
    launch = " ".join(spec.launch.command) + " " + (spec.launch.shell or "")
    if "--multi-prog" not in launch and not any("--multi-prog" in text for _, text in shell):
        return
    for field, text in shell:
        for program in _MULTI_PROG_LINE.findall(text):
            yield field, program


def _activated_venvs(shell: Sequence[Tuple[str, str]], target: SiteProfile) -> Iterator[Tuple[str, str]]:
    """(field, folder) of each virtualenv a kept shell line enters (``source X/bin/activate``),
    whichever folder it is in: import keeps such lines as written where it cannot follow the path."""
    made: Set[str] = set()   # a virtualenv the lines make themselves is made under the new stack each run
    values = values_on(bashtree.parse("\n".join(text for _, text in shell)).statements, target.detect.cc_cluster)
    for field, text in shell:
        for command in walk_run(bashtree.parse(text).statements, values):   # not in a branch that does not run there
            argv = list(command.argv)
            if argv[:1] == ["virtualenv"] or argv[1:3] == ["-m", "venv"] or argv[1:3] == ["-m", "virtualenv"]:
                made.update(word.rstrip("/") for word in argv[1:] if not word.startswith("-") and word not in ("venv", "virtualenv"))
            elif len(argv) >= 2 and argv[0] in ("source", ".") and (argv[1] == "bin/activate" or argv[1].endswith("/bin/activate")):
                path = argv[1][:-len("bin/activate")].rstrip("/") or "."
                if path not in made and not _made_in_the_job(path, made):
                    yield field, path


def _made_in_the_job(path: str, made: Set[str]) -> bool:
    """A virtualenv in $SLURM_TMPDIR, which is empty when the job starts, where the job makes
    one into a folder import cannot read (``virtualenv "$ENV_PATH"``): that is this one, made
    under the new stack each run. (One the job unpacks there from an archive is not made.)"""
    return bool(re.match(r"\$\{?SLURM_TMPDIR\}?(/|$)", path)) and any("$" in folder for folder in made)


def started(argv: Sequence[str]) -> List[str]:
    """``argv`` from the program its launchers start (``srun -n 4 julia x.jl`` -> ``julia x.jl``)."""
    words = list(argv)
    while words and words[0] in LAUNCHERS:
        if words[0] in ("srun", "mpirun", "mpiexec"):   # their options' values by srun's and mpirun's own tables
            from slurmkit.core.launch_options import parse

            words = list(parse(words).program)
            continue
        words = words[1:]
        while words and (words[0].startswith("-") or OPTION_VALUE.match(words[0]) or "=" in words[0]):
            words = words[1:]
    return words


def _program(argv: Sequence[str]) -> Optional[str]:
    """The program ``argv`` starts, where it is a compiled one from the user's folders; else None."""
    words = started(argv)
    if not words:
        return None
    word = words[0]
    if not USER_PATH.match(word) or word.lower().endswith(SCRIPT_SUFFIXES + DATA_SUFFIXES) or "://" in word:
        return None
    return word
