"""No statement follows a return or raise in a function body.

A merge once left a handle's method indented after a module-level function's return: it
became an unreachable nested function, the class fell back to the base class's method, and
ruff, mypy and the unit tier all passed. Code after a return is never meant."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "slurmkit"


def test_nothing_follows_a_return_or_raise_in_a_function():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                ends = [i for i, statement in enumerate(node.body) if isinstance(statement, (ast.Return, ast.Raise))]
                if ends and ends[0] + 1 < len(node.body):
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{node.body[ends[0] + 1].lineno} after {node.name}'s end")
    assert found == []


def test_a_handles_cancel_is_slurmkits_own():
    """JobHandle.cancel goes through run_slurm (one error at once for a configuration SLURM
    cannot read), not submitit's scancel, which retries for a minute."""
    from slurmkit.slurm.submit import JobHandle

    assert "cancel" in vars(JobHandle)
