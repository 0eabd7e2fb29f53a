"""Print the unit test files that .ci/run runs on the dependency floors, one a line, chosen by a
rule rather than by hand: every file that imports a slurmkit module which itself imports a
dependency (jinja2, click, yaml, ruamel, tree-sitter, submitit, rich: pyproject.toml's list),
plus the metadata test. A floor that breaks a dependency's API breaks it in one of those
modules, and each is then exercised on the floor by the tests written for it, not only through
whatever a hand-picked file happens to reach. Fails (exit 1, one line a module) when a module
that imports a dependency is imported by no unit test, or a dependency by no module, so that
the rule cannot silently cover less than it says."""

import ast
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from minimum_versions import ROOT, dependencies  # noqa: E402  (a script beside this one, not a package)

#: the import name of each distribution whose name is not its module's.
IMPORT_NAMES = {"pyyaml": "yaml", "ruamel.yaml": "ruamel", "tree-sitter": "tree_sitter", "tree-sitter-bash": "tree_sitter_bash"}
#: always run: the packaging metadata the floors are read from.
ALWAYS = ("tests/unit/test_package_metadata.py",)
#: never on the floors: the house rules (ruff, mypy, radon) judge the code, and mypy reads the newest hints.
NEVER = ("tests/unit/test_house.py",)


def lazy_commands() -> dict:
    """The CLI's command names -> their modules (cli/main.py's LAZY_COMMANDS, read, not imported:
    this runs before the dependencies are installed)."""
    tree = ast.parse((ROOT / "slurmkit" / "cli" / "main.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "LAZY_COMMANDS" for t in node.targets):
            return {name: target.split(":")[0] for name, target in ast.literal_eval(node.value).items()}
    raise SystemExit("floor-tests: slurmkit/cli/main.py has no LAZY_COMMANDS")


def imported(path: Path, commands: dict) -> set:
    """Every module name ``path`` imports (``from a.b import c`` gives a.b and a.b.c), anywhere in
    it; a test of the CLI (it imports slurmkit.cli.main, or runs it in a subprocess) imports
    too the module of each command it names as a string ("port"), which main loads on that name."""
    names, words = set(), set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            words.add(node.value)
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):   # a CLI in a subprocess: "from slurmkit.cli.main import ..."
            names.update(f"{a}.{b}" for a, b in re.findall(r"from (slurmkit[\w.]*) import (\w+)", node.value))
    if "slurmkit.cli.main" in names:
        names.update(module for command, module in commands.items() if command in words)
    return names


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def tests_in(path: Path) -> int:
    """How many test functions ``path`` defines: the measure of a file's cost (parametrized cases counted once)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return sum(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_") for node in ast.walk(tree))


def own_file(module: str, candidates: list) -> Path:
    """The test file of ``module``: its namesake (``test_render.py`` for render.py), else the
    smallest file that imports it (the fewest test functions; then by name)."""
    stem = module.rsplit(".", 1)[-1]
    for path in candidates:
        if path.name == f"test_{stem}.py":
            return path
    return min(candidates, key=lambda path: (tests_in(path), path.name))


def main() -> int:
    packages = {re.split(r"[<>=!~ ;\[]", requirement, 1)[0].lower() for requirement in dependencies((ROOT / "pyproject.toml").read_text())}
    tops = {IMPORT_NAMES.get(name, name) for name in packages}
    touching = {}
    for path in sorted((ROOT / "slurmkit").rglob("*.py")):
        used = {name.split(".")[0] for name in imported(path, {})} & tops
        if used:
            touching[module_name(path)] = used
    unused = tops - set().union(*touching.values())
    problems = [f"floor-tests: no slurmkit module imports {top}: is it still a dependency?" for top in sorted(unused)]
    commands = lazy_commands()
    files = [path for path in sorted((ROOT / "tests" / "unit").glob("test_*.py")) if str(path.relative_to(ROOT)) not in NEVER]
    imports = {path: imported(path, commands) for path in files}
    chosen = list(ALWAYS)
    for module in sorted(touching):
        candidates = [path for path in files if module in imports[path]]
        if not candidates:
            problems.append(f"floor-tests: no unit test imports {module} (it imports {', '.join(sorted(touching[module]))}): add one")
            continue
        name = str(own_file(module, candidates).relative_to(ROOT))
        if name not in chosen:
            chosen.append(name)
    if problems:
        sys.stderr.write("".join(line + "\n" for line in problems))
        return 1
    sys.stdout.write("".join(line + "\n" for line in chosen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
