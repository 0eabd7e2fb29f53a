"""A job whose payload is Python loads the site's python module: without it
the command runs the compute node's OS python, which the Alliance Python page warns against and
which has none of the site's wheels."""

import pytest

from slurmkit.core.programs import runs_python

from .test_resolve import job


@pytest.mark.parametrize("command, python", [
    (["python", "train.py"], True),
    (["python3.11", "-m", "pkg"], True),
    (["/usr/bin/python3", "x.py"], True),
    (["PYTHONHASHSEED=0", "python", "x.py"], True),
    (["./a.out"], False),
    (["pythonic-tool"], False),
    (["bash", "-c", "python x.py"], False),      # a shell line: slurmkit does not guess inside it
])
def test_a_python_payload_is_recognised_by_its_program(command, python):
    assert runs_python(command) is python


@pytest.mark.parametrize("kind", ["serial", "threaded", "array"])
def test_a_python_payload_without_a_venv_loads_the_sites_python(kind):
    fields = {"array": {"parameters": {"x": [1, 2]}}} if kind == "array" else {}
    plan = job("narval", {}, kind=kind, launch="python analyse.py", **fields).plan
    assert "python/3.12" in plan.modules and plan.modules[0] == "StdEnv/2023"


def test_a_program_that_is_not_python_gets_no_python_module():
    assert not any(m.startswith("python/") for m in job("narval", {}, kind="serial", launch="./simulate --steps 10").plan.modules)


def test_the_users_own_python_version_is_kept():
    plan = job("narval", {}, kind="serial", launch="python x.py", environment={"modules": ["python/3.12"]}).plan
    assert [m for m in plan.modules if m.startswith("python/")] == ["python/3.12"]
