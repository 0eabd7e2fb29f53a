"""Walking a tree-sitter bash tree, shared by the readers of a script (bashtree, scriptargs)."""

from __future__ import annotations

import re
from typing import Any, FrozenSet, Iterator

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
