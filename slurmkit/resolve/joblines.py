"""Site rules about what a job's own lines do (its command and setup), read as words the way
downloads.py reads them: a compiler flag that builds for the CPU the job happens to compile on
(rules.host_cpu_flags: Narval's -xHost and -march=native), and a library preloaded that takes
effect only under one launcher (rules.preload_launcher: Trillium's VAST MPI-IO preload, mpirun), and a Python virtual
environment made where the site says it may be partly deleted (rules.venv_not_under: $SCRATCH),
a GPU profiler run where the site cannot profile GPUs, or only with DCGM disabled
(rules.gpu_profiling), and a setup line that sets PYTHONPATH or loads a module once a virtual
environment is active (rules.python_env), and a GPU graphics API (OpenGL, EGL, Vulkan) used on
a MIG instance, which offers none (rules.mig_no_graphics); and Lustre's own command (``lfs
setstripe``, ``lfs quota``) where the cluster's shared file systems are not Lustre (the profile's
storage.filesystem: Nibi's and Trillium's are VAST).

All are warnings: the job runs, slower than the site's page says it could, or (an Intel -x<code>
build on AMD CPUs) stops at its first instruction, which slurmkit cannot see before it runs.
"""

from __future__ import annotations

import fnmatch
import re
from typing import List, Sequence, Tuple

from slurmkit.core.findings import Finding
from slurmkit.core.shellwords import commands, raw_words
from slurmkit.sites.profiles import SiteProfile

#: Programs that compile (and the MPI wrappers around them): their flags are what is built.
COMPILERS = ("cc", "c++", "gcc", "g++", "gfortran", "clang", "clang++", "flang", "icc", "icpc", "ifort", "icx", "icpx", "ifx",
             "nvcc", "nvc", "nvc++", "nvfortran", "mpicc", "mpicxx", "mpic++", "mpif77", "mpif90", "mpifort", "mpiicc",
             "mpiicpc", "mpiifort")


def _source(urls: Sequence[str]) -> str:
    return f" (source: {urls[0]})" if urls else ""


def _places(spec) -> List[Tuple[str, Sequence[str]]]:
    command = (spec.launch.shell,) if spec.launch.shell else (" ".join(spec.launch.command),)
    return [("launch.shell" if spec.launch.shell else "launch.command", command), ("environment.setup", spec.environment.setup)]


def _unquoted(word: str) -> str:
    return word.replace("'", "").replace('"', "")


def _build_flags(piece: str) -> List[str]:
    """The flags a command compiles with: a compiler's own words, and the words of a
    ``*FLAGS=`` assignment (``export CFLAGS="-O3 -march=native"``, ``cmake -DCMAKE_C_FLAGS=...``)."""
    words = [_unquoted(w) for w in raw_words(piece)]
    flags = []
    for word in words:
        name, equals, value = word.partition("=")
        if equals and name.lstrip("-D").upper().endswith("FLAGS"):
            flags += value.split()
    while words and "=" in words[0] and not words[0].startswith("-"):
        words = words[1:]
    if words and words[0].rsplit("/", 1)[-1] in COMPILERS:
        flags += words[1:]
    return flags


def host_cpu_flag_findings(spec, profile: SiteProfile) -> List[Finding]:
    """A warning for each compiler flag of the job's lines that builds for the host's CPU where
    the site says such builds run badly or not at all (rules.host_cpu_flags)."""
    rule = profile.rules.host_cpu_flags
    if rule is None:
        return []
    instead = f"; build with {rule.instead} instead" if rule.instead else ""
    findings = []
    for field, lines in _places(spec):
        for line in lines:
            for piece in commands(line):
                bad = [f for f in _build_flags(piece) if any(fnmatch.fnmatchcase(f, p) for p in rule.flags)]
                findings += [Finding("warning", field, f"{flag!r} builds for the CPU the job compiles on: on {profile.name} it "
                                     f"gives code that runs as on the oldest CPUs, or (an Intel -x<code> build) does not run "
                                     f"at all{instead}{_source(rule.source)}") for flag in dict.fromkeys(bad)]
    return findings


