"""Reading YAML so that every value can be traced back to its line, with bounded work.

Job specs and site profiles are validated after loading; an error must still say
``job.yaml:12: resources.mem: ...``. One pass over the composed node tree gives the plain
data, the line of every key path, and refuses what plain YAML loading would hide (a duplicate
key silently replacing the first, a key that is not a string).

This is the one YAML reader of slurmkit, and YAML lets a small file describe a huge value:
aliases (``*name``) repeat what an anchor (``&name``) names, so 300 bytes can expand to a
billion values (a "billion laughs"), and ``a: &a [*a]`` is a list that contains itself. The
nodes are therefore composed here, from the parser's events, counting as they come: the file
size, the aliases, the values once every alias is expanded, and the nesting depth are capped
at the limits below (no real job spec or profile comes near them: the bundled profiles have
about 330 values and no alias), and an alias inside the node it names is refused. Each limit
is one ``error(source, line, "", message)``, reached in well under a second and 100 MB.
"""

from pathlib import Path
from typing import Any, Callable, Dict, List, NoReturn, Optional, Sequence, Tuple, Union

import yaml
from yaml.events import (
    AliasEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from slurmkit.core.errors import InputError
from slurmkit.core.units import human_size

# libyaml's loader is several times faster where PyYAML was built with it.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

KeyPath = Tuple[Union[str, int], ...]
#: where a file's text came from: its path, or a name such as ``<stdin>``
Source = Union[str, Path]
#: how a problem is raised: ``error(source, line, key path, message)``. InputError and its
#: subclasses are such factories; a caller with errors of its own (remote.yaml) passes a function.
ErrorFactory = Callable[[Source, Optional[int], str, str], Exception]


class KeyLines(Dict[KeyPath, int]):
    """``{key path: 1-based line}``, and ``spellings``: the text of each plain number or boolean,
    as written (``0.00001``, ``010``, ``yes``), for the values that reach a job as text, where
    Python's spelling (``1e-05``, ``8``, ``True``) would not be what the user wrote."""

    def __init__(self) -> None:
        super().__init__()
        self.spellings: Dict[KeyPath, str] = {}

#: the most bytes one YAML file may have (a job spec is a few hundred, a profile under 10 KiB).
MAX_BYTES = 1 << 20
#: the most aliases (``*name``) one file may use.
MAX_ALIASES = 1000
#: the most values (keys, list items and scalars) one file may hold, every alias expanded.
MAX_VALUES = 50_000
#: the deepest nesting of mappings and lists, every alias expanded.
MAX_DEPTH = 64
#: the most characters of text (keys and scalars) one file may hold, every alias expanded: as
#: much as the largest file holds with no alias, so that an alias can repeat a value but never
#: turn a small file into a larger one (900 KB repeated by 999 aliases was a 900 MB script).
MAX_CHARS = MAX_BYTES
#: the most digits of a whole number: far past any count, size or time (2**63 has 19), short of
#: Python's own limit of 4,300 (int_max_str_digits), which a 0x number of 4,000 digits passes when
#: read but not when printed. (An array value of 24 digits, a seed, stays as written.)
MAX_DIGITS = 1000


def parse_yaml(text: str, source: Source, error: ErrorFactory = InputError) -> Tuple[Any, Dict[KeyPath, int], Any]:
    """Parse ``text``; return ``(data, {key path: 1-based line}, root node)``.

    Problems are raised as ``error(source, line, keypath, message)``.
    """
    loader = _Loader(text)
    try:
        root = _BoundedComposer(loader, source, error).single_node()
        lines = KeyLines()
        data = None if root is None else _construct(loader, root, (), lines, source, error)
    except yaml.MarkedYAMLError as problem:
        mark = problem.problem_mark or problem.context_mark
        raise error(source, mark.line + 1 if mark else None, "", f"not valid YAML: {problem.problem or problem.context}") from None
    except yaml.YAMLError as problem:
        raise error(source, None, "", f"not valid YAML: {problem}") from None
    finally:
        loader.dispose()
    return data, lines, root


def read_yaml_file(path: Path, error: ErrorFactory = InputError) -> Tuple[str, Tuple[Any, Dict[KeyPath, int], Any]]:
    """The text of ``path`` and what parse_yaml makes of it; unreadable files are ``error``s."""
    text = read_text(path, error)
    return text, parse_yaml(text, path, error)


def read_text(path: Path, error: ErrorFactory = InputError, limit: int = MAX_BYTES) -> str:
    """The UTF-8 text of ``path``, refused beyond ``limit`` bytes before more is read (a
    named pipe or ``/dev/zero`` given as a spec ends here, not in memory)."""
    try:
        from slurmkit.core.files import open_regular  # a named pipe or a device refused before it can block

        with open_regular(path) as handle:
            data = handle.read(limit + 1)
    except OSError as problem:
        raise error(path, None, "", f"cannot read it: {problem.strerror or problem}") from None
    if len(data) > limit:
        raise error(path, None, "", f"larger than {human_size(limit)}, slurmkit's limit for this file; "
                                    f"a job spec or profile is a few KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as problem:
        raise error(path, None, "", f"not UTF-8 text (byte {problem.start} cannot be decoded)") from None


class _BoundedComposer:
    """yaml's composer, rebuilt over the parser's events so that it can count as it goes.

    Each node's expanded size (itself and everything under it, aliases included) and height
    are known when it closes; an alias can only name a closed node (one still open is the
    alias inside its own anchor), so its cost is known the moment it is met.
    """

    def __init__(self, loader: Any, source: Source, error: ErrorFactory) -> None:
        self.loader, self.source, self.error = loader, source, error
        self.anchors: Dict[str, Any] = {}
        self.cost: Dict[int, Tuple[int, int, int]] = {}   # id(node) -> (values, height, chars), once closed
        self.values = 0
        self.chars = 0
        self.aliases = 0

    def single_node(self) -> Optional[Node]:
        """The root node of the one document (None for an empty stream), as get_single_node."""
        loader = self.loader
        loader.get_event()  # stream start
        root = None
        if not loader.check_event(StreamEndEvent):
            loader.get_event()  # document start
            root = self._compose()
            loader.get_event()  # document end
        if not loader.check_event(StreamEndEvent):
            self._fail(loader.get_event(), "a second YAML document starts here; a spec or profile is one document")
        return root

    def _fail(self, event: Event, message: str) -> NoReturn:
        raise self.error(self.source, event.start_mark.line + 1 if event.start_mark else None, "", message)

    def _compose(self) -> Node:
        loader = self.loader
        # Each open collection: [node, pending mapping key or None, values so far, tallest child, chars so far].
        stack: List[list] = []
        while True:
            event = loader.get_event()
            kind = type(event)
            if kind is SequenceEndEvent or kind is MappingEndEvent:
                node, _, size, height, chars = stack.pop()
                node.end_mark = event.end_mark
                self.cost[id(node)] = (size, height + 1, chars)
            elif kind is AliasEvent:
                node = self._alias(event, stack)
            else:
                node = self._new_node(event, len(stack))
                if kind is not ScalarEvent:
                    stack.append([node, None, 1, 0, 0])
                    continue
            if not stack:
                return node
            self._attach(stack[-1], node)

    def _new_node(self, event: Any, depth: int) -> Node:
        loader = self.loader
        anchor = event.anchor
        if anchor is not None and anchor in self.anchors:
            self._fail(event, f"anchor &{anchor} is defined twice (first on line "
                              f"{self.anchors[anchor].start_mark.line + 1}); give each its own name")
        kind = type(event)
        self._count(event, 1, depth + 1, len(event.value) if kind is ScalarEvent else 0)
        node: Node
        if kind is ScalarEvent:
            tag = event.tag if event.tag not in (None, "!") else loader.resolve(ScalarNode, event.value, event.implicit)
            node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
            self.cost[id(node)] = (1, 1, len(event.value))
        elif kind is SequenceStartEvent or kind is MappingStartEvent:
            node_class = SequenceNode if kind is SequenceStartEvent else MappingNode
            tag = event.tag if event.tag not in (None, "!") else loader.resolve(node_class, None, event.implicit)
            node = node_class(tag, [], event.start_mark, None, flow_style=event.flow_style)
        else:  # a stream or document event where a value belongs: the parser has already refused this
            raise yaml.composer.ComposerError(None, None, f"unexpected {kind.__name__}", event.start_mark)
        if anchor is not None:
            self.anchors[anchor] = node
        return node

    def _alias(self, event: Any, stack: List[list]) -> Node:
        anchor = event.anchor
        node = self.anchors.get(anchor)
        if node is None:
            self._fail(event, f"alias *{anchor} names no anchor (&{anchor}) defined above it")
        self.aliases += 1
        if self.aliases > MAX_ALIASES:
            self._fail(event, f"more than {MAX_ALIASES:,} aliases (*name), slurmkit's limit for one file; write the values out")
        if id(node) not in self.cost:
            self._fail(event, f"alias *{anchor} is inside the value it names (&{anchor}), which would contain "
                              f"itself without end; write the value out instead")
        size, height, chars = self.cost[id(node)]
        self._count(event, size, len(stack) + height, chars)
        return node

    def _count(self, event: Event, size: int, depth: int, chars: int) -> None:
        """Add ``size`` values of ``chars`` characters at ``depth``; refuse the file past
        MAX_VALUES, MAX_CHARS or MAX_DEPTH."""
        self.values += size
        self.chars += chars
        if self.chars > MAX_CHARS:
            self._fail(event, f"more than {MAX_CHARS:,} characters of text once aliases are expanded, slurmkit's limit "
                              f"for one file (as much as the largest file holds); write the values out or shorten them")
        if self.values > MAX_VALUES:
            self._fail(event, f"more than {MAX_VALUES:,} values once aliases are expanded, slurmkit's limit for one "
                              f"file (a spec or profile has a few hundred); write the values out or shorten the file")
        if depth > MAX_DEPTH:
            self._fail(event, f"nested more than {MAX_DEPTH} levels deep (aliases expanded), slurmkit's limit")

    def _attach(self, parent: list, node: Node) -> None:
        """Put ``node`` in the open collection ``parent``, adding up its size and height."""
        size, height, chars = self.cost[id(node)]
        parent[2] += size
        parent[3] = max(parent[3], height)
        parent[4] += chars
        collection = parent[0]
        if isinstance(collection, MappingNode):
            if parent[1] is None:
                parent[1] = node
            else:
                collection.value.append((parent[1], node))
                parent[1] = None
        else:
            collection.value.append(node)


_PLAIN_MAP, _PLAIN_SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"
#: a plain scalar resolved as one of these is a number; written with ':' it is YAML 1.1's
#: base-60 form, which YAML 1.2 dropped and which nobody means: ``time: 1:00:00`` is kept as
#: the text "1:00:00" (an hour, as sbatch reads it), not the number 3600 (3600 minutes).
_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
_BOOL_TAG = "tag:yaml.org,2002:bool"
_SPELLED_TAGS = (*_NUMBER_TAGS, _BOOL_TAG)


def _construct(loader: Any, node: Node, path: KeyPath, lines: Dict[KeyPath, int], source: Source, error: ErrorFactory) -> Any:
    """The plain data of ``node``, the line of every key path under ``path`` put in ``lines``."""
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, MappingNode) and node.tag == _PLAIN_MAP:
        return _construct_mapping(loader, node, path, lines, source, error)
    if isinstance(node, SequenceNode) and node.tag == _PLAIN_SEQ:
        return [_construct(loader, item, path + (index,), lines, source, error) for index, item in enumerate(node.value)]
    if isinstance(node, ScalarNode) and not node.style and node.tag in _SPELLED_TAGS:
        if ":" in node.value and node.tag != _BOOL_TAG:
            return node.value  # YAML 1.1's base 60 (1:00:00 = 3600): for a time, what SLURM reads it as
        if isinstance(lines, KeyLines):
            lines.spellings[path] = node.value
    return _scalar(loader, node, path, source, error)


def _construct_mapping(loader: Any, node: MappingNode, path: KeyPath, lines: Dict[KeyPath, int], source: Source,
                       error: ErrorFactory) -> Dict[str, Any]:
    """A plain mapping, refused where plain loading would hide something: a key given twice (a
    merged key only gives way to one given before it) or a key that is not a string."""
    out: Dict[str, Any] = {}
    seen: Dict[str, int] = {}
    own = []
    for key_node, value_node, explicit in _merged_pairs(node, source, error):
        key, where = _mapping_key(loader, key_node, path, source, error)
        if key in seen:
            if not explicit:
                continue  # a merged key (<<: *name) that the mapping or an earlier merge already gives
            raise error(source, where, format_keypath(path + (key,)), f"is given twice (first on line {seen[key]}); keep one")
        seen[key] = where
        if explicit:
            own.append(key)
        lines[path + (key,)] = where  # the key's line, where users look
        out[key] = _construct(loader, value_node, path + (key,), lines, source, error)
    if len(own) < len(out):  # merged keys first, then the mapping's own, as yaml's loader puts them
        mine = set(own)
        out = {**{key: value for key, value in out.items() if key not in mine}, **{key: out[key] for key in own}}
    return out


def _mapping_key(loader: Any, key_node: Node, path: KeyPath, source: Source, error: ErrorFactory) -> Tuple[str, int]:
    """A mapping key and its line; a key that is not a plain string is refused (quote it)."""
    where = key_node.start_mark.line + 1
    if not isinstance(key_node, ScalarNode):
        raise error(source, where, "", "not valid YAML: found unhashable key")
    key = _scalar(loader, key_node, path, source, error)
    if not isinstance(key, str):
        raise error(source, where, format_keypath(path), f"key {key!r} is not a string; quote it")
    return key, where


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _merged_pairs(node: MappingNode, source: Source, error: ErrorFactory) -> List[Tuple[Node, Node, bool]]:
    """The ``(key node, value node, explicit)`` of a mapping, merge keys (``<<: *name``) resolved
    as YAML says: the mapping's own keys first, then each merged mapping's in the order given
    (an earlier one wins), so that the first of each key is the one that counts. Unlike yaml's
    flatten_mapping this leaves the node as it is: an alias may name it again."""
    own: List[Tuple[Node, Node, bool]] = []
    merged: List[Tuple[Node, Node, bool]] = []
    for key_node, value_node in node.value:
        if key_node.tag != _MERGE_TAG:
            own.append((key_node, value_node, True))
            continue
        sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
        for merged_node in sources:
            if not isinstance(merged_node, MappingNode):
                raise error(source, merged_node.start_mark.line + 1, "",
                            "not valid YAML: a merge key (<<) takes a mapping or a list of mappings")
            merged.extend((k, v, False) for k, v, _ in _merged_pairs(merged_node, source, error))
    return own + merged


def _scalar(loader: Any, node: Node, path: KeyPath, source: Source, error: ErrorFactory) -> Any:
    """One scalar (or tagged node) as the safe constructor makes it, which refuses tags it does
    not know; a whole number too long for any count, size or time is refused before Python reads
    it (past 4,300 digits int() raises; a 0x number that long prints past that limit)."""
    if node.tag == "tag:yaml.org,2002:int" and isinstance(node, ScalarNode):
        digits = sum(ch.isalnum() for ch in node.value) - (2 if node.value.lstrip("+-")[:2].lower() in ("0x", "0b", "0o") else 0)
        if digits > MAX_DIGITS:
            raise error(source, node.start_mark.line + 1, format_keypath(path),
                        f"a whole number of {digits:,} digits, longer than any count, size or time (slurmkit reads at most "
                        f"{MAX_DIGITS}); quote it if it is text")
    try:
        return loader.construct_object(node, deep=True)
    except ValueError as problem:  # what Python itself refuses to make of a scalar (a float's or int's limits)
        raise error(source, node.start_mark.line + 1, format_keypath(path), f"cannot be read: {problem}") from None


def line_of(lines: Dict[KeyPath, int], path: KeyPath) -> Optional[int]:
    """The line of ``path``, or of its nearest ancestor that has one (for missing keys)."""
    while path not in lines and path:
        path = path[:-1]
    return lines.get(path)


def format_keypath(path: Sequence[Union[str, int]]) -> str:
    """``("node_types", "gpu", "mig", 0)`` -> ``node_types.gpu.mig[0]``."""
    text = ""
    for part in path:
        part = part if isinstance(part, int) or str(part).isprintable() else repr(part)  # a key with \0 or ESC in it
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
