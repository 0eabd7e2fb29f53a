"""Plan -> sbatch script text, through Jinja templates that only format.

Every value a user wrote reaches the script through one of two filters: ``quote`` (a literal
shell word, shlex.quote) or ``word`` (a double-quoted word in which only ``$NAME``/``${NAME}``
expand, so that ``--data $SLURM_TMPDIR/data`` works while ``$(...)`` and backticks stay text);
pip's requirements go through ``requirements``, ``quote`` with a home folder that expands.
The same plan always gives the same bytes.

Templates are found in the current folder first (``./templates``), so a cloned repository's
templates run when slurmkit is used inside it. They run in Jinja's immutable sandbox: they
read the plan and format it, and cannot reach Python objects (``__class__``, ``__globals__``)
or change a list; a template that tries is one ``error:`` line naming its file and line.
"""

import re
import shlex
from pathlib import Path
from typing import Iterable, Optional, Sequence

from slurmkit.core.plan import Plan
from slurmkit.core.shellwords import REFERENCE

_ESCAPE_IN_DOUBLE_QUOTES = str.maketrans({"\\": "\\\\", '"': '\\"', "`": "\\`", "$": "\\$"})
#: bash's reserved words: an argument that is one (``stata -b do analysis.do``) is a plain word to
#: bash, but shellcheck (SC1010) and a reader take it for the keyword: it is written quoted
RESERVED_WORDS = frozenset(("!", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if", "in",
                            "select", "then", "until", "while", "time", "{", "}", "[[", "]]"))


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
    if re.fullmatch(r"[A-Za-z0-9_./:=+,@%-]+", body) and body == text and text not in RESERVED_WORDS:
        return text  # nothing to protect: keep scripts readable
    return f'"{body}"'


def quote(value) -> str:
    """shlex.quote, and a word that starts with ``=`` quoted too: ``export V==`` is what bash
    reads as V='=', but shellcheck (SC1097) and a reader take it for a mistyped ``==``."""
    text = str(value)
    quoted = shlex.quote(text)
    return f"'{text}'" if quoted == text and (text.startswith("=") or text in RESERVED_WORDS) else quoted


def quote_all(values: Iterable) -> str:
    return " ".join(quote(v) for v in values)


def requirements(values: Iterable) -> str:
    """pip's requirements, each quoted, but a file under the home folder (``~/w/a.whl``, also
    written ``$HOME/w/a.whl``) as ``"$HOME"/w/a.whl``: pip expands neither, so a quoted ``~``
    would name a folder ``~`` in the current one."""
    return " ".join('"$HOME"/' + shlex.quote(text[len(home):]) if home else shlex.quote(text)
                    for text, home in ((str(v), _home_prefix(str(v))) for v in values))


def _home_prefix(text: str) -> str:
    return next((prefix for prefix in ("~/", "$HOME/", "${HOME}/") if text.startswith(prefix) and len(text) > len(prefix)), "")


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")


def words(values: Iterable[str]) -> str:
    """A command line; a first word like ``A=1`` is quoted so that bash runs it, not assigns it."""
    rendered = [shell_word(v) for v in values]
    if rendered and _ASSIGNMENT.match(rendered[0]):
        rendered[0] = f'"{rendered[0]}"'
    return " ".join(rendered)


#: a comment the script carries is wrapped to this many columns, so that it reads on one screen;
#: a source URL at its end may run to URL_COLUMNS rather than take a line of its own
COMMENT_COLUMNS = 100
URL_COLUMNS = 120


def comment(text: str) -> str:
    """``text`` as ``# `` lines of at most COMMENT_COLUMNS, wrapped between words; a word longer
    than a line (a URL) keeps a line of its own rather than being cut, so that it still opens,
    and a last line that is only the source (a URL or a page, in parentheses) joins the line it
    cites if that stays within URL_COLUMNS."""
    import textwrap

    lines = textwrap.wrap(str(text), COMMENT_COLUMNS - 2, break_long_words=False, break_on_hyphens=False)
    if len(lines) > 1 and lines[-1].startswith("(") and " " not in lines[-1] and len(lines[-2]) + len(lines[-1]) + 3 <= URL_COLUMNS:
        lines[-2:] = [f"{lines[-2]} {lines[-1]}"]
    return "\n".join("# " + line for line in lines)