def preload_launcher_findings(spec, profile: SiteProfile, launcher: str) -> List[Finding]:
    """A warning where the job's setup preloads a library the site says takes effect only under
    another launcher than the job's (rules.preload_launcher)."""
    rule = profile.rules.preload_launcher
    if rule is None or not launcher or launcher == rule.launcher:
        return []
    for field, lines in _places(spec):
        if any(rule.preload in word for line in lines for piece in commands(line) for word in raw_words(piece)):
            return [Finding("warning", field, f"the job preloads {rule.preload}, which takes effect only under {rule.launcher}, "
                            f"but it runs its command with {launcher}: set 'launch.launcher: {rule.launcher}', or leave the "
                            f"preload out{_source(rule.source)}")]
    return []


_PYTHON = re.compile(r"^python3?(?:\.\d+)?$")


def _made_venvs(piece: str) -> List[str]:
    """The folder a ``virtualenv DIR`` or ``python -m venv DIR`` command makes (its last word
    that is not an option), or nothing."""
    words = [_unquoted(w) for w in raw_words(piece)]
    while words and "=" in words[0] and not words[0].startswith("-"):
        words = words[1:]
    program = words[0].rsplit("/", 1)[-1] if words else ""
    if program == "virtualenv":
        arguments = words[1:]
    elif _PYTHON.match(program) and words[1:3] in (["-m", "venv"], ["-m", "virtualenv"]):
        arguments = words[3:]
    else:
        return []
    return [w for w in arguments if not w.startswith("-")][-1:]


def _under(path: str, prefixes: Sequence[str]) -> str:
    """The prefix (``$SCRATCH``, also written ``${SCRATCH}``) that ``path`` is in, or ''."""
    for prefix in prefixes:
        for form in (prefix, "${" + prefix[1:] + "}") if prefix.startswith("$") else (prefix,):
            if path == form or path.startswith(form.rstrip("/") + "/"):
                return prefix
    return ""


def venv_place_findings(spec, profile: SiteProfile) -> List[Finding]:
    """A warning for a virtual environment the job makes or uses under a folder the site says
    not to put one in (rules.venv_not_under: $SCRATCH, whose purge may delete part of it)."""
    rule = profile.rules.venv_not_under
    if rule is None:
        return []
    venv = spec.environment.venv
    places = [("environment.venv.path", venv.path)] if venv and venv.path else []
    places += [("environment.setup", path) for line in spec.environment.setup for piece in commands(line)
               for path in _made_venvs(piece)]
    return [Finding("warning", field, f"{path}: a virtual environment under {under} may get partially deleted, "
                    f"and then fails in a later job; make it in $HOME or the project space, or let slurmkit build it "
                    f"in $SLURM_TMPDIR (no environment.venv.path){_source(rule.source)}")
            for field, path in places for under in [_under(path, rule.paths)] if under]


#: NVIDIA's GPU profilers, as a job runs them.
PROFILERS = ("nsys", "ncu", "nvprof", "nv-nsight-cu-cli")
#: The wait the site's page gives, for a job's setup, until DCGM is off on the node.
DCGM_WAIT = "while [ -n \"$(dcgmi -v | grep 'Hostengine build info:')\" ]; do sleep 5; done"


def _profiler(spec) -> Tuple[str, str]:
    """(field, profiler) of the first GPU profiler the job's lines run, or ('', '')."""
    for field, lines in _places(spec):
        for line in lines:
            for piece in commands(line):
                words = [_unquoted(w) for w in raw_words(piece)]
                found = next((w.rsplit("/", 1)[-1] for w in words if w.rsplit("/", 1)[-1] in PROFILERS), "")
                if found:
                    return field, found
    return "", ""


def gpu_profiling_findings(spec, profile: SiteProfile) -> List[Finding]:
    """A warning for a GPU job that runs a profiler where the site's GPUs cannot be profiled, or
    can only once DCGM is disabled at submission (said unless the setup already waits for it)."""
    rule = profile.rules.gpu_profiling
    if rule is None or not spec.resources.gpus:
        return []
    field, profiler = _profiler(spec)
    if not profiler:
        return []
    if not rule.available:
        return [Finding("warning", field, f"{profiler} profiles GPUs, which is not available on {profile.name} yet: profile on a "
                        f"cluster that allows it{_source(rule.source)}")]
    if not rule.disable_dcgm or any("dcgmi" in line for line in spec.environment.setup):
        return []
    return [Finding("warning", field, f"{profiler} profiles GPUs, which {profile.name} allows only with DCGM disabled: submit "
                    f"with DISABLE_DCGM=1 set (DISABLE_DCGM=1 slurmkit submit ...), and add to environment.setup the wait "
                    f"until it is off: {DCGM_WAIT}{_source(rule.source)}")]


