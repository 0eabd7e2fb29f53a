"""The house rules a reviewer would otherwise check by hand: ruff's lint, mypy's types, and
functions simple enough to read (radon: none ranked D or worse, i.e. complexity above 20).

Each runs on the repository as it is, so a change that breaks one fails the suite with the
tool's own lines; the tools' settings are in pyproject.toml (ruff) and setup.cfg (mypy).
"""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: radon's rank D starts above this cyclomatic complexity.
MOST_COMPLEX = 20


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *argv], cwd=REPO, capture_output=True, text=True)


def test_ruff_finds_nothing():
    done = _run("ruff", "check", "--no-cache", "slurmkit", "tests", "bench", "docs")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_nothing_in_the_package():
    done = _run("mypy", "--no-incremental", "--cache-dir", "/dev/null")
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_function_is_more_complex_than_rank_c():
    from radon.visitors import ComplexityVisitor  # the test extras install radon

    too_complex = []
    for path in sorted((REPO / "slurmkit").rglob("*.py")):
        visitor = ComplexityVisitor.from_code(path.read_text())
        for function in [*visitor.functions, *(m for c in visitor.classes for m in c.methods)]:
            if function.complexity > MOST_COMPLEX:
                too_complex.append(f"{path.relative_to(REPO)}:{function.lineno} {function.name}: {function.complexity}")
    assert too_complex == []
