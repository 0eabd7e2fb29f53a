"""Reading YAML so that every value can be traced back to its line.

Job specs and site profiles are validated after loading; an error must still say
``job.yaml:12: resources.mem: ...``. One pass over the composed node tree gives the plain
data, the line of every key path, and refuses what plain YAML loading would hide (a duplicate
key silently replacing the first, a key that is not a string).
"""

from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple, Type, Union

import yaml

from .errors import InputError

# libyaml's loader is several times faster where PyYAML was built with it.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

KeyPath = Tuple[Union[str, int], ...]


def parse_yaml(text: str, source: Union[str, Path], error: Type[InputError] = InputError) -> Tuple[Any, Dict[KeyPath, int], Any]:
    """Parse ``text``; return ``(data, {key path: 1-based line}, root node)``.

    Problems are raised as ``error(source, line, keypath, message)``.
    """
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        lines: Dict[KeyPath, int] = {}
        data = None if root is None else _construct(loader, root, (), lines, source, error)
    except yaml.MarkedYAMLError as problem:
        mark = problem.problem_mark or problem.context_mark
        raise error(source, mark.line + 1 if mark else None, "", f"not valid YAML: {problem.problem or problem.context}") from None
    except yaml.YAMLError as problem:
        raise error(source, None, "", f"not valid YAML: {problem}") from None
    finally:
        loader.dispose()
    return data, lines, root


def read_yaml_file(path: Path, error: Type[InputError] = InputError) -> Tuple[str, Tuple[Any, Dict[KeyPath, int], Any]]:
    """The text of ``path`` and what parse_yaml makes of it; unreadable files are ``error``s."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as problem:
        raise error(path, None, "", f"cannot read it: {problem.strerror or problem}") from None
    except UnicodeDecodeError as problem:
        raise error(path, None, "", f"not UTF-8 text (byte {problem.start} cannot be decoded)") from None
    return text, parse_yaml(text, path, error)


_PLAIN_MAP, _PLAIN_SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


def _construct(loader, node, path: KeyPath, lines: Dict[KeyPath, int], source, error):
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode) and node.tag == _PLAIN_MAP:
        loader.flatten_mapping(node)
        out: Dict[str, Any] = {}
        seen: Dict[str, int] = {}
        for key_node, value_node in node.value:
            where = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                raise error(source, where, "", "not valid YAML: found unhashable key")
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise error(source, where, format_keypath(path), f"key {key!r} is not a string; quote it")
            if key in seen:
                raise error(source, where, format_keypath(path + (key,)), f"is given twice (first on line {seen[key]}); keep one")
            seen[key] = where
            lines[path + (key,)] = where  # the key's line, where users look
            out[key] = _construct(loader, value_node, path + (key,), lines, source, error)
        return out
    if isinstance(node, yaml.SequenceNode) and node.tag == _PLAIN_SEQ:
        return [_construct(loader, item, path + (index,), lines, source, error) for index, item in enumerate(node.value)]
    # Scalars, and anything tagged: the safe constructor refuses tags it does not know.
    return loader.construct_object(node, deep=True)


def line_of(lines: Dict[KeyPath, int], path: KeyPath) -> Optional[int]:
    """The line of ``path``, or of its nearest ancestor that has one (for missing keys)."""
    while path not in lines and path:
        path = path[:-1]
    return lines.get(path)


def format_keypath(path: Sequence[Union[str, int]]) -> str:
    """``("node_types", "gpu", "mig", 0)`` -> ``node_types.gpu.mig[0]``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
