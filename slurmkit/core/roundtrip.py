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
from typing import Any, Dict, List, Optional, Sequence, Tuple


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
    out = io.StringIO()
    yaml.dump(tree, out)
    changed = list(changed_leaves(old, new))
    text = without_stale_comments(out.getvalue(), changed, yaml, tuple(comments or ()))
    header = list(header) + [_stale_note(said, fields) for said, fields in free_stale_comments(text, changed)]
    if comments:
        tree = yaml.load(text)
        for path, said in comments.items():
            _comment(tree, path, said)
        out = io.StringIO()
        yaml.dump(tree, out)
        text = out.getvalue()
    return "".join(f"{line}\n" for line in header) + text


def changed_leaves(old: Any, new: Any, path: Tuple[str, ...] = ()):
    """(key path, old value, new value) of each value ``new`` rewrites in ``old`` (mappings walked into)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key, value in new.items():
            if key in old and old[key] != value:
                yield from changed_leaves(old[key], value, path + (key,))
    elif old != new and path:
        yield path, old, new


#: an amount said in words (``half an hour``, ``three gigabytes``, ``two GPUs``): what a comment
#: says of a value when it does not write its figure.
_NUMBER_WORDS = (r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
                 r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|"
                 r"thousand|half(?:\s+an?)?|a\s+quarter|quarter|a\s+dozen|dozen|couple\s+of)")
_TIME_WORDS = r"(?:seconds?|minutes?|hours?|days?|weeks?)"
_SIZE_WORDS = r"(?:kilobytes?|megabytes?|gigabytes?|terabytes?|gigs?)"
_COUNT_WORDS = r"(?:cores?|cpus?|gpus?|nodes?|tasks?|ranks?|threads?|processes)"
#: up to two words between an amount and its unit (``two whole nodes``, ``2 Graham T4 nodes``),
#: none of them a word that makes the amount another thing's (``one per OpenMP thread``).
_BETWEEN = r"(?:(?!(?:per|of|for|each|every|on|in|at|to|by|a|an|the)\b)[\w-]+\s+){0,2}"


def _spelled(old: Any, field: str) -> str:
    """An amount in words in the units of ``field`` (its key: ``time``, ``mem``...), else of
    ``old``'s look: a time, a size, or a count (``30m`` is minutes under ``time``, MiB under ``mem``)."""
    text = str(old).strip()
    if field.startswith("time") or (not field and re.fullmatch(r"[\d:\-]+|(?:\d+[dhms])+", text)):
        units = _TIME_WORDS
    elif field.startswith(("mem", "tmp")) or re.fullmatch(r"\d+(?:\.\d+)?\s*[KMGTP]B?", text, re.IGNORECASE):
        units = _SIZE_WORDS
    else:
        units = _COUNT_WORDS
    return rf"\b{_NUMBER_WORDS}\s+{_BETWEEN}{units}\b"


def stale_patterns(old: Any, new: Any, field: str = "") -> List[str]:
    """What a comment says of ``old`` that ``new`` no longer is: its number (``8`` cores), its
    size in any spelling (``64G``, ``64 GB``), its text (``3h``), a GPU's model or count
    (``v100:2`` -> ``h100:2``: the model), or an amount in words in the units of ``field``
    (``half an hour`` of a time, ``three gigabytes`` of a size, ``two nodes`` of a count); as
    regular expressions, matched ignoring case."""
    figures = _figure_patterns(old, new)
    return figures + [_spelled(old, field)] if figures else figures


def _figure_patterns(old: Any, new: Any) -> List[str]:
    """stale_patterns' figures: how a comment writes ``old`` itself."""
    if isinstance(old, bool) or not isinstance(old, (int, float, str)):
        return []
    if isinstance(old, (int, float)):
        return [_number(old)] if old != new else []
    size = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGTP])B?", old.strip(), re.IGNORECASE)
    if size:
        return [_number(size.group(1)) + r"\s*" + size.group(2) + r"(?:i?B)?\b"]
    if ":" in old and isinstance(new, (str, int)):
        model, _, count = old.rpartition(":")
        new_model, _, new_count = str(new).rpartition(":")
        said = [r"(?<![\w.])" + re.escape(model) + r"(?!\d)"] if model and model != new_model else []
        return said + ([_number(count)] if count.isdigit() and count != new_count else [])
    return [r"(?<![\w.:])" + re.escape(old) + r"(?![\w.:])"] if old.strip() else []


def _number(value: Any) -> str:
    return r"(?<![\w.])" + re.escape(str(value)) + r"(?!\.?\d)"


def without_stale_comments(text: str, changed, yaml, commented: Sequence[Tuple[str, ...]] = ()) -> str:
    """``text`` less the comments attached to a rewritten value (on its line, or the lines just
    above its key at its indent) that state what the value was: a ``# 8 cores`` over a field now
    4 would tell the user what is no longer true. A line of ``commented`` keeps an empty ``#``
    where its comment was, so that the comment put there next keeps the user's column."""
    lines = text.split("\n")
    tree = yaml.load(text)
    drop: set = set()
    cluster = _cluster_patterns(changed)
    for path, old, new in changed:
        patterns = stale_patterns(old, new, str(path[-1])) + cluster
        line = _line_of(tree, path)
        if not patterns or line is None:
            continue
        stale = lambda said: any(re.search(p, said, re.IGNORECASE) for p in patterns)   # noqa: E731
        code, hash_, said = _split_comment(lines[line])
        if hash_ and stale(said):
            lines[line] = code + "#" if path in commented else code.rstrip()
        above = _comment_block_above(lines, line)
        if any(stale(lines[i]) for i in above):
            drop.update(above)
    return "\n".join(line for number, line in enumerate(lines) if number not in drop)


