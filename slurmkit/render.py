"""Plan -> sbatch script text, through Jinja templates that only format.

Every value a user wrote reaches the script through one of two filters: ``quote`` (a literal
shell word, shlex.quote) or ``word`` (a double-quoted word in which only ``$NAME``/``${NAME}``
expand, so that ``--data $SLURM_TMPDIR/data`` works while ``$(...)`` and backticks stay text).
The same plan always gives the same bytes.
"""

import re
import shlex
from pathlib import Path
from typing import Iterable, Optional, Sequence

from .plan import Plan

#: What shell_word expands (``$NAME``, ``${NAME}``) and ``$$``, a literal ``$``; reads.py reads the same.
REFERENCE = re.compile(r"\$\$|\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*")
_ESCAPE_IN_DOUBLE_QUOTES = str.maketrans({"\\": "\\\\", '"': '\\"', "`": "\\`", "$": "\\$"})


def shell_word(text: str) -> str:
    """Render ``text`` as one shell word: ``$NAME`` and ``${NAME}`` expand, ``$$`` is a literal ``$``.

    Everything else is literal, whatever it contains (quotes, ``$(...)``, backticks, newlines).
    """
    parts, position = [], 0
    for match in REFERENCE.finditer(text):
        parts.append(text[position:match.start()].translate(_ESCAPE_IN_DOUBLE_QUOTES))
        token = match.group()
        parts.append("\\$" if token == "$$" else "${" + token.strip("${}") + "}")
        position = match.end()
    parts.append(text[position:].translate(_ESCAPE_IN_DOUBLE_QUOTES))
    body = "".join(parts)
    if re.fullmatch(r"[A-Za-z0-9_./:=+,@%-]+", body) and body == text:
        return text  # nothing to protect: keep scripts readable
    return f'"{body}"'


def quote(value) -> str:
    return shlex.quote(str(value))


def quote_all(values: Iterable) -> str:
    return " ".join(shlex.quote(str(v)) for v in values)


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")


def words(values: Iterable[str]) -> str:
    """A command line; a first word like ``A=1`` is quoted so that bash runs it, not assigns it."""
    rendered = [shell_word(v) for v in values]
    if rendered and _ASSIGNMENT.match(rendered[0]):
        rendered[0] = f'"{rendered[0]}"'
    return " ".join(rendered)


def template_search_path(extra: Sequence[Path] = ()) -> list:
    """User templates first (``./templates``, then ``$XDG_CONFIG_HOME/slurmkit/templates``), bundled last."""
    from .bundled import templates_dir, user_config_dir

    return [*extra, Path.cwd() / "templates", user_config_dir() / "templates", templates_dir()]


def _bytecode_cache():
    """Compiled templates kept in ``$XDG_CACHE_HOME/slurmkit/jinja``: compiling them is most
    of a render's own cost (bench/startup.py). Jinja keys entries by template source, so an
    edited template is recompiled; an unwritable cache folder only means no cache."""
    import os

    import jinja2

    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(root, "slurmkit", "jinja")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(folder) if os.access(folder, os.W_OK) else None


def _environment(search_path: Sequence[Path]):
    import jinja2

    env = jinja2.Environment(
        bytecode_cache=_bytecode_cache(),
        loader=jinja2.FileSystemLoader([str(p) for p in search_path]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters.update(quote=quote, quote_all=quote_all, word=shell_word, words=words)
    return env


def render(plan: Plan, search_path: Optional[Sequence[Path]] = None) -> str:
    """The sbatch script for ``plan``: the template named after its kind, on the search path."""
    env = _environment(search_path if search_path is not None else template_search_path())
    return env.get_template(f"{plan.kind}.sbatch.j2").render(plan=plan)


def render_setup(plan: Plan, search_path: Optional[Sequence[Path]] = None) -> str:
    """The environment, module and virtualenv part of ``plan``'s script (templates/setup.sh.j2)."""
    env = _environment(search_path if search_path is not None else template_search_path())
    return env.get_template("setup.sh.j2").render(plan=plan)
