"""The modules behind the handles import one way: outcomes.py < submit.py < handles.py.

handles.py imports submit.py (inside the functions that need a handle's class); submit.py
must never import handles.py back, anywhere in it, or the two are one module split in two
files again. outcomes.py, which both use, imports neither.
"""

import ast
from pathlib import Path

import pytest

import slurmkit

SLURM = Path(slurmkit.__file__).parent / "slurm"


def imported_modules(path: Path) -> set:
    """Every module ``path`` imports, at any depth (in functions, under TYPE_CHECKING)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("module, below", [
    ("submit", ["handles"]),
    ("outcomes", ["handles", "submit"]),
])
def test_a_handle_module_never_imports_one_above_it(module, below):
    imported = imported_modules(SLURM / f"{module}.py")
    assert [name for name in below if f"slurmkit.slurm.{name}" in imported] == []


def test_the_names_that_moved_to_outcomes_still_import_from_handles_and_submit():
    from slurmkit.slurm import handles, outcomes, submit

    for name in ("JobFailed", "WaitTimeout", "script_result", "sweep_state", "sweep_result", "joined_logs", "log_tail",
                 "TAIL_LINES", "jobs_of", "deadline_of", "check_deadline"):
        assert getattr(handles, name) is getattr(outcomes, name)
    for name in ("JobHandle", "SweepHandle", "ChainHandle", "SlurmkitWatcher", "wait_all", "WAIT_CAP_S"):
        assert hasattr(submit, name)