def template_search_path(extra: Sequence[Path] = ()) -> list:
    """User templates first (``./templates``, then ``$XDG_CONFIG_HOME/slurmkit/templates``), bundled last."""
    from slurmkit.core.bundled import templates_dir
    from slurmkit.core.folders import config_folder

    return [*extra, Path.cwd() / "templates", config_folder() / "templates", templates_dir()]


def _bytecode_cache():
    """Compiled templates kept in ``$XDG_CACHE_HOME/slurmkit/jinja-sandboxed-2``: compiling them
    is most of a render's own cost (bench/startup.py). Jinja keys entries by template source,
    so an edited template is recompiled. What is cached there is run, so the folder must be
    the user's own and closed to others (0700, as made here); otherwise, or where it cannot be
    made, there is no cache."""
    import os
    import stat

    from slurmkit.core.folders import cache_folder

    # Not the unsandboxed environment's old folder: code compiled there calls functions unchecked;
    # nor the first sandbox's: its code computes '*', '**', '+' and '%' unchecked (template_limits).
    folder = str(cache_folder() / "jinja-sandboxed-2")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        status = os.stat(folder)
    except OSError:
        return None
    if status.st_uid != os.getuid() or status.st_mode & (stat.S_IWGRP | stat.S_IWOTH) or not os.access(folder, os.W_OK):
        return None
    return _fast_bytecode_cache()(folder)


def _fast_bytecode_cache():
    """Jinja's file cache, reading an entry whole before unmarshalling it: Jinja's
    ``marshal.load`` from the open file takes 1 ms for the base template, ``marshal.loads`` of
    its bytes 0.12 ms (bench/startup.py). Entries are those Jinja writes; a stale or damaged
    one is recompiled. Each Jinja release has entries of its own: code compiled by one calls
    names another lacks (3.1's ``environment.concat``), and two virtualenvs share the folder."""
    import marshal
    import pickle

    import jinja2
    from jinja2.bccache import bc_magic

    class BytecodeCache(jinja2.FileSystemBytecodeCache):
        def get_cache_key(self, name, filename=None):
            return super().get_cache_key(f"{jinja2.__version__}|{name}", filename)

        def load_bytecode(self, bucket):
            try:
                with open(self._get_cache_filename(bucket), "rb") as entry:
                    data = entry.read()
            except OSError:
                return
            header = bc_magic + pickle.dumps(bucket.checksum, 2)
            if data.startswith(header):
                try:
                    bucket.code = marshal.loads(data[len(header):])
                except (EOFError, ValueError, TypeError):
                    bucket.reset()

    return BytecodeCache


def _loader(search_path: Sequence[Path]):
    """A FileSystemLoader that announces each template it takes from the current folder."""
    import os

    import jinja2

    here = os.path.join(os.getcwd(), "templates") + os.sep

    class AnnouncingLoader(jinja2.FileSystemLoader):
        def get_source(self, environment, template):
            _refuse_special_templates(self.searchpath, template)
            source, filename, uptodate = super().get_source(environment, template)
            if filename.startswith(here):
                from slurmkit.core.local_files import announce_template

                announce_template(template, filename, self.searchpath)
            return source, filename, uptodate

    return AnnouncingLoader([str(p) for p in search_path])


