"""Paths on the submit host's file systems, as users write them: ``~/data.tar``, ``$SCRATCH/runs``.

A stage input's ``from``, an output's ``to`` and the checkpoint's ``to`` mean in the job what
the user's shell would make of them: ``~`` (alone, or before ``/``) is ``$HOME``; ``$NAME`` and
``${NAME}`` expand when the job runs (``$HOME``, ``$USER``, ``$SCRATCH``, ``$PROJECT``, or any
other, as in the command: sbatch passes the submitting shell's variables to the job); ``$$`` is
a literal ``$``. A path that starts with ``/``, ``~`` or a variable stands on its own; any other
is relative to the spec's folder, ``$SLURM_SUBMIT_DIR``, where slurmkit runs sbatch.
"""

import os
import re
from pathlib import Path
from typing import Mapping, Optional

_VARIABLE = r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)"
_LEADING_VARIABLE = r"\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_])"


def with_home(path: str) -> str:
    """``~`` and ``~/...`` as ``$HOME`` and ``$HOME/...`` (``~user`` is left as written)."""
    return "$HOME" + path[1:] if path == "~" or path.startswith("~/") else path


def stands_alone(path: str) -> bool:
    """Whether ``path`` names its place without the spec's folder: ``/...``, ``~``, ``$VAR/...``."""
    path = with_home(path)
    return path.startswith("/") or bool(re.match(_LEADING_VARIABLE, path))


def in_job(path: str) -> str:
    """``path`` as a word of the plan (rendered by the ``word`` filter, which expands ``$NAME``
    and keeps ``$$`` a literal ``$``)."""
    path = with_home(path)
    return path if stands_alone(path) else "$SLURM_SUBMIT_DIR/" + path


def on_submit_host(path: str, base: Path, env: Optional[Mapping[str, str]] = None) -> Optional[Path]:
    """Where ``path`` is here and now, for looking at what will be staged; None when it reads a
    variable this shell does not set (the job may still have it)."""
    env = os.environ if env is None else env
    unset = []

    def value(match) -> str:
        if match.group() == "$$":
            return "$"
        name = match.group(1) or match.group(2)
        if name not in env:
            unset.append(name)
            return ""
        return env[name]

    text = re.sub(_VARIABLE, value, with_home(path))
    if unset:
        return None
    return examinable(Path(text) if stands_alone(path) else Path(base) / text)


def examinable(path: Path) -> Optional[Path]:
    """``path`` if this host can say whether it is there, else None: a name too long for this
    host, a loop of links or a folder it may not read leave the question to the node, rather
    than end ``check`` with an OSError from ``is_file()``."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        pass               # not there: what the callers look for
    except (OSError, ValueError):
        return None
    return path


_OTHER_HOME = re.compile(r"~[^/]+")


def other_users_home(path: Optional[str]) -> bool:
    """Whether ``path`` starts ``~user`` (another user's home folder, by name)."""
    return path is not None and bool(_OTHER_HOME.match(path))


def path_fields(spec):
    """(field, path) of every spec field that names a place on the cluster's file systems."""
    env = spec.environment
    if env.venv is not None:
        yield "environment.venv.path", env.venv.path
        yield "environment.venv.requirements", env.venv.requirements
    yield "environment.build_cache", env.build_cache
    if env.nccl is not None:
        yield "environment.builds.nccl", env.nccl.path
    if spec.tasks is not None:
        yield f"tasks.{spec.tasks.lines}", spec.tasks.file
    stage = spec.stage
    if stage is not None:
        for index, item in enumerate(stage.inputs):
            yield f"stage.inputs.{index}.from", item.source
        for index, item in enumerate(stage.outputs):
            yield f"stage.outputs.{index}.to", item.to
        if stage.checkpoint is not None:
            yield "stage.checkpoint.to", stage.checkpoint.to


def other_home_findings(spec):
    """An error for each path that starts ``~user``: the job's shell would expand it to that
    user's home on the cluster, which slurmkit cannot know here (nor check, nor compare with
    other paths); ``~`` alone (your own home) is fine. And for each path with a shell form
    slurmkit does not expand (``${HOME:-/x}``, ``$(pwd)``, a backquote, ``$1``): it would stay
    literal text, a folder named ``${HOME:-`` under the spec's. (level, field, message) tuples."""
    for field, path in path_fields(spec):
        form = unexpanded_form(path) if path else None
        if form:
            yield ("error", field, f"{path!r}: {form} is not expanded in a path, only $NAME and ${{NAME}} are (and $$ for a "
                                   "literal $): write the value it stands for")
        elif other_users_home(path):
            user = path[1:].split("/", 1)[0]
            yield ("error", field, f"{path!r}: ~{user} (another user's home) is not expanded: slurmkit cannot know "
                                   f"where it is on the cluster; write the full path (e.g. /home/{user}/...), or ~/... for your own")


def unexpanded_form(path: str) -> Optional[str]:
    """The first piece of shell in ``path`` that is neither ``$NAME``, ``${NAME}`` nor ``$$``."""
    rest = re.sub(_VARIABLE, "", path)
    found = re.search(r"\$\{[^}]*\}?|\$\([^)]*\)?|\$.?|`[^`]*`?", rest)
    return found.group() if found else None


_SUBMIT_DIR = re.compile(r"^(\$PWD|\$\{PWD\}|\$SLURM_SUBMIT_DIR|\$\{SLURM_SUBMIT_DIR\})(/|$)")
_BRACED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def comparable(path: str) -> str:
    """``path`` spelled one way, to compare destinations: ``~`` is ``$HOME``, ``${NAME}`` is
    ``$NAME``, the spec's folder (``$PWD``, ``$SLURM_SUBMIT_DIR``, where slurmkit runs sbatch)
    is left out of a path that starts with it, and the rest normalised (``a/./b/`` is ``a/b``)."""
    import posixpath

    text = _BRACED.sub(r"$\1", with_home(path))
    text = _SUBMIT_DIR.sub("", text) or "."
    return posixpath.normpath(text)
