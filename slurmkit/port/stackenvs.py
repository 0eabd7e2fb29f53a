"""Julia projects and R libraries: environments a user builds against one stack, like a virtualenv.

A Julia project (``julia --project=DIR``, ``JULIA_PROJECT``) has its packages installed and
precompiled in a depot (``~/.julia``, or ``JULIA_DEPOT_PATH``) for one julia; without a project,
julia reads ``~/.julia/environments/vX.Y``, one folder per minor version. R packages installed into
a user library (``R_LIBS``, ``R_LIBS_USER``, ``.libPaths(...)``) are built for one R and one stack;
the default library, ``~/R/x86_64-pc-linux-gnu-library/X.Y``, is one folder per minor version.

So ``port`` writes a to-do, naming both versions, as it does for a virtualenv (rebuild.py): for a
project, a depot or a user library named in the job, whenever the cluster or the version
(major.minor) changes (the new cluster's home holds none of it); for the default folders, when the
major.minor version changes (the new julia or R looks in another folder, which is empty), or the
new cluster does not mount the old one's /home (Béluga's packages are not on Rorqual).
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from slurmkit.port import bashtree
from slurmkit.port.olddefaults import with_old_defaults
from slurmkit.port.rebuild import started
from slurmkit.sites.profiles import SiteProfile
from slurmkit.spec.spec import JobSpec

#: The variables that name where R finds the user's packages.
R_LIBRARY_VARIABLES = ("R_LIBS", "R_LIBS_USER")
#: The variables that name a Julia project or the depot its packages are installed in.
JULIA_VARIABLES = ("JULIA_PROJECT", "JULIA_DEPOT_PATH")
#: ``.libPaths("DIR")`` in R code given on the command line (``Rscript -e``).
LIB_PATHS = re.compile(r"""\.libPaths\(\s*(?:c\(\s*)?["']([^"']+)["']""")
#: What R calls its default user library, per minor version.
R_DEFAULT_LIBRARY = "~/R/x86_64-pc-linux-gnu-library"


class _Job:
    """What the job runs, as far as julia and R care: the argv of each command with the spec field
    that runs it, and the variables it sets (environment.variables, assignments in its shell lines)."""

    def __init__(self, spec: JobSpec, shell: Sequence[Tuple[str, str]]) -> None:
        self.commands: List[Tuple[str, List[str]]] = []
        self.variables: Dict[str, Tuple[str, str]] = {name: (f"environment.variables.{name}", value)
                                                      for name, value in spec.environment.variables}
        if spec.launch.shell is None and spec.launch.command:
            self.commands.append(("launch.command", _without_prefix(list(spec.launch.command), self.variables, "launch.command")))
        for field, text in shell:
            statements = bashtree.parse(text).statements
            for assignment in bashtree.assignments(statements):
                self.variables.setdefault(assignment.name, (field, assignment.value.value))
            for command in bashtree.walk(statements):
                for assignment in command.prefix:
                    self.variables.setdefault(assignment.name, (field, assignment.value.value))
                self.commands.append((field, command.argv))


def _without_prefix(argv: List[str], variables: Dict[str, Tuple[str, str]], field: str) -> List[str]:
    """``argv`` less its leading ``NAME=value`` words, each recorded in ``variables``."""
    while argv and re.match(r"^[A-Za-z_]\w*=", argv[0]):
        name, _, value = argv.pop(0).partition("=")
        variables.setdefault(name, (field, value))
    return argv


def _first_fields(found: Iterator[Tuple[str, str]]) -> Dict[str, str]:
    """Each (field, thing) found, as thing -> the first field that names it, in the order found."""
    firsts: Dict[str, str] = {}
    for field, thing in found:
        firsts.setdefault(thing, field)
    return firsts


def _module(modules: Sequence[str], family: str) -> Optional[str]:
    return next((m for m in modules if m.split("/")[0].lower() == family), None)


def _minor(module: Optional[str]) -> Optional[str]:
    """``julia/1.5.2`` -> ``1.5``; None for a module without a version."""
    version = (module or "").partition("/")[2]
    match = re.match(r"^(\d+\.\d+)", version)
    return match.group(1) if match else None


def _version(module: Optional[str], profile: SiteProfile, label: str) -> str:
    """How a to-do names what a module gives: ``julia 1.5.2``, else ``graham's default julia``;
    without the module, the one the job finds there (a workflow's steps load their own)."""
    if module is None:
        return f"the {label} the job finds"
    version = module.partition("/")[2]
    return f"{label} {version}" if version else f"{profile.name}'s default {label}"


def _stdenv(modules: Sequence[str]) -> str:
    return next((m for m in modules if m.startswith("StdEnv/")), "")


class _Move:
    """One language's module before and after the port (``julia/1.5.2`` -> ``julia/1.11.3``)."""

    def __init__(self, family: str, label: str, old_modules: Sequence[str], new_modules: Sequence[str], source: SiteProfile,
                 target: SiteProfile) -> None:
        self.old, self.new = _module(old_modules, family), _module(new_modules, family)
        self.source, self.target, self.label = source, target, label
        stacks = _stdenv(old_modules), _stdenv(new_modules)
        self.stack = f" and {stacks[1]}" if stacks[1] else ""
        self.old_stack = f" and {stacks[0]}" if stacks[0] else ""
        if self.old is None or self.new is None:
            self.minor_changed = False
        elif _minor(self.old) and _minor(self.new):
            self.minor_changed = _minor(self.old) != _minor(self.new)
        else:   # a version left to the default (python, python/3): it changes with the stack, and the cluster
            self.minor_changed = self.old != self.new or stacks[0] != stacks[1] or source.name != target.name

    @property
    def cluster_changed(self) -> bool:
        return self.source.name != self.target.name

    @property
    def files_shared(self) -> bool:
        """The target mounts the source's file systems (Fir Cedar's): the user's folders are there."""
        return self.source.status.files_on_successor and self.source.status.successor == self.target.name

    @property
    def home_left_behind(self) -> bool:
        """The job moves to a cluster that does not mount the old one's /home (Béluga's to Rorqual):
        what the user installed in the default folders there (~/.julia, ~/R) is not on the new one."""
        return self.cluster_changed and not self.files_shared

    def versions(self) -> Tuple[str, str]:
        return _version(self.old, self.source, self.label), _version(self.new, self.target, self.label)


def stack_environment_todos(spec: JobSpec, new_modules: Sequence[str], shell: Sequence[Tuple[str, str]],
                            source: SiteProfile, target: SiteProfile, gpus: str = "") -> List[str]:
    """The to-dos to instantiate a Julia project (or depot), to reinstall R packages and Python
    packages built for another python or an older CUDA, for a job moving from ``source`` (running
    ``spec``'s modules) to ``target`` (running ``new_modules``, on ``gpus``, the ported request)."""
    job = _Job(spec, shell)
    old_modules = with_old_defaults(list(spec.environment.modules))[0]
    julia = _Move("julia", "julia", old_modules, new_modules, source, target)
    r = _Move("r", "R", old_modules, new_modules, source, target)
    todos = list(_julia_todos(job, julia)) if julia.old and julia.new else []
    todos += list(_r_todos(job, r)) if (r.old and r.new) or not (r.old or r.new) else []
    python = _Move("python", "python", old_modules, new_modules, source, target)
    todos += list(_python_todos(job, python, spec)) if python.old and python.new and python.minor_changed else []
    return todos + list(_pypi_todos(job, source, target)) + list(_cuda_build_todos(job, spec, target, gpus))


def _pypi_todos(job: _Job, source: SiteProfile, target: SiteProfile) -> Iterator[str]:
    """A ``pip install NAME`` the job runs as written without ``--no-index`` could take from PyPI
    what the wheelhouse lacks on a cluster whose compute nodes reach the internet (import keeps
    such a line as written): on one whose compute nodes do not, it finds the wheelhouse only."""
    if not source.storage.internet_on_compute or target.storage.internet_on_compute is not False:
        return
    for field, argv in job.commands:
        words = started(argv)
        if words[:1] in (["pip"], ["pip3"]) and "install" in words and "--no-index" not in words:
            packages = [p for f, p in _installed_by_lines(_One(field, argv)) if p != "pip"]
            if packages:
                yield (f"{field}: pip install {' '.join(packages)} could take from PyPI on {source.name}, whose compute "
                       f"nodes reach the internet; {target.name}'s do not: check that the wheelhouse has each (avail_wheels "
                       "NAME) and add --no-index, or download the others on a login node first (pip download -d DIR), then "
                       "remove this line")


class _One:
    """One command of a job, as _Job holds them (for _installed_by_lines)."""

    def __init__(self, field: str, argv: List[str]) -> None:
        self.commands = [(field, argv)]


# ------------------------------------------------------------------------------------ python

#: Packages no longer built for the pythons the Alliance serves: TensorFlow ships its GPU support
#: in ``tensorflow`` since 2.1 (pypi.org/project/tensorflow-gpu: "no longer supported"), and the
#: wheelhouse's Python 3.11 list has tensorflow 2.12 and newer only (the Wheels3.11 page).
NO_WHEEL_NOW = ("tensorflow-gpu", "tensorflow_gpu")


def _may_lack_a_wheel(package: str) -> bool:
    """A package pinned to a version of an older day (``torch==1.7.1``), or one that is no longer
    built: the new python's wheelhouse may have none. A bare name gets the newest wheel there is."""
    name = re.split(r"[=<>~!\[; ]", package, maxsplit=1)[0].lower()
    return name in NO_WHEEL_NOW or bool(re.search(r"(==|<=|<|~=)", package))



def _instead(doubtful: List[str]) -> str:
    """What to install in place of a package that is built no more (tensorflow_gpu), for the to-do."""
    renamed = [p for p in doubtful if re.split(r"[=<>~!\[; ]", p, maxsplit=1)[0].lower() in NO_WHEEL_NOW]
    return (f" ({renamed[0]} is built no more: tensorflow holds its GPU support since 2.1, so install tensorflow instead, "
            "pinned to a version the code runs with)") if renamed else ""


def _python_todos(job: _Job, move: _Move, spec: JobSpec) -> Iterator[str]:
    """Python packages are built for one minor version. A virtualenv the job builds from its
    package list gets each package for the new python, where a wheel for it exists (an old pin
    such as tensorflow_gpu has none for 3.11); a reused virtualenv has its rebuild to-do
    (rebuild.py). A job with no virtualenv read the packages ``pip install --user`` put in
    ``~/.local/lib/pythonX.Y``, which the new python does not read."""
    old, new = _minor(move.old), _minor(move.new)
    before = f"python {old}" if old else f"{move.old} on {move.source.name} (a default python, which changes with the stack)"
    after = move.new if new else f"{move.new} on {move.target.name}"
    wheels = f"python {new} (avail_wheels NAME --python {new})" if new else f"{move.target.name}'s python (avail_wheels NAME)"
    venv = spec.environment.venv
    own = venv is not None or _enters_a_venv(job)
    installs = _installs_to_check(job, spec)
    if own and installs:
        field, what, doubtful = installs
        yield (f"{field}: the job installs {what} under {after} now, not {before}: check that each has "
               f"a wheel for {wheels} or pin a version that has one{_instead(doubtful)}, then remove this line")
    elif not own and (_loads_python(spec) or any(started(argv)[:1] and started(argv)[0].startswith("python")
                                                 for _, argv in job.commands)):
        site = f"~/.local/lib/python{old}/site-packages" if old else f"~/.local/lib/pythonX.Y/site-packages (X.Y: {before})"
        yield (f"environment.modules: {move.old} became {move.new}: packages the job's python found in {site} (pip install "
               f"--user) are not read by {f'python {new}' if new else after}: install them again under {move.new}, better "
               "in a virtualenv (environment.venv), then remove this line")


def _loads_python(spec: JobSpec) -> bool:
    """Whether the job loads a python module itself: it runs python, if only through a script of
    its own (``sh ./produce.sh``) whose lines the job's cannot show."""
    return any(m.partition("/")[0].lower() == "python" for m in spec.environment.modules)


def _installs_to_check(job: _Job, spec: JobSpec) -> Optional[Tuple[str, str, List[str]]]:
    """(field, what it installs, the pins that may lack a wheel) of the job's installs that the
    new python may not have wheels for: pinned packages, or a requirements file (of
    environment.venv, or of a kept ``pip install -r`` line); None where there are none."""
    venv = spec.environment.venv
    installed, files = _installed_by_lines(job), _requirement_files(job)
    doubtful = [p for p in [*(venv.packages if venv is not None else ()), *(p for _, p in installed)] if _may_lack_a_wheel(p)]
    listed = [venv.requirements] if venv is not None and venv.requirements else [f for _, f in files]
    if not doubtful and not listed:
        return None
    what = ", ".join(doubtful) if doubtful else f"the packages of {' and '.join(listed)}"
    field = next((f for f, p in [*installed, *files] if p in doubtful or p in listed), "environment.venv")
    return field, what, doubtful


def _enters_a_venv(job: _Job) -> bool:
    """The job's own lines make or enter a virtualenv (or a conda environment): its python reads
    that environment's packages, not the user site (~/.local), whatever the python."""
    for _, argv in job.commands:
        words = started(argv)
        if words[:1] == ["virtualenv"] or (words[:1] and words[0].startswith("python") and words[1:3] == ["-m", "venv"]):
            return True
        if words[:1] in (["source"], ["."]) and len(words) > 1 and words[1].endswith("activate"):
            return True
        if words[:2] == ["conda", "activate"]:
            return True
    return False


#: pip's options whose value is a file, a URL or a folder, not a package
_PIP_VALUE_OPTIONS = ("-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f",
                      "--find-links", "-t", "--target", "--prefix", "--root")


def _pip_installs(job: Any) -> Iterator[Tuple[str, List[str]]]:
    """(field, words) of each ``pip install`` (pip, pip3, python -m pip) of the job's own lines."""
    for field, argv in job.commands:
        words = started(argv)
        pip = words[:1] in (["pip"], ["pip3"]) or (words[:1] and words[0].startswith("python") and words[1:3] == ["-m", "pip"])
        if pip and "install" in words:
            yield field, words


def _installed_by_lines(job: Any) -> List[Tuple[str, str]]:
    """(field, package) of each package the job's own ``pip install`` lines name (kept as written,
    so not in environment.venv): the same wheel check applies to them."""
    found = []
    for field, words in _pip_installs(job):
        rest = words[words.index("install") + 1:]
        found += [(field, w) for i, w in enumerate(rest)
                  if not w.startswith("-") and (not i or rest[i - 1] not in _PIP_VALUE_OPTIONS)]
    return found


def _requirement_files(job: Any) -> List[Tuple[str, str]]:
    """(field, file) of each ``pip install -r FILE`` of the job's own lines: a list of packages
    pinned for the python it was written under, as environment.venv.requirements is."""
    return [(field, words[i + 1]) for field, words in _pip_installs(job)
            for i, w in enumerate(words[:-1]) if w in ("-r", "--requirement")]


# ------------------------------------------------------------------------------------ CUDA builds

#: The oldest CUDA that builds code for a GPU model's architecture, with the release notes that
#: added it: a package built for an older CUDA has no code for the GPU and fails on it.
MIN_CUDA = {
    "h100": ((11, 8), "https://docs.nvidia.com/cuda/archive/11.8.0/cuda-toolkit-release-notes/index.html"),
    "a100": ((11, 0), "https://docs.nvidia.com/cuda/archive/11.0/cuda-toolkit-release-notes/index.html"),
}
#: Where an install names its CUDA: NVIDIA's redist index (.../cuda/10.0), PyTorch's (whl/cu113),
#: a local version (torch==1.7.1+cu110) or a package named for it (nvidia-dali-cuda110).
_CUDA_IN_URL = re.compile(r"/cuda/(\d+)\.(\d)(?:[/.]|$)")
_CUDA_CODE = re.compile(r"(?:[/+]cu|[-_]cuda)(\d{1,2})(\d)(?![\w.])")


def _cuda_version(word: str) -> Optional[Tuple[int, int]]:
    """The CUDA version ``word`` (an index URL, a pin or a package name) names, or None."""
    found = _CUDA_IN_URL.search(word) or _CUDA_CODE.search(word)
    return (int(found.group(1)), int(found.group(2))) if found else None


def _cuda_builds(job: _Job, spec: JobSpec) -> Iterator[Tuple[str, str, Tuple[int, int]]]:
    """(field, word, version) of each CUDA build the job installs: its pip lines' index URLs,
    pins and package names, and environment.venv's packages."""
    venv = spec.environment.venv
    for package in venv.packages if venv is not None else ():
        version = _cuda_version(package)
        if version:
            yield "environment.venv.packages", package, version
    for field, words in _pip_installs(job):
        for word in words[words.index("install") + 1:]:
            version = _cuda_version(word)
            if version:
                yield field, word, version


def _gpu_model(gpus: str, target: SiteProfile) -> str:
    """The model of the ported GPU request ("h100:2" -> h100); for an untyped one, the target's
    model where it has one."""
    named = gpus.split(":")[0] if ":" in gpus else ""
    models = {t.gpus.model for t in target.node_types if t.gpus}
    return named if named else (next(iter(models)) if len(models) == 1 else "")


def _cuda_build_todos(job: _Job, spec: JobSpec, target: SiteProfile, gpus: str) -> Iterator[str]:
    """A package built for a CUDA older than the ported GPUs' architecture needs (a CUDA 10.0
    index on an H100) installs, then fails at its first GPU call: a to-do naming both."""
    model = _gpu_model(gpus, target) if gpus else ""
    least, source = MIN_CUDA.get(model.split("_")[0], (None, ""))
    if least is None:
        return
    for field, word, version in _cuda_builds(job, spec):
        if version < least:
            what = "serves builds" if "://" in word else "is a build"
            yield (f"{field}: {word} {what} for CUDA {version[0]}.{version[1]}, which has no code for {target.name}'s "
                   f"{model.upper()} GPUs (they need CUDA {least[0]}.{least[1]} or newer: {source}): install the "
                   "package's build for CUDA 12 (the wheelhouse's, with --no-index, where it has one), then remove this line")


# ------------------------------------------------------------------------------------ julia


def _julia_projects(job: _Job) -> Iterator[Tuple[str, str]]:
    """(field, project as the job names it) of each ``julia --project[=DIR]`` and JULIA_PROJECT."""
    for field, argv in job.commands:
        words = started(argv)
        if not words or words[0].split("/")[-1] != "julia":
            continue
        for word in words[1:]:
            if word == "--project" or word.startswith("--project="):
                yield field, word.partition("=")[2] or "@."
    if "JULIA_PROJECT" in job.variables:
        yield job.variables["JULIA_PROJECT"]


def _julia_why(move: _Move) -> str:
    old, new = move.versions()
    if move.minor_changed:
        return f"{new} does not use packages installed and precompiled for {old}"
    if move.files_shared:
        return (f"{move.target.name} sees the same depot ({move.source.name}'s file systems are shared with it), but "
                f"its packages were built and precompiled for {move.source.name}'s stack and CPUs")
    return f"{move.target.name}'s depot does not hold them"


def _julia_todos(job: _Job, move: _Move) -> Iterator[str]:
    """A project or a depot named in the job: on a cluster or version change; else julia's
    default environment, one folder per minor version: on a version change."""
    moved = move.cluster_changed or move.minor_changed
    projects = _first_fields(_julia_projects(job)) if moved else {}
    depot = job.variables.get("JULIA_DEPOT_PATH") if moved else None
    for project, field in projects.items():
        yield _project_todo(field, project, depot, move)
    if depot and not projects:
        yield _depot_todo(depot, move)
    if not projects and not depot and (move.minor_changed or move.home_left_behind):
        yield _julia_default_todo(move)


def _project_todo(field: str, project: str, depot: Optional[Tuple[str, str]], move: _Move) -> str:
    old, new = move.versions()
    option = "--project" if project == "@." else f"--project={project}"
    where = f"the depot {depot[1]} (JULIA_DEPOT_PATH)" if depot else "the depot (~/.julia)"
    same = " with the same JULIA_DEPOT_PATH" if depot else ""
    return (f"{field}: julia {option}: the project's packages were installed and precompiled in {where} under {old}"
            f"{move.old_stack} on {move.source.name}, and {_julia_why(move)}: instantiate the project on {move.target.name} "
            f"under {new}{move.stack} (module load {move.new}; julia {option} -e 'using Pkg; Pkg.instantiate(); "
            f"Pkg.precompile()'{same}), then remove this line")


def _depot_todo(depot: Tuple[str, str], move: _Move) -> str:
    old, new = move.versions()
    was, now = f"environments/v{_minor(move.old) or 'X.Y'}", f"environments/v{_minor(move.new) or 'X.Y'}"
    return (f"{depot[0]}: {depot[1]} holds packages installed under {old}{move.old_stack} on {move.source.name}, in its "
            f"{was}, and {_julia_why(move)}: install them again on {move.target.name} under {new}{move.stack} (module "
            f"load {move.new}; copy {was} to {now}; julia -e 'using Pkg; Pkg.instantiate(); Pkg.precompile()' with the same "
            "JULIA_DEPOT_PATH), then remove this line")


def _julia_default_todo(move: _Move) -> str:
    old, new = move.versions()
    folder = f"~/.julia/environments/v{_minor(move.old)}" if _minor(move.old) else "~/.julia/environments"
    why, where = _default_folder_lost(move, f"packages added under {old}", folder, "one folder per minor version")
    return (f"environment.modules: {why}: add them again{where} under {new}{move.stack} (module load "
            f"{move.new}; julia -e 'using Pkg; Pkg.add([...])'), or give the job a project (julia --project=DIR), then remove "
            "this line")


def _default_folder_lost(move: _Move, packages: str, folder: str, per_version: str) -> Tuple[str, str]:
    """Why ``packages`` in a default ``folder`` are not found after ``move`` (the new version reads
    another folder, or the new cluster does not mount the old home), and where to install them."""
    _, new = move.versions()
    if move.minor_changed:
        return f"{move.old} became {move.new}: {packages} are in {folder}, which {new} does not read ({per_version})", ""
    return (f"{packages} on {move.source.name} are in {folder} of {move.source.name}'s home, which {move.target.name} "
            f"does not mount", f" on {move.target.name}")


# ---------------------------------------------------------------------------------------- R


def _r_libraries(job: _Job) -> Iterator[Tuple[str, str]]:
    """(field, folder) of each user library the job names: R_LIBS, R_LIBS_USER, ``.libPaths("DIR")``."""
    for name in R_LIBRARY_VARIABLES:
        if name in job.variables:
            yield job.variables[name]
    for field, argv in job.commands:
        for word in argv:
            for folder in LIB_PATHS.findall(word):
                yield field, folder


def _loaded(move: _Move) -> str:
    return f"module load {move.new}; " if move.new else ""


def _r_why(move: _Move) -> str:
    if move.minor_changed:
        return "R packages work only with the R minor version and the stack they were built for"
    if move.files_shared:
        return (f"{move.target.name} sees the same folder ({move.source.name}'s file systems are shared with it), but "
                "packages with compiled code work only with the stack and CPUs they were built for")
    return (f"{move.target.name} does not have that folder, and packages with compiled code work only with the stack and "
            "CPUs they were built for")


#: R code that loads a package of the user's library: library(x), require(x), x::f
_R_PACKAGE = re.compile(r"\b(library|require|requireNamespace|loadNamespace)\s*\(|\w::")


def _may_load_packages(job: _Job) -> bool:
    """Whether the job's R may load packages of the user's library: not where every R it runs is
    ``Rscript -e CODE`` (or ``R -e``) whose code loads none (base R needs no library)."""
    runs = [argv for _, argv in job.commands if argv and posixpath.basename(argv[0]) in ("Rscript", "R")]
    inline = [argv[argv.index("-e") + 1] for argv in runs if "-e" in argv[:-1]]
    return not runs or len(inline) < len(runs) or any(_R_PACKAGE.search(code) for code in inline)


def _runs_r(job: _Job, move: _Move) -> bool:
    """Whether the job loads an R module or runs R (Rscript, R): else it has no R packages to lose."""
    return bool(move.old) or any(argv and posixpath.basename(argv[0]) in ("Rscript", "R") for _, argv in job.commands)


def _r_todos(job: _Job, move: _Move) -> Iterator[str]:
    """A user library the job names: on a cluster or version change; else R's default library,
    one folder per minor version: on a version change."""
    old, new = move.versions()
    libraries = _first_fields(_r_libraries(job))
    if libraries and (move.cluster_changed or move.minor_changed):
        for folder, field in libraries.items():
            yield (f"{field}: {folder} holds R packages installed under {old}{move.old_stack} on {move.source.name}; "
                   f"{_r_why(move)}: install them again for {move.target.name} under {new}{move.stack}, into a folder of "
                   f"their own ({_loaded(move)}R -e 'install.packages(...)'), then remove this line")
    elif not libraries and (move.minor_changed or move.home_left_behind and _runs_r(job, move)) and _may_load_packages(job):
        folder = f"{R_DEFAULT_LIBRARY}/{_minor(move.old)}" if _minor(move.old) else R_DEFAULT_LIBRARY
        why, where = _default_folder_lost(move, f"R packages installed under {old}", folder,
                                          "the library folder is per minor version")
        yield (f"environment.modules: {why}: install them again{where} under {new}{move.stack} ({_loaded(move)}"
               "R -e 'install.packages(...)'), then remove this line")
