"""The public API as a type checker sees it: real classes and functions, not the Any of the
lazy ``slurmkit.__getattr__``. mypy checks a user's program (strict, as a careful user runs it)
and the types it reveals are compared with what the API promises."""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import slurmkit

ROOT = Path(slurmkit.__file__).resolve().parent.parent

#: a user's program, up to what it asks mypy to reveal.
PROGRAM = """
from typing import List

import slurmkit
from slurmkit import ChainHandle, Handle, Job, JobFailed, JobHandle, JobStatus, SweepHandle, WaitTimeout
from slurmkit import as_completed, submit_function, tracked


def double(x: int) -> float:
    return 2.0 * x


job = Job(name="t", profile="local", resources={"time": "5m"}, launch="true")
handle = job.submit(after=["12"])
future = submit_function(double, 3, spec=job)
every: List[Handle[object]] = [handle, future, *tracked()]
slurmkit.Jbo  # a misspelt name is an error, not an Any
"""
EXPECTED_ERRORS = ['Module has no attribute "Jbo"']

#: each expression of the program, and the type mypy must reveal for it.
REVEALED = [
    ("job", "slurmkit.api.job.Job"),
    ("Job.from_yaml('job.yaml')", "slurmkit.api.job.Job"),
    ("job.render()", "str"),
    ("job.test_only()", "str"),
    ("job.build_env()", "pathlib.Path"),
    ("handle", "slurmkit.slurm.submit.JobHandle[int] | slurmkit.slurm.submit.SweepHandle | slurmkit.slurm.submit.ChainHandle"),
    ("handle.result()", "int | list[int]"),
    ("future", "slurmkit.slurm.submit.JobHandle[float]"),
    ("future.result()", "float"),
    ("future.wait(timeout=5.0)", "slurmkit.slurm.monitor.JobStatus"),
    ("future.status().exit_code", "int | None"),
    ("as_completed([future, future])", "typing.Iterator[slurmkit.slurm.submit.JobHandle[float]]"),
    ("tracked(limit=3)", "list[slurmkit.slurm.submit.JobHandle[Any] | slurmkit.slurm.submit.SweepHandle"
                         " | slurmkit.slurm.submit.ChainHandle]"),
    ("JobStatus('1', 'RUNNING')", "slurmkit.slurm.monitor.JobStatus"),
    ("SweepHandle('logs', '7', 3).tasks", "list[slurmkit.slurm.submit.JobHandle[int]]"),
    ("ChainHandle([JobHandle('logs', '8')]).current()", "slurmkit.slurm.submit.JobHandle[int]"),
    ("JobFailed(JobStatus('1', 'FAILED', 1)).exit_status", "int | None"),
    ("WaitTimeout('job 1')", "slurmkit.slurm.outcomes.WaitTimeout"),
]


def shown(revealed: str) -> str:
    """mypy's text for a record (a NamedTuple to it) is its fields' tuple: its class's name instead."""
    record = re.fullmatch(r"tuple\[.*, fallback=([\w.]+)\]", revealed)
    return record.group(1) if record else revealed


def run_mypy(tmp_path: Path, program: str) -> subprocess.CompletedProcess:
    """mypy on ``program`` as a user runs it, slurmkit found as this checkout's source; errors
    in slurmkit itself are the package's own mypy run's business, not this test's."""
    (tmp_path / "user.py").write_text(program)
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-error-summary",
                           "--cache-dir", str(tmp_path / "cache"), "user.py"],
                          cwd=tmp_path, env={**os.environ, "MYPYPATH": str(ROOT)}, capture_output=True, text=True)


def test_a_type_checker_sees_the_real_classes_and_return_types(tmp_path):
    program = PROGRAM + "".join(f"reveal_type({expression})\n" for expression, _ in REVEALED)
    result = run_mypy(tmp_path, program)
    asked = {len(PROGRAM.splitlines()) + 1 + index: expression for index, (expression, _) in enumerate(REVEALED)}
    revealed, errors = {}, []
    for line in result.stdout.splitlines():
        note = re.fullmatch(r'user\.py:(\d+): note: Revealed type is "(.*)"', line)
        if note:
            revealed[asked[int(note.group(1))]] = shown(note.group(2))
        elif ": error: " in line:
            errors.append(line.split(": error: ", 1)[1].rsplit("  [", 1)[0])
    assert result.stderr == ""
    assert revealed == dict(REVEALED)
    assert errors == EXPECTED_ERRORS


def test_every_lazy_name_is_shown_to_type_checkers_from_the_module_it_is_loaded_from():
    """The TYPE_CHECKING imports of slurmkit/__init__.py and its _LAZY table name the same
    things: a name added to one only is Any to type checkers, or missing at run time."""
    tree = ast.parse((ROOT / "slurmkit" / "__init__.py").read_text())
    block = next(node for node in tree.body if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING")
    shown_to_checkers = {alias.name: node.module for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert shown_to_checkers == slurmkit._LAZY
    assert all(alias.asname == alias.name for node in block.body for alias in node.names)   # exported under --strict
