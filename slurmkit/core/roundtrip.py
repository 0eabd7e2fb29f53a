"""Rewrite some values of a user's YAML file and keep the rest as the user wrote it: comments,
key order, quoting, indentation. ``slurmkit port`` writes the ported spec this way, and
``slurmkit new --force`` a spec it replaces (PyYAML, which the rest of slurmkit reads with,
drops comments when it writes).

This is the only module that uses ruamel.yaml (a round-trip YAML library), and it imports it
inside the functions: ``slurmkit render``, ``check`` and ``--help`` never load it (their
start-up time is budgeted; tests/unit/test_roundtrip.py proves they do not).

The new values are applied as a three-way merge: ``old`` is the mapping as slurmkit read the
file (PyYAML), ``new`` the rewritten mapping, ``node`` the round-trip tree. Only where ``old``
and ``new`` differ is the tree touched, so a value that PyYAML and ruamel.yaml read
differently (YAML 1.1's ``yes``, ``01:00:00``) but that the port did not change is written back
exactly as it was.
"""

import re
from typing import Any, Dict, Optional, Sequence, Tuple


def rewritten_text(original: str, old: Any, new: Any, header: Sequence[str] = (),
                   comments: Optional[Dict[Tuple[str, ...], str]] = None) -> str:
    """``original`` (a YAML mapping's text, read by slurmkit as ``old``) with the values of
    ``new`` in place of those that changed, after the ``header`` comment lines; ``comments``
    puts a comment at the end of the line of each key path (``slurmkit report --apply``: which
    job measured the value), after the user's own comment there."""
    import io

    from ruamel.yaml import YAML

    original = original.replace("\r\n", "\n")   # written with \n, as everything slurmkit writes (a CRLF file's comments kept their \r)
    indent, offset = _indents(original)
    yaml = YAML()                     # round-trip: keeps comments and key order
    yaml.preserve_quotes = True
    yaml.width = 4096                 # never fold a long command line
    yaml.default_flow_style = False
    yaml.indent(mapping=indent, sequence=offset + 2, offset=offset)
    tree = yaml.load(original)
    tree = _merged(tree, old, new)
    for path, text in (comments or {}).items():
        _comment(tree, path, text)
    out = io.StringIO()
    yaml.dump(tree, out)
    return "".join(f"{line}\n" for line in header) + out.getvalue()


def rewritten_file(path, new: Any) -> Optional[str]:
    """The YAML file at ``path`` (one the user may have edited: ``slurmkit new --force`` over
    an existing spec) with ``new``'s values and the user's comments and layout; None when there is
    no such file, or it is not a readable mapping (then it is written afresh)."""
    from slurmkit.core.errors import SlurmkitError
    from slurmkit.core.yamlfile import parse_yaml, read_text

    try:
        text = read_text(path)
        old = parse_yaml(text, path)[0]
    except (OSError, SlurmkitError):
        return None
    return rewritten_text(text, old, new) if isinstance(old, dict) else None


def _indents(text: str) -> Tuple[int, int]:
    """The file's mapping indent and how far its list dashes sit in from their key (``modules:``
    then ``- a`` at the key's column: 0; PyYAML writes that), from the first of each; ruamel.yaml
    writes one style for the whole file."""
    mapping = offset = None
    above, opens = 0, False
    for line in text.splitlines():
        body = line.lstrip(" ")
        if not body or body.startswith("#"):
            continue
        indent = len(line) - len(body)
        if opens and body.startswith("- ") and offset is None:
            offset = indent - above
        elif opens and indent > above and mapping is None:
            mapping = indent - above
        above, opens = indent, re.sub(r"\s+#.*$", "", body).endswith(":")
    return mapping or 2, offset or 0


def _merged(node: Any, old: Any, new: Any) -> Any:
    """``node`` with ``new``'s values where they differ from ``old``'s; mappings keep their
    keys' order and comments (a new key goes last), equal-length lists their items' comments."""
    if old == new:
        return node
    if isinstance(node, dict) and isinstance(old, dict) and isinstance(new, dict):
        for key in [k for k in node if k not in new]:
            del node[key]
        for key, value in new.items():
            node[key] = _merged(node[key], old[key], value) if key in node and key in old else value
        return node
    if isinstance(node, list) and isinstance(old, list) and isinstance(new, list) and len(node) == len(old) == len(new):
        for index, value in enumerate(new):
            node[index] = _merged(node[index], old[index], value)
        return node
    return _styled_like(node, new)


def _styled_like(node: Any, new: Any) -> Any:
    """``new`` in ``node``'s flow or block style, where both are lists or both mappings (the user's
    ``[a, b]`` stays on one line)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    for kind, made in ((list, CommentedSeq), (dict, CommentedMap)):
        if isinstance(node, kind) and isinstance(new, kind) and hasattr(node, "fa"):
            styled = made(new)
            if node.fa.flow_style():
                styled.fa.set_flow_style()
            return styled
    return new


def _comment(tree: Any, path: Tuple[str, ...], text: str) -> None:
    """``# text`` at the end of the line of ``path``'s key; a flow mapping that holds it
    (``resources: {mem: 4G, time: 1h}``) is written as a block, where a line has room for it."""
    parent = tree
    for key in path[:-1]:
        parent = parent[key]
    if hasattr(parent, "fa") and parent.fa.flow_style():
        parent.fa.set_block_style()
    held = parent.ca.items.get(path[-1]) if hasattr(parent, "ca") else None
    token = held[2] if held and len(held) > 2 else None
    if token is None:
        parent.yaml_add_eol_comment("# " + text, path[-1])
        return
    # the token holds the rest of the key's line and any comment lines below it: keep those
    first, newline, rest = token.value.partition("\n")
    mine = first.strip().lstrip("#").strip()
    token.value = first[:len(first) - len(first.lstrip())] + "# " + (f"{mine}; " if mine else "") + text + newline + rest