#: comment lines slurmkit itself writes at the head of a spec (import's notes, port's changes, to-dos).
_OWN_COMMENT = re.compile(r"^#(?: to do:| note:| done:| mapped:| kept:| dropped:| Ported from | Imported by slurmkit |   )")


#: the words a free comment counts a field's value in (``two nodes``, ``12 cores``, ``3 hours``).
_FIELD_UNITS = {"nodes": r"nodes?", "cpus_per_task": r"(?:cores?|cpus?|threads?)", "tasks_per_node": r"(?:tasks?|ranks?|processes)",
                "gpus": r"gpus?", "time": _TIME_WORDS, "mem": _SIZE_WORDS, "mem_per_cpu": _SIZE_WORDS, "tmp": _SIZE_WORDS}


def _cluster_patterns(changed) -> List[str]:
    """The old cluster's name, where ``profile`` changed: a comment on any rewritten value that
    names it (``# the share of a nibi GPU node`` over a spec moved off nibi) describes the old
    cluster's figures, and goes with them."""
    return [r"(?<![\w.:-])" + re.escape(old) + r"(?![\w.:-])" for path, old, new in changed
            if path == ("profile",) and isinstance(old, str) and old.strip() and old != new]


def _free_patterns(old: Any, new: Any, field: str) -> List[str]:
    """What a comment attached to no field says of ``old``, narrowly: a bare ``2`` in a free
    comment is as likely epochs as nodes, so a count must come with the field's unit (``2 nodes``,
    ``two nodes``); a size (``498G``), a time (``3h``) or a GPU model (``A100``) is specific enough."""
    units = _FIELD_UNITS.get(field)
    if units is None or isinstance(old, bool) or old == new or not isinstance(old, (int, float, str)):
        return []
    counts = [str(old)] if isinstance(old, (int, float)) or str(old).strip().isdigit() else re.findall(r"(?<=:)\d+$", str(old))
    bare = {_number(count) for count in counts}
    figures = [] if counts == [str(old)] else [p for p in _figure_patterns(old, new) if p not in bare]
    return figures + [_number(count) + r"\s*" + _BETWEEN + units + r"\b" for count in counts] + [
        rf"\b{_NUMBER_WORDS}\s+{_BETWEEN}{units}\b"]


def free_stale_comments(text: str, changed) -> List[Tuple[str, List[str]]]:
    """(the comment, the fields it states as they were) of each whole-line comment of the user's
    that a rewrite leaves behind: ``# Two nodes of four A100s`` above a spec ported to one node of
    H100s. Kept, as the user wrote it; the caller says in its header that it is out of date."""
    found = []
    for line in text.split("\n"):
        said = line.strip()
        if not said.startswith("#") or _OWN_COMMENT.match(said):
            continue
        fields = [".".join(path) for path, old, new in changed
                  if any(re.search(p, said, re.IGNORECASE) for p in _free_patterns(old, new, str(path[-1])))]
        if fields:
            found.append((said, fields))
    return found


#: how the header line that flags a user's out-of-date comment starts.
STALE_NOTE = "# note: the comment "


def _stale_note(said: str, fields: Sequence[str]) -> str:
    shown = said.lstrip("#").strip()
    shown = shown if len(shown) <= 50 else shown[:47] + "..."
    return f"{STALE_NOTE}{shown!r} states {', '.join(fields)} as before"


def stale_notes(text: str) -> List[str]:
    """The out-of-date comments a rewrite flagged in ``text``'s header, as lines to show on the
    terminal too: a note only in the file is easily never read, and ``check`` cannot see it."""
    notes = []
    for line in text.split("\n"):
        if not line.startswith("#"):
            break
        if line.startswith(STALE_NOTE):
            notes.append(line[len("# note: "):])
    return notes


def _line_of(tree: Any, path: Tuple[str, ...]) -> Optional[int]:
    """The line (0-based) of ``path``'s key in a round-trip tree; None where it is not there."""
    parent = tree
    for key in path[:-1]:
        parent = parent.get(key) if hasattr(parent, "get") else None
    if not hasattr(parent, "lc") or path[-1] not in parent:
        return None
    return parent.lc.key(path[-1])[0]


def _split_comment(line: str) -> Tuple[str, str, str]:
    """(the code, "#" or "", the comment) of a YAML line: a ``#`` after a space, outside quotes."""
    quote = None
    for index, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] in " \t"):
            return line[:index], "#", line[index + 1:]
    return line, "", ""


def _comment_block_above(lines: List[str], line: int) -> List[int]:
    """The comment lines just above ``line`` at its indent (no blank line between)."""
    indent = len(lines[line]) - len(lines[line].lstrip(" "))
    block = []
    number = line - 1
    while number >= 0 and lines[number].strip().startswith("#") and len(lines[number]) - len(lines[number].lstrip(" ")) == indent:
        block.append(number)
        number -= 1
    return block


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
