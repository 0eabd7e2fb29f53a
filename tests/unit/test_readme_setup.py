"""The README's set-up leaves a working `slurmkit` in the shell that ran it: the set-up line
activates the virtualenv before it runs `slurmkit`, and the rest of the README's commands (plain
`slurmkit ...`) then find it on PATH. The test command stays what CI runs."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")


def setup_commands():
    section = README.split("## Set-up on a fresh Debian machine", 1)[1]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    return [line for line in blocks[0].splitlines() if line.strip()], blocks[1].strip()


def test_the_set_up_line_activates_the_venv_before_it_runs_slurmkit():
    (line,), _ = setup_commands()
    steps = [step.strip() for step in line.split("&&")]
    venv = next(i for i, step in enumerate(steps) if step.startswith("python3 -m venv .venv"))
    activate = next(i for i, step in enumerate(steps) if step in ("source .venv/bin/activate", ". .venv/bin/activate"))
    first_bare = next(i for i, step in enumerate(steps) if step.split()[0] == "slurmkit")
    assert venv < activate < first_bare


def test_the_test_command_is_what_ci_runs():
    _, tests = setup_commands()
    assert tests == "bash tests/run" and "exec bash tests/run" in (REPO / ".ci" / "run").read_text()


@pytest.mark.skipif(not (Path(sys.prefix) / "bin" / "activate").is_file(), reason="the tests do not run in a virtualenv")
def test_after_the_set_up_line_slurmkit_is_on_path(tmp_path):
    """The set-up line from its activation on, in a shell whose PATH has no slurmkit, with this
    checkout's virtualenv as .venv: `slurmkit new` runs, and so does a later bare `slurmkit`."""
    (line,), _ = setup_commands()
    steps = [step.strip() for step in line.split("&&")]
    start = next(i for i, step in enumerate(steps) if "activate" in step)
    (tmp_path / ".venv").symlink_to(sys.prefix)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    script = " && ".join(steps[start:]) + " && slurmkit check myjob/job.yaml"
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "myjob" / "job.sbatch").is_file() and "#!/bin/bash" in result.stdout
    assert os.path.isfile(tmp_path / "myjob" / "job.yaml")
