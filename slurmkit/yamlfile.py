"""Reading YAML so that every value can be traced back to its line.

Job specs and site profiles are validated after loading; an error must still say
``job.yaml:12: resources.mem: ...``. Composing the node tree once gives both the plain data
and a map from key paths to line numbers, without a second parse.
"""

from pathlib import Path
from typing import Any, Dict, Tuple

import yaml

from .errors import InputError

try:  # libyaml's loader is several times faster where it is installed
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader

KeyPath = Tuple[Any, ...]


def load_yaml(text: str, source: str) -> Tuple[Any, Dict[KeyPath, int]]:
    """Parse ``text``; return the data and ``{key path: 1-based line}`` for every node."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error)
        raise InputError(source, mark.line + 1 if mark else None, "", f"not valid YAML: {problem}") from None
    if root is None:
        return None, {}
    lines: Dict[KeyPath, int] = {}
    _record_lines(root, (), lines)
    data = yaml.load(text, Loader=_Loader)
    return data, lines


def load_yaml_file(path: Path) -> Tuple[Any, Dict[KeyPath, int]]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise InputError(path, None, "", f"cannot read it: {error.strerror}") from None
    return load_yaml(text, str(path))


def _record_lines(node, path: KeyPath, lines: Dict[KeyPath, int]) -> None:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            child = path + (key,)
            _record_lines(value_node, child, lines)
            lines[child] = key_node.start_mark.line + 1  # point at the key, where users look
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _record_lines(item, path + (index,), lines)


def line_of(lines: Dict[KeyPath, int], path: KeyPath):
    """The line of ``path``, or of its nearest ancestor that has one (for missing keys)."""
    while path not in lines and path:
        path = path[:-1]
    return lines.get(path)


def format_keypath(path: KeyPath) -> str:
    """``("resources", "gpus", 0)`` -> ``resources.gpus[0]``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