def _bounded_sandbox():
    """Jinja's immutable sandbox, with the operators and ``str.format`` that size their result
    checked first (template_limits.py): a template cannot ask for gigabytes."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from slurmkit.render.template_limits import check_format_spec, checked_binop

    class BoundedSandbox(ImmutableSandboxedEnvironment):
        intercepted_binops = frozenset({"*", "**", "+", "%"})

        def call_binop(self, context, operator, left, right):
            checked_binop(operator, left, right)
            return super().call_binop(context, operator, left, right)

        def wrap_str_format(self, value):
            wrapped = super().wrap_str_format(value)
            if wrapped is None:
                return None

            def checked(*args, **kwargs):
                check_format_spec(value.__self__)
                return wrapped(*args, **kwargs)
            return checked

    return BoundedSandbox


def _refuse_special_templates(searchpath, template: str) -> None:
    """The first file named ``template`` on the search path, refused if it is a named pipe or a
    device (Jinja's open() would wait on a pipe for ever): files.NotARegularFile, one line."""
    import os
    import stat

    from slurmkit.core.files import NotARegularFile

    for folder in searchpath:
        candidate = os.path.join(folder, *template.split("/"))
        try:
            mode = os.stat(candidate).st_mode
        except OSError:
            continue
        if not stat.S_ISREG(mode):
            from slurmkit.core.errors import InputError

            raise InputError(candidate, None, "", NotARegularFile(candidate).strerror)
        return


def _environment(search_path: Sequence[Path]):
    import jinja2

    from slurmkit.render.template_limits import bounded_filters

    env = _bounded_sandbox()(
        bytecode_cache=_bytecode_cache(),
        loader=_loader(search_path),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters.update(quote=quote, quote_all=quote_all, requirements=requirements, word=shell_word, words=words, comment=comment,
                       **bounded_filters(env.filters))
    return env


def render(plan: Plan, search_path: Optional[Sequence[Path]] = None, standalone: bool = False, inline: bool = False) -> str:
    """The sbatch script for ``plan``: the template named after its kind, on the search path.
    It sources slurmkit's runtime library (runtime.py) from a file; ``standalone``: the library
    is appended to the script instead, which then needs no other file; ``inline``: the library
    stands in the script where the file is sourced (verification traces such a script)."""
    from slurmkit.core.kinds import KINDS
    from slurmkit.render.runtime import appended

    mode = "inline" if inline else "appended" if standalone else "file"
    script = _render(KINDS[plan.kind].script_template, plan, search_path, mode)
    return appended(script) if mode == "appended" else script


def render_setup(plan: Plan, search_path: Optional[Sequence[Path]] = None) -> str:
    """The environment, module and virtualenv part of ``plan``'s script (templates/setup.sh.j2)."""
    return _render("setup.sh.j2", plan, search_path)


def render_env_build(plan: Plan, search_path: Optional[Sequence[Path]] = None) -> str:
    """The modules, builds and virtualenv of ``plan``, run on the login node by ``slurmkit env
    build`` (templates/envbuild.sh.j2; envbuild.py)."""
    return _render("envbuild.sh.j2", plan, search_path)


def _render(name: str, plan: Plan, search_path: Optional[Sequence[Path]], mode: str = "file") -> str:
    import jinja2

    from slurmkit.core.errors import SlurmkitError
    from slurmkit.render.runtime import runtime
    from slurmkit.render.template_limits import gathered, time_limit

    env = _environment(search_path if search_path is not None else template_search_path())
    template = None
    try:
        template = env.get_template(name)
        with time_limit():   # a template is code from the current folder: bounded in time and size
            return gathered(template.generate(plan=plan, runtime=runtime()._replace(mode=mode)))
    except SlurmkitError:
        raise
    except (jinja2.TemplateError, Exception) as error:   # MemoryError, RecursionError, TypeError...: one line
        raise _template_error(error, getattr(template, "filename", None) or name) from None


def _template_error(error, name: str):
    """A template's failure as one InputError at its file and line (from Jinja's rewritten
    traceback, whose frames carry the template's file name and line)."""
    import traceback

    import jinja2
    from jinja2.sandbox import SecurityError

    from slurmkit.core.errors import InputError
    from slurmkit.render.template_limits import MAX_RENDER_MEMORY, TemplateTooLarge

    file, line = getattr(error, "filename", None), getattr(error, "lineno", None)
    if file is None:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.endswith(".j2")]
        file, line = (frames[-1].filename, frames[-1].lineno) if frames else (name, None)
    if isinstance(error, jinja2.TemplateError):
        message = (error.message or type(error).__name__).rstrip(".")
    elif isinstance(error, TemplateTooLarge):
        message = str(error)
    elif isinstance(error, MemoryError):
        message = (f"MemoryError: the template asked for more than {MAX_RENDER_MEMORY >> 30} GiB of memory, "
                   "slurmkit's bound for a render; templates format the plan")
    else:   # an error of Python's, raised by what the template computed
        detail = str(error).split("\n")[0][:200]
        message = type(error).__name__ + (f": {detail}" if detail else "")
    if isinstance(error, SecurityError):
        message += "; templates run sandboxed: they format the plan and cannot reach Python objects"
    return InputError(file, line, "", message)
