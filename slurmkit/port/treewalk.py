"""Walking a tree-sitter bash tree, shared by the readers of a script (bashtree, scriptargs)."""

from __future__ import annotations

import re
from typing import Any, Callable, FrozenSet, Iterator

#: the name of a positional parameter: ``1``, ``10``, ``@``, ``*``, ``#``
POSITIONAL = re.compile(r"[1-9]\d*|[@*#]")


def nodes_under(root: Any, skip: FrozenSet[str] = frozenset()) -> Iterator[Any]:
    """Every node under ``root`` in source order, not descending into the types in ``skip``
    (a function's body, a heredoc: what runs elsewhere or is not read as code)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if node.type not in skip:
            stack.extend(reversed(node.children))


#: programs whose words only reach where their output goes
_PRINTERS = frozenset(("echo", "printf"))
#: where a printer's output stays the job's log (or nowhere)
_LOG_TARGETS = frozenset(("1", "2", "/dev/stdout", "/dev/stderr", "/dev/null"))
#: what hands a command's output to something else than the log
_CAPTURED = frozenset(("pipeline", "command_substitution", "process_substitution", "herestring_redirect", "heredoc_redirect"))


def printed_only(node: Any, text: Callable[[Any], str]) -> bool:
    """Whether the value read at ``node`` (an expansion) only reaches the job's log: a word of an
    ``echo`` or ``printf`` (not ``printf -v``) whose output no file, pipe or command substitution
    takes. What a job only prints is no input it depends on."""
    command = node.parent
    while command is not None and command.type != "command":
        if command.type in _CAPTURED or command.type == "variable_assignment":
            return False
        command = command.parent
    name = command.child_by_field_name("name") if command is not None else None
    if name is None or text(name) not in _PRINTERS or name.start_byte > node.start_byte:
        return False
    words = [text(c) for c in command.named_children if c.type != "command_name"]
    if text(name) == "printf" and words and words[0].startswith("-v"):
        return False
    outer = command.parent
    while outer is not None:
        if outer.type in _CAPTURED:
            return False
        if outer.type == "redirected_statement" and not all(_to_log(r, text) for r in outer.named_children[1:]):
            return False
        outer = outer.parent
    return True


def _to_log(redirect: Any, text: Callable[[Any], str]) -> bool:
    """A redirection that leaves output in the job's log: ``>&2``, ``2>&1``, ``> /dev/null``."""
    if redirect.type != "file_redirect":
        return False
    target = [c for c in redirect.named_children if c.type != "file_descriptor"]
    return bool(target) and text(target[-1]) in _LOG_TARGETS
