"""Module lines a spec keeps as written, checked against a cluster's stack wherever they are.

``environment.modules`` is rewritten by ``port`` and checked by ``check`` (modulecat.py). The
other module lines are not rewritten: a ``module load`` in an ``if``, a loop or a function of
``environment.setup`` or ``launch.shell``, and those of a file the job sources (``source
./old_env.sh``, ``. ~/env.sh``) that exists on the submit host. Each that would not load on the
cluster (an old StdEnv, another site's own stack, a version the catalogue lacks) is a to-do of
the ported spec and a warning of ``check``, from the same function: what port leaves to the user,
check keeps reporting until it is changed. A sourced file is read, never run; its path is taken
from the script's folder (import) or the spec's (port, check), and one that names a variable other
than ``$HOME`` is not followed (its value on the node is unknown here).
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any, Iterator, List, Optional, Sequence, Tuple

from slurmkit.core.records import Record
from slurmkit.port import bashtree
from slurmkit.port.cluster_branches import Values, none_run, values_on, walk_run
from slurmkit.sites.modulecat import catalogue_checks
from slurmkit.sites.profiles import SiteProfile

#: Module stacks of one site that the Alliance stack elsewhere replaces (Niagara's NiaEnv and
#: Mist's MistEnv were retired with them; CCEnv and arch/* only switched Niagara to it).
SITE_STACK_MODULES = re.compile(r"^(NiaEnv|MistEnv|CCEnv|arch)(/|$)")

#: A sourced file larger than this is not read (an environment file is a few lines).
MAX_SOURCED_BYTES = 256 * 1024


class ModuleLine(Record):
    """One module command that would not load on a cluster: ``field`` the spec field that runs
    it, ``command`` and ``line`` the command as written and its line (in ``sourced``, the file the
    field's ``via`` command reads, where it is there), ``problems`` why it would not load."""

    field: str
    command: str
    line: int
    problems: Tuple[str, ...]
    sourced: str = ""
    via: str = ""


def shell_fields(setup: Sequence[str], shell: Optional[str], command: Any = None) -> List[Tuple[str, str]]:
    """(field, text) of a spec's shell lines kept as written: environment.setup and launch.shell;
    and launch.command (words, or the text the spec holds), whose pipeline files are read."""
    found = [(f"environment.setup[{i}]", line) for i, line in enumerate(setup)]
    if command and not isinstance(command, str):
        command = shlex.join(str(word) for word in command)
    return found + ([("launch.shell", str(shell))] if shell else []) + ([("launch.command", str(command))] if command else [])


def module_problem(target: SiteProfile, module: str, own_folder: bool) -> Optional[str]:
    """Why ``module``, loaded as written, would not load on ``target``; None where it would (or
    cannot be told: after ``module use`` a module may come from the user's own folder, so only
    StdEnv and the site stacks are judged then)."""
    stdenv = target.software.stdenv
    if "$" in module or "`" in module:
        return (f"{module} is named through a variable whose value slurmkit cannot tell: check that it loads on {target.name} "
                f"('module spider {module.partition('/')[0]}')")
    if SITE_STACK_MODULES.match(module):
        return f"{module} is one site's own module stack, which {target.name} does not have"
    if module.startswith("StdEnv/"):
        return f"{module} is not {target.name}'s standard environment, {stdenv}" if stdenv and module != stdenv else None
    if own_folder:
        return None
    check = next(iter(catalogue_checks(target, [module])), None)
    if check is not None:
        return check.why or check.warning
    family, _, version = module.partition("/")
    usual = target.software.modules.get(family)
    if version and usual and not (usual + ".").startswith(module + "."):
        return f"{target.name}'s profile names {usual} (check {module} with 'module spider {module}')"
    return None


def module_line_problems(target: SiteProfile, fields: Sequence[Tuple[str, str]], folder: Optional[Path]) -> List[ModuleLine]:
    """Each module command of ``fields`` (and of the files they source, found from ``folder``;
    none without one) that would not load on ``target``, in the order the job runs them."""
    found: List[ModuleLine] = []
    own_folder = False
    whole = bashtree.parse("\n".join(text for _, text in fields)).statements
    values = values_on(whole, target.detect.cc_cluster)
    known = bashtree.known_values(whole)   # PYV=3.8 ... python/$PYV
    for field, text in fields:
        found.extend(_not_run(field, bashtree.parse(text).statements, values, target.name))
        found.extend(_pipeline_lines(target, field, text, folder, values))
        for command, sourced, via in _module_commands(text, folder, values):
            own_folder = own_folder or command.argv[1:2] == ["use"]
            problems = tuple(p for m in bashtree.loaded_modules(command.argv) or []
                             for p in [module_problem(target, bashtree.substituted(m, known), own_folder)] if p)
            if problems:
                found.append(ModuleLine(field, command.text, command.line, problems, sourced, via))
    return sorted(found, key=lambda line: (line.field, line.line))


def _module_commands(text: str, folder: Optional[Path], values: Values) -> Iterator[Tuple[bashtree.Command, str, str]]:
    """(module command, the sourced file it is in or "", the source command) of ``text``, in
    order, but for those in an if's branch that does not run where the variables have ``values``."""
    for command in walk_run(bashtree.parse(text).statements, values):
        if command.name in ("module", "ml"):
            yield command, "", ""
        elif command.name in ("source", ".") and len(command.argv) > 1 and folder is not None:
            inner = _sourced_text(command.argv[1], folder)
            if inner is not None:
                for sourced in walk_run(bashtree.parse(inner).statements, values):
                    if sourced.name in ("module", "ml"):
                        yield sourced, command.argv[1], command.text


#: a workflow manager whose pipeline, in a file of its own, loads modules in the jobs it submits:
#: Nextflow's ``module 'java/1.8.0_121'`` (colon-separated: ``'a:b'``), Snakemake's ``envmodules:``
_PIPELINE_MODULE = {"nextflow": re.compile(r"^\s*module\s*(?:=\s*)?['\"]([^'\"]+)['\"]", re.M),
                    "snakemake": re.compile(r"^\s*envmodules\s*:\s*((?:\s*['\"][^'\"\n]+['\"]\s*,?)+)", re.M)}


def _pipeline_files(command: bashtree.Command, folder: Path) -> List[str]:
    """The files of the pipeline ``command`` runs that are beside the spec: the ``.nf`` it names and
    nextflow.config; the Snakefile (``-s FILE``, else ./Snakefile)."""
    words = command.argv[1:]
    if command.name == "nextflow":
        named = [w for w in words if w.endswith(".nf")] + ["nextflow.config"]
    else:
        named = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-s", "--snakefile")] or ["Snakefile"]
    return [name for name in named if _sourced_text(name, folder) is not None]


def unread_pipelines(fields: Sequence[Tuple[str, str]], folder: Optional[Path]) -> List[Tuple[str, str]]:
    """(field, command) of each workflow manager run whose pipeline file is not beside the spec:
    the modules, account and queue it gives its jobs cannot be checked."""
    return [(field, command.text) for field, text in fields for command in bashtree.walk(bashtree.parse(text).statements)
            if command.name in _PIPELINE_MODULE and (folder is None or not _pipeline_files(command, folder))]


def _pipeline_lines(target: SiteProfile, field: str, text: str, folder: Optional[Path], values: Values) -> Iterator[ModuleLine]:
    """The modules a pipeline file pins that would not load on ``target``: its jobs load them."""
    if folder is None:
        return
    for command in walk_run(bashtree.parse(text).statements, values):
        if command.name not in _PIPELINE_MODULE:
            continue
        for name in _pipeline_files(command, folder):
            pipeline = _sourced_text(name, folder) or ""
            for found in _PIPELINE_MODULE[command.name].finditer(pipeline):
                modules = [m for part in re.findall(r"['\"]([^'\"]+)['\"]", found.group(0)) or [found.group(1)]
                           for m in part.split(":") if m.strip()]
                problems = tuple(p for m in modules for p in [module_problem(target, m.strip(), False)] if p)
                if problems:
                    line = pipeline.count("\n", 0, found.start(1)) + 1
                    yield ModuleLine(field, found.group(0).strip().splitlines()[0], line, problems, name, command.text)


def _not_run(field: str, statements: Sequence[bashtree.Statement], values: Values, cluster: str) -> Iterator[ModuleLine]:
    """An if that loads modules in branches none of which runs on ``cluster`` (each tests
    ``$CC_CLUSTER`` for another cluster): there the job goes on without those modules."""
    for block, commands in none_run(statements, values):
        loaded = list(dict.fromkeys(m for c in commands for m in bashtree.loaded_modules(c.argv) or []))
        if loaded:
            first = block.text.splitlines()[0].strip()
            yield ModuleLine(field, first, block.line, (
                f"no branch of it runs on {cluster} ($CC_CLUSTER is {' or '.join(values['CC_CLUSTER'])} there), so the "
                f"modules it loads on other clusters ({' '.join(loaded)}) are not loaded",))


def _sourced_text(word: str, folder: Path) -> Optional[str]:
    """The text of the file ``source WORD`` reads, where it exists on this host; else None."""
    spelled = re.sub(r"^\$\{?HOME\}?(?=/)", "~", word)
    if "$" in spelled or "`" in spelled or spelled.endswith("bin/activate"):
        return None
    path = Path(os.path.expanduser(spelled))
    path = path if path.is_absolute() else folder / path
    try:
        if not path.is_file() or path.stat().st_size > MAX_SOURCED_BYTES:
            return None
        return path.read_text(errors="replace")
    except OSError:
        return None


def port_todo(line: ModuleLine, target: str) -> str:
    """The to-do port writes for ``line``: slurmkit rewrites neither a kept line nor the user's file."""
    problems = "; ".join(line.problems)
    if line.sourced:
        return (f"{line.field}: `{line.via}` reads {line.sourced}, whose line {line.line} `{line.command}` would not load on "
                f"{target}: {problems}; slurmkit does not rewrite your file: change it for {target}, then remove this line")
    return (f"{line.field}: `{line.command}` (its line {line.line}) is kept as written, and port does not rewrite it: "
            f"{problems}; change it for {target}, then remove this line")


def check_message(line: ModuleLine, target: str) -> str:
    """What ``check`` says of ``line``, until it is changed."""
    problems = "; ".join(line.problems)
    if line.sourced:
        return f"`{line.via}` reads {line.sourced}, whose line {line.line} `{line.command}` would not load on {target}: {problems}"
    return f"`{line.command}` (its line {line.line}) would not load on {target}: {problems}"


def import_todos(spec: dict, folder: Path) -> List[str]:
    """The to-dos of an imported spec (as a mapping) for module lines that would not load on its
    cluster, with sourced files read from ``folder``, the script's. None on a retired cluster,
    whose old stack the profile does not hold (port to its successor judges them)."""
    from slurmkit.sites.profiles import load_profile

    if not spec.get("profile"):
        return []
    profile = load_profile(spec["profile"])
    if profile.is_retired:
        return []
    environment, launch = spec.get("environment") or {}, spec.get("launch")
    fields = shell_fields(environment.get("setup") or [], launch.get("shell") if isinstance(launch, dict) else None,
                          launch.get("command") if isinstance(launch, dict) else launch)
    return [port_todo(line, profile.name).replace("port does not", "slurmkit does not")
            for line in module_line_problems(profile, fields, folder)]


def with_module_line_todos(imported: Any, folder: Path) -> Any:
    """The import (porting.Imported), with a "to do" note for each kept module line (an if, a
    loop, a file it sources beside the script) that would not load on the cluster."""
    from slurmkit.port.porting import Note

    return imported._replace(notes=imported.notes + tuple(Note(0, "", "to do", todo) for todo in import_todos(imported.spec, folder)))
