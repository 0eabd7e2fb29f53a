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
        if root is None:
            return None, {}
        lines: Dict[KeyPath, int] = {}
        _record_lines(root, (), lines, source)
        data = yaml.load(text, Loader=_Loader)  # can still fail: unknown tags, unhashable keys
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error)
        raise InputError(source, mark.line + 1 if mark else None, "", f"not valid YAML: {problem}") from None
    return data, lines


def load_yaml_file(path: Path) -> Tuple[Any, Dict[KeyPath, int]]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise InputError(path, None, "", f"cannot read it: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise InputError(path, None, "", f"not UTF-8 text (byte {error.start} cannot be decoded)") from None
    return load_yaml(text, str(path))


def _record_lines(node, path: KeyPath, lines: Dict[KeyPath, int], source: str) -> None:
    """Fill ``lines``; a key written twice in one mapping is an error (YAML keeps the last silently)."""
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: Dict[str, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue  # a list or mapping as a key: the constructor rejects it as unhashable
            key, line = key_node.value, key_node.start_mark.line + 1
            child = path + (key,)
            if key in seen and key != "<<":
                raise InputError(source, line, format_keypath(child), f"is given twice (first on line {seen[key]}); keep one")
            seen[key] = line
            _record_lines(value_node, child, lines, source)
            lines[child] = line  # point at the key, where users look
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _record_lines(item, path + (index,), lines, source)


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
