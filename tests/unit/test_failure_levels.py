"""A finding that says the job will fail is an error, never a warning: submit refuses it
instead of queueing a job that stops in 0 s (core/findings.py: CERTAIN_FAILURE, HEDGES).

Two guards: every warning a check writes in the package's source is read, and none may say the
job will fail (a new one that does fails here, naming its file and line); and each check whose
words do say so is shown to be an error on a spec that meets it."""

import ast
from pathlib import Path

import pytest

from slurmkit import Job
from slurmkit.core.findings import CERTAIN_FAILURE, level_of, predicts_failure

PACKAGE = Path(__file__).resolve().parents[2] / "slurmkit"


def _strings(node: ast.AST) -> str:
    """The literal text of ``node``'s strings (an f-string's fixed parts), joined."""
    return " ".join(n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def _warning_texts(tree: ast.AST):
    """(line, text) of each warning written as one: ``findings.warn(field, TEXT)``,
    ``Finding("warning", field, TEXT)`` and ``("warning", field, TEXT)``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "warn" and len(node.args) == 2:
            yield node.lineno, _strings(node.args[1])
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Finding" and node.args \
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == "warning":
            yield node.lineno, _strings(node)
        elif isinstance(node, ast.Tuple) and len(node.elts) == 3 and isinstance(node.elts[0], ast.Constant) \
                and node.elts[0].value == "warning":
            yield node.lineno, _strings(node)


def test_no_warning_in_the_package_says_the_job_will_fail():
    said = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, text in _warning_texts(ast.parse(path.read_text(encoding="utf-8"))):
            if predicts_failure(" ".join(text.split())):
                said.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {text[:100]}")
    assert said == [], "a finding that says the job will fail must be an error (findings.error):\n" + "\n".join(said)


def test_the_guard_would_catch_a_warning_that_says_the_job_stops():
    tree = ast.parse('findings.warn("x", f"{name} is unset: the job stops with \'{name}: unbound variable\'")')
    assert [predicts_failure(text) for _, text in _warning_texts(tree)] == [True]


@pytest.mark.parametrize("message, level", [
    ("$X: nothing sets it in a kind 'mpi' job, so under set -u the job stops with 'X: unbound variable'", "error"),
    ("req.txt is not on this host: pip install -r stops the job", "error"),
    ("kind 'accelerate' needs accelerate: the job would stop at once (a program or module not found)", "error"),
    ("$X: nothing sets it, so under set -u the job stops with 'X: unbound variable' unless it is exported when you submit",
     "warning"),
    ("data.tar is not on this host: the job stops when it stages it in, unless something puts it there", "warning"),
    ("$X: nothing sets it, so it reads as empty there (environment.nounset: false)", "warning"),
])
def test_the_words_that_make_a_finding_an_error(message, level):
    assert level_of(message) == level
    assert any(words in message for words in CERTAIN_FAILURE) or level == "warning"


def job(command, **fields):
    return Job(name="w", profile="nibi", account="def-x", resources={"time": "1h", **fields.pop("resources", {})},
               launch=command, **fields)


@pytest.mark.parametrize("command, fields, words", [
    ("python t.py --seed $SLURM_ARRAY_TASK_ID", {}, "SLURM sets it only in array jobs"),
    ("./solver --peer $MASTER_ADDR", {"kind": "mpi", "resources": {"nodes": 2}}, "nothing sets it in a kind 'mpi' job"),
    ("python t.py --rank $RANK", {"kind": "ddp", "resources": {"nodes": 2, "gpus": "h100:4"}}, "each process gets it"),
    ("./build.sh $EBROOTNCCL", {}, "the nccl module sets it"),
    ("python t.py --env $VIRTUAL_ENV", {}, "this job does not set it"),
    ("python t.py", {"kind": "accelerate", "resources": {"gpus": "h100:2"}, "environment": {"venv": {"packages": ["torch"]}}},
     "the job would stop at once"),
])
def test_each_check_that_predicts_failure_is_an_error_and_render_refuses_it(command, fields, words):
    resolution = job(command, **fields).resolve()
    assert resolution.plan is None
    assert [f.message for f in resolution.errors if words in f.message], resolution.findings
    with pytest.raises(Exception, match="would stop at once|unbound variable"):
        job(command, **fields).render()


def test_a_variable_the_submit_shell_may_export_stays_a_warning():
    resolution = job("python t.py --data $DATASET").resolve()
    assert resolution.plan is not None and [f.level for f in resolution.findings if "DATASET" in f.message] == ["warning"]
