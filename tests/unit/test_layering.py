"""The house's fitness function: every import in slurmkit/ goes down the layers, takes only public
names, and closes no circle.

The packages follow the data flow, bottom to top (docs/architecture.md):

    core < sites < spec < resolve < render < build < slurm < report < port < api < cli

A module may import from its own package and from the packages below it; the package's
``__init__`` (the public API) and ``__main__`` (``python -m slurmkit``) sit above them all.
Every import counts, including those inside functions and under ``if TYPE_CHECKING:``: a
deferred import is still a dependency, and hiding a circle inside a function is how the old
flat package grew nine-module rings.
"""

import ast
import shutil
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

import slurmkit

PACKAGE = Path(slurmkit.__file__).resolve().parent
LAYERS = ("core", "sites", "spec", "resolve", "render", "build", "slurm", "report", "port", "api", "cli")
#: Subpackages that hold data, not code (the wheel's templates and site profiles).
DATA_PACKAGES = ("templates", "site_profiles", "schema")
#: The root package's own modules: its public API, and ``python -m slurmkit``.
ROOT_MODULES = ("__init__.py", "__main__.py")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path) -> Dict[str, Path]:
    return {module_name(path, root): path for path in sorted(root.rglob("*.py"))}


def imports(path: Path, name: str, known: Set[str]) -> Iterator[Tuple[int, str, str]]:
    """(line, module imported, name taken from it or "") for each slurmkit import in the file."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "slurmkit":
                    yield node.lineno, alias.name, ""
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "slurmkit":
                continue
            for alias in node.names:
                if f"{target}.{alias.name}" in known:      # from slurmkit.core import units: the module
                    yield node.lineno, f"{target}.{alias.name}", ""
                else:
                    yield node.lineno, target, alias.name


def layer_of(module: str) -> int:
    """The layer index of a module; the root package (and its ``__main__``) is above every layer."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1:] == ["__main__"]:
        return len(LAYERS)
    return LAYERS.index(parts[1]) if parts[1] in LAYERS else -1


def violations(root: Path) -> List[str]:
    """Every broken rule in the package at ``root``, one line each (empty: the house stands)."""
    found = modules(root)
    known = set(found)
    problems, graph = [], {name: set() for name in found}
    for name, path in found.items():
        parts = name.split(".")
        if len(parts) > 1 and parts[1] not in LAYERS + DATA_PACKAGES and path.name not in ROOT_MODULES and len(parts) == 2:
            problems.append(f"{name}: a module outside the packages; put it in one of {', '.join(LAYERS)}")
        elif len(parts) > 2 and parts[1] not in LAYERS:
            problems.append(f"{name}: package {parts[1]!r} has no layer; add it to LAYERS (tests/unit/test_layering.py)")
        for line, target, taken in imports(path, name, known):
            where = f"{path.relative_to(root.parent)}:{line}"
            if target not in known:
                problems.append(f"{where}: imports {target}, which does not exist")
                continue
            if target != name:
                graph[name].add(target)
            if layer_of(target) > layer_of(name):
                problems.append(f"{where}: {name} imports {target}, a higher layer")
            if taken.startswith("_") and not (taken.startswith("__") and taken.endswith("__")) and target != name:
                problems.append(f"{where}: {name} imports the private name {taken} of {target}")
    problems += [f"import circle: {' -> '.join(ring)}" for ring in circles(graph)]
    return problems


def circles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            ring = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                ring.append(other)
                if other == node:
                    break
            if len(ring) > 1:
                found.append(sorted(ring))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_every_import_goes_down_the_layers_takes_public_names_and_closes_no_circle():
    assert violations(PACKAGE) == []


def test_every_package_of_slurmkit_has_a_layer():
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    assert packages - set(LAYERS) - set(DATA_PACKAGES) == set()
    assert sorted(path.name for path in PACKAGE.glob("*.py")) == list(ROOT_MODULES), "modules belong in a package"


@pytest.fixture
def copy(tmp_path):
    """A copy of the package to plant faults in, and a function giving what the plant added
    (so that these tests pin the checker, whatever the state of the package itself)."""
    target = tmp_path / "slurmkit"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__", "templates", "site_profiles"))
    before = set(violations(target))
    return target, lambda: sorted(set(violations(target)) - before)


def _plant(path: Path, line: str) -> None:
    path.write_text(path.read_text() + "\n\ndef _planted():\n    " + line + "\n")


def test_a_planted_import_from_a_higher_layer_fails(copy):
    root, added = copy
    _plant(root / "core" / "units.py", "from slurmkit.cli.main import fail")
    problems = added()
    assert ("slurmkit/core/units.py:" + _last_line(root / "core" / "units.py")
            + ": slurmkit.core.units imports slurmkit.cli.main, a higher layer") in problems
    rings = [p.split(": ", 1)[1].split(" -> ") for p in problems if p.startswith("import circle: ")]
    assert any({"slurmkit.cli.main", "slurmkit.core.units"} <= set(ring) for ring in rings)   # cli imports units


def test_a_planted_private_import_fails(copy):
    root, added = copy
    _plant(root / "render" / "render.py", "from slurmkit.core.units import _planted_secret")
    problems = added()
    assert len(problems) == 1 and "imports the private name _planted_secret of slurmkit.core.units" in problems[0]


def test_a_planted_circle_inside_a_package_fails(copy):
    root, added = copy
    _plant(root / "core" / "units.py", "from slurmkit.core import records")
    _plant(root / "core" / "records.py", "import slurmkit.core.units")
    assert added() == ["import circle: slurmkit.core.records -> slurmkit.core.units"]


def test_a_relative_import_is_read_like_an_absolute_one(copy):
    root, added = copy
    _plant(root / "spec" / "spec.py", "from ..port import porting")
    assert any("slurmkit.spec.spec imports slurmkit.port.porting, a higher layer" in p for p in added())


def _last_line(path: Path) -> str:
    return str(len(path.read_text().splitlines()))
