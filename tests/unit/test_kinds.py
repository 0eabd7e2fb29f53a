"""The kinds are data (slurmkit/core/kinds.py): no other module compares, lists or picks a kind by name.

The check reads the source as Python (ast): a kind's name is allowed in docstrings and where the
same word means something else ("gpu" a gres, "array" a JSON type, "horovod" a build), but not
where code asks which kind a job is: compared with something named kind, gathered with other
kind names into a tuple, set, list or dict, or given to something named kind. Each of those must
ask the table instead (kind_of(spec).gpu_required, KINDS[...].sweeps). Nor may a message spell
a kind out ("use kind 'gpu'"): it names the kind by what it does (first_kind(sweeps=True).name),
so that a renamed or added kind is offered everywhere at once.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from slurmkit.core import kinds
from slurmkit.core.kinds import KIND_NAMES, KINDS, first_kind, kind_of
from slurmkit.spec.spec import spec_from_mapping

PACKAGE = Path(kinds.__file__).parent.parent   # slurmkit/, above core/
NAMES = frozenset(KIND_NAMES)


def _kind_constants(node: ast.AST):
    """Kind-name string constants in an expression, looking through tuples, conditionals and or/and."""
    if isinstance(node, ast.Constant) and node.value in NAMES:
        yield node
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        for item in node.elts:
            yield from _kind_constants(item)
    elif isinstance(node, ast.IfExp):
        yield from _kind_constants(node.body)
        yield from _kind_constants(node.orelse)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from _kind_constants(value)
    elif isinstance(node, ast.BinOp):
        yield from _kind_constants(node.left)
        yield from _kind_constants(node.right)


def _mentions_kind(node: ast.AST) -> bool:
    return "kind" in ast.unparse(node).lower()


_KIND_IN_TEXT = re.compile(r"\bkinds?(:| of| is)? ['`\"]?(" + "|".join(sorted(map(re.escape, NAMES), key=len, reverse=True))
                           + r")(?![\w-])")


def _docstrings(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            yield id(node.body[0].value)


def kind_names_in_messages(source: str):
    """(line, text) for each string (not a docstring) that spells a kind out after the word kind."""
    tree = ast.parse(source)
    skip = set(_docstrings(tree))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
            and _KIND_IN_TEXT.search(node.value)]


def kind_name_uses(source: str):
    """(line, what) for each place the source asks about a kind by its name."""
    tree = ast.parse(source)
    found = []
    functions = {}
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(function):
                functions.setdefault(id(inner), function.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_mentions_kind(s) for s in sides) and any(c for s in sides for c in _kind_constants(s)):
                found.append((node.lineno, "compared: " + ast.unparse(node)))
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(node.elts) > 1 \
                and all(isinstance(e, ast.Constant) and e.value in NAMES for e in node.elts):
            found.append((node.lineno, "listed: " + ast.unparse(node)))
        elif isinstance(node, ast.Dict) and len(node.keys) > 1 \
                and all(isinstance(k, ast.Constant) and k.value in NAMES for k in node.keys):
            found.append((node.lineno, "keyed: " + ast.unparse(node)[:60]))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(_mentions_kind(t) for t in targets) and any(_kind_constants(node.value)):
                found.append((node.lineno, "assigned: " + ast.unparse(node)))
        elif isinstance(node, ast.keyword) and node.arg and "kind" in node.arg and any(_kind_constants(node.value)):
            found.append((node.value.lineno, "passed: " + ast.unparse(node)))
        elif isinstance(node, ast.Return) and node.value is not None and "kind" in functions.get(id(node), "") \
                and any(_kind_constants(node.value)):
            found.append((node.lineno, "returned: " + ast.unparse(node)))
        elif isinstance(node, ast.Call) and any(isinstance(a, ast.Constant) and a.value == "kind" for a in node.args) \
                and any(isinstance(c, ast.Constant) and c.value in NAMES for a in node.args for c in ast.walk(a)):
            found.append((node.lineno, "given with the key kind: " + ast.unparse(node)))
    return found


def test_no_module_but_kinds_asks_for_a_kind_by_name():
    uses = {str(path.relative_to(PACKAGE)): kind_name_uses(path.read_text())
            for path in sorted(PACKAGE.rglob("*.py")) if path.name != "kinds.py"}
    assert {name: found for name, found in uses.items() if found} == {}


def test_no_message_spells_a_kind_out():
    uses = {str(path.relative_to(PACKAGE)): kind_names_in_messages(path.read_text())
            for path in sorted(PACKAGE.rglob("*.py")) if path.name != "kinds.py"}
    assert {name: found for name, found in uses.items() if found} == {}


@pytest.mark.parametrize("source", [
    'm = f"kind {kind!r} runs one process; use kind \'gpu\'"',
    'm = "only kind \'many-tasks\' runs a task file"',
    'm = f"set kind: array (it is {kind!r})"',
    'm = "kind multigpu: torchrun starts one process per GPU"',
    'm = "use kinds `ddp` or `horovod`"',
])
def test_the_message_check_catches_a_kind_spelled_out(source):
    assert kind_names_in_messages(source)


@pytest.mark.parametrize("source", [
    'def f():\n    """Kind \'gpu\' runs one process."""',
    'm = f"use kind {first_kind(sweeps=True).name!r}"',
    'm = "kind gpus of the node"',
    'm = "a gpu job; an array of tasks"',
])
def test_the_message_check_leaves_docstrings_and_other_words(source):
    assert kind_names_in_messages(source) == []


