"""The ``# to do:`` lines ``slurmkit import`` and ``port`` leave at the top of a spec: what the
user must do before the job is right. ``check`` reports them, and ``submit`` refuses a spec
that still has one (unless told to ignore them), so that a job that is known to be wrong is
never queued by mistake."""

from pathlib import Path
from typing import Optional, Tuple

from slurmkit.core.errors import OpenTodos

TODO_PREFIX = "# to do: "


def pending_import_notes(text: str) -> Tuple[str, ...]:
    """The ``# to do:`` notes ``import`` left in a spec file's leading comments."""
    notes = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        if line.startswith(TODO_PREFIX):
            notes.append(line[len(TODO_PREFIX):])
    return tuple(notes)


def refuse_open_todos(spec_path: Optional[str]) -> None:
    """Raise OpenTodos where the spec file at ``spec_path`` still has a to-do (a spec built in
    Python has none)."""
    if not spec_path or not spec_path.endswith((".yaml", ".yml")):
        return
    try:
        text = Path(spec_path).read_text(errors="replace")
    except OSError:
        return    # the spec was read a moment ago; reading it again is check's business, not this
    todos = pending_import_notes(text)
    if todos:
        first = todos[0] if len(todos[0]) <= 160 else todos[0][:160] + "..."
        line = next(n for n, text in enumerate(text.splitlines(), 1) if text.startswith(TODO_PREFIX))
        raise OpenTodos(spec_path, line, "", f"{len(todos)} to-do(s) left by import or port, the '# to do:' lines at its top "
                                          f"(first: {first}): do each and delete its line, or submit with --ignore-todos")
