"""The kinds are data (slurmkit/kinds.py): no other module compares, lists or picks a kind by name.

The check reads the source as Python (ast): a kind's name is allowed in messages (f-strings,
prose) and where the same word means something else ("gpu" a gres, "array" a JSON type,
"horovod" a build), but not where code asks which kind a job is: compared with something named
kind, gathered with other kind names into a tuple, set, list or dict, or given to something named
kind. Each of those must ask the table instead (kind_of(spec).gpu_required, KINDS[...].sweeps).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from slurmkit import kinds
from slurmkit.kinds import KIND_NAMES, KINDS, first_kind, kind_of
from slurmkit.spec import spec_from_mapping

PACKAGE = Path(kinds.__file__).parent
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
    uses = {path.name: kind_name_uses(path.read_text()) for path in sorted(PACKAGE.glob("*.py")) if path.name != "kinds.py"}
    assert {name: found for name, found in uses.items() if found} == {}


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
    'message = f"kind {kind!r} runs one process; use kind \'gpu\'"',
    'if gres.name == "gpu": pass',
    'BUILDS = ("horovod", "mpi4py")',
    'schema = {"type": "array"}',
    'if kind_of(spec).gpu_required: pass',
])
def test_the_check_leaves_other_uses_of_the_words(source):
    assert kind_name_uses(source) == []


def test_every_kind_has_a_template_and_a_default_launcher_it_allows():
    from slurmkit.bundled import templates_dir
    templates = templates_dir()
    for kind in KINDS.values():
        assert (templates / kind.script_template).is_file(), kind.name
        assert kind.processes in (kinds.ONE, kinds.PER_TASK, kinds.PER_GPU), kind.name
        assert kind.launchers and set(kind.launchers) <= {"direct", "srun", "mpirun", "torchrun"}, kind.name


def test_views_agree_with_the_rows():
    from slurmkit import spec
    assert spec.KINDS == KIND_NAMES and spec.DISTRIBUTED_KINDS == tuple(k.name for k in KINDS.values() if k.distributed)
    assert kinds.MULTI_NODE_GPU_KINDS == tuple(k.name for k in KINDS.values() if k.spreads_over_nodes)
    assert all(KINDS[k.other_framework_kind].framework_only for k in KINDS.values() if k.framework_only)
    assert first_kind(sweeps=True) is KINDS["array"] and first_kind(runs_task_file=True) is KINDS["many-tasks"]


def test_kind_of_a_spec_is_its_row():
    spec = spec_from_mapping({"name": "t", "profile": "fir", "kind": "ddp", "resources": {"time": "1h", "gpus": "h100:2"},
                              "launch": {"command": "python train.py"}})
    assert kind_of(spec) is KINDS["ddp"] and kind_of(spec).spreads_over_nodes and not kind_of(spec).one_node_only