@pytest.mark.parametrize("source", [
    'if spec.kind == "gpu": pass',
    'if spec.kind in ("mpi", "horovod"): pass',
    'ok = answers["kind"] not in DISTRIBUTED or kind != "serial"',
    'X = ("ddp", "tf-multiworker")',
    'X = {"ddp": 1, "horovod": 2}',
    'spec["kind"] = "array"',
    'f(kind="gpu" if gpus else "serial")',
    'def _plain_kind(b):\n    return "threaded"',
    'k = top.get("kind", "serial")',
    'rule = _given("kind", {"const": "array"})',
])
def test_the_check_catches_each_way_of_naming_a_kind(source):
    assert kind_name_uses(source)


@pytest.mark.parametrize("source", [
    'if gres.name == "gpu": pass',
    'BUILDS = ("horovod", "mpi4py")',
    'schema = {"type": "array"}',
    'if kind_of(spec).gpu_required: pass',
])
def test_the_check_leaves_other_uses_of_the_words(source):
    assert kind_name_uses(source) == []


def test_every_kind_has_a_template_and_a_default_launcher_it_allows():
    from slurmkit.core.bundled import templates_dir
    from slurmkit.core.launchers import LAUNCHERS
    templates = templates_dir()
    for kind in KINDS.values():
        assert (templates / kind.script_template).is_file(), kind.name
        assert kind.processes in (kinds.ONE, kinds.PER_TASK, kinds.PER_GPU), kind.name
        assert kind.launchers and set(kind.launchers) <= set(LAUNCHERS), kind.name


def test_views_agree_with_the_rows():
    from slurmkit.spec import spec
    assert spec.KINDS == KIND_NAMES and spec.DISTRIBUTED_KINDS == tuple(k.name for k in KINDS.values() if k.distributed)
    assert kinds.MULTI_NODE_GPU_KINDS == tuple(k.name for k in KINDS.values() if k.spreads_over_nodes)
    assert all(KINDS[k.other_framework_kind].framework_only for k in KINDS.values() if k.framework_only)
    assert first_kind(sweeps=True) is KINDS["array"] and first_kind(runs_task_file=True) is KINDS["many-tasks"]


def test_kind_of_a_spec_is_its_row():
    spec = spec_from_mapping({"name": "t", "profile": "fir", "kind": "ddp", "resources": {"time": "1h", "gpus": "h100:2"},
                              "launch": {"command": "python train.py"}})
    assert kind_of(spec) is KINDS["ddp"] and kind_of(spec).spreads_over_nodes and not kind_of(spec).one_node_only