#: What shows that a job draws with a GPU graphics API (OpenGL through GLX or EGL, Vulkan), which
#: a MIG instance does not offer: the commands that need one, and the variables that pick one
#: (MUJOCO_GL=egl does, MUJOCO_GL=osmesa renders on the CPU and does not).
GRAPHICS_COMMANDS = ("vglrun", "glxinfo", "glxgears", "eglinfo", "vulkaninfo", "vkcube")
GRAPHICS_VARIABLES = {"MUJOCO_GL": ("egl", "glfw"), "PYOPENGL_PLATFORM": ("egl",), "PYGLET_HEADLESS": ("1", "true"),
                      "__GLX_VENDOR_LIBRARY_NAME": ("nvidia",), "__EGL_VENDOR_LIBRARY_FILENAMES": (),
                      "VK_ICD_FILENAMES": (), "VK_DRIVER_FILES": ()}


def _graphics_word(word: str) -> str:
    """``word`` if it runs or selects a GPU graphics API (GRAPHICS_*), else ''."""
    name, equals, value = _unquoted(word).partition("=")
    if not equals:
        return word if name.rsplit("/", 1)[-1] in GRAPHICS_COMMANDS else ""
    wanted = GRAPHICS_VARIABLES.get(name)
    return word if wanted is not None and (not wanted or value.lower() in wanted) else ""


def _graphics_use(spec) -> Tuple[str, str]:
    """(field, word) of the first command or variable of the job that uses a GPU graphics API."""
    for name, value in spec.environment.variables:
        if _graphics_word(f"{name}={value}"):
            return "environment.variables", f"{name}={value}"
    for field, lines in _places(spec):
        for line in lines:
            for piece in commands(line):
                found = next((w for w in raw_words(piece) if _graphics_word(w)), "")
                if found:
                    return field, _unquoted(found)
    return "", ""


def mig_graphics_findings(spec, profile: SiteProfile, mig: str) -> List[Finding]:
    """A warning for a job on the MIG instance ``mig`` ('' for none) whose lines use OpenGL, EGL or
    Vulkan (rules.mig_no_graphics): MIG instances offer no graphics API, so such a program fails
    there. Only what the spec shows is seen; a program that draws on its own is not."""
    rule = profile.rules.mig_no_graphics
    if rule is None or not mig:
        return []
    field, word = _graphics_use(spec)
    if not word:
        return []
    return [Finding("warning", field, f"{word} uses a GPU graphics API (OpenGL, EGL or Vulkan), which a MIG instance ({mig}) "
                    f"does not offer: ask for a whole GPU, or render on the CPU (e.g. MUJOCO_GL=osmesa){_source(rule.source)}")]


def _activates(piece: str) -> bool:
    words = [_unquoted(w) for w in raw_words(piece)]
    return len(words) > 1 and words[0] in ("source", ".") and words[1].endswith("/bin/activate")


def _loads_module(piece: str) -> bool:
    words = raw_words(piece)
    return (words[:2] == ["module", "load"] or words[:1] == ["ml"]) and len(words) > 1


def _sets_pythonpath(piece: str) -> bool:
    words = [w for w in raw_words(piece) if w not in ("export", "declare", "-x")]
    return any(w.startswith("PYTHONPATH=") for w in words)


def python_env_findings(spec, profile: SiteProfile) -> List[Finding]:
    """Warnings for a setup line that sets PYTHONPATH, or that loads a module while a virtual
    environment is active (the spec's venv, which the job activates before the setup lines, or
    one a setup line activated): the Python page's two causes of 'No module named X'."""
    rule = profile.rules.python_env
    if rule is None:
        return []
    active = "the job's virtual environment" if spec.environment.venv else ""
    findings = []
    for line in spec.environment.setup:
        for piece in commands(line):
            if _sets_pythonpath(piece):
                findings.append(Finding("warning", "environment.setup", f"'{piece}' sets PYTHONPATH, which the site lists as a "
                                        f"cause of 'No module named X' and asks jobs not to do: install the package into the "
                                        f"virtual environment instead{_source(rule.source)}"))
            elif _loads_module(piece) and active:
                findings.append(Finding("warning", "environment.setup", f"'{piece}' loads a module while {active} is active, "
                                        f"which the site lists as a cause of 'No module named X': list the module in "
                                        f"environment.modules, which are loaded before it{_source(rule.source)}"))
            active = active or ("the virtual environment it activates" if _activates(piece) else "")
    return findings


#: Lustre's own command: each of its subcommands (setstripe, getstripe, find, quota, df, ...) acts
#: on a Lustre file system, and other file systems have neither the command nor its striping.
LUSTRE_COMMAND = "lfs"
#: what comes before a command's name and is not it: shell keywords, and wrappers that run it
_BEFORE_COMMAND = ("if", "elif", "then", "else", "do", "while", "until", "!", "{", "(", "time", "command", "exec", "nohup")
#: commands that ask whether lfs is there: a line that asks first runs lfs only where it is
_ASKS_FOR = ("command", "type", "which", "hash")
#: the standard command that does an lfs subcommand's work on any file system (the rest just go)
_INSTEAD = {"find": "find", "df": "df"}


def _lines(spec) -> List[Tuple[str, str]]:
    """(field, text) of the job's shell lines, each set-up line by its index."""
    launch = ("launch.shell", spec.launch.shell) if spec.launch.shell else ("launch.command", " ".join(spec.launch.command))
    return [(f"environment.setup[{i}]", line) for i, line in enumerate(spec.environment.setup)] + [launch]


def _command_words(piece: str) -> List[str]:
    """The words of one command of a line, from its command's name (keywords, wrappers and
    ``VAR=value`` before it left out)."""
    words = [_unquoted(w) for w in raw_words(piece)]
    while words and (words[0] in _BEFORE_COMMAND or ("=" in words[0] and not words[0].startswith("-"))):
        words = words[1:]
    if words and words[0][:1] in "({" and len(words[0]) > 1:
        words[0] = words[0].lstrip("({")
    return words


def lustre_commands(text: str) -> List[str]:
    """The commands of shell ``text`` that run Lustre's lfs, as written; none where the text
    first asks whether lfs is there (``command -v lfs && lfs setstripe ...``)."""
    pieces = [piece for line in text.split("\n") for piece in commands(line)]
    found, asked = [], False
    for piece in pieces:
        words, written = _command_words(piece), [_unquoted(w) for w in raw_words(piece)]
        if words and words[0].rsplit("/", 1)[-1] == LUSTRE_COMMAND:
            found.append(piece)
        elif LUSTRE_COMMAND in written and set(_ASKS_FOR) & set(written[:written.index(LUSTRE_COMMAND)]):
            asked = True
    return [] if asked else found


def _lustre_advice(piece: str, filesystem: str) -> str:
    words = _command_words(piece)
    subcommand = words[1] if len(words) > 1 else ""
    instead = _INSTEAD.get(subcommand)
    if instead:
        return f"'{instead}' does what 'lfs {subcommand}' does on any file system (without Lustre's own options): use it instead"
    if subcommand == "quota":
        return ("'lfs quota' reads Lustre's quotas only: remove the lfs line (the cluster's storage documentation says how "
                "to see your quota)")
    return f"Lustre's striping means nothing on {filesystem}, which needs none: remove the lfs line"


def lustre_command_findings(spec, profile: SiteProfile) -> List[Finding]:
    """A warning for each command of the job's lines that runs Lustre's lfs (``lfs setstripe -c 8
    $OUT``) where the profile says the cluster's shared file systems are not Lustre. A job
    ported from a Lustre cluster kept the line; there lfs has no Lustre to act on, and where it is
    not installed the line fails (under errexit, the job stops). Port makes these its to-dos."""
    filesystem = profile.storage.filesystem
    if filesystem is None or filesystem.type == "lustre":
        return []
    name = filesystem.words()
    return [Finding("warning", field, f"'{piece}' runs Lustre's lfs, but {profile.name}'s shared file systems (/home, /project, "
                    f"/scratch) are {name}, not Lustre{_source(filesystem.source)}: lfs has nothing to act on there, and where "
                    f"it is not installed the line fails ('lfs: command not found'; with errexit the job stops). "
                    f"{_lustre_advice(piece, name)}")
            for field, text in _lines(spec) for piece in lustre_commands(text)]
