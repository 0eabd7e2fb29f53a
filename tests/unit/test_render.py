"""render.py's word filters, checked by bash itself."""

import os
import subprocess

from slurmkit.render.render import words


def test_a_first_word_that_looks_like_an_assignment_is_run_as_a_command(tmp_path):
    program = tmp_path / "A=1"
    program.write_text("#!/bin/sh\necho ran \"$@\"\n")
    program.chmod(0o755)
    line = words(["A=1", "x"])
    out = subprocess.run(["bash", "-c", line], capture_output=True, text=True,
                         env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"})
    assert out.stdout == "ran x\n"


def test_later_words_that_look_like_assignments_stay_plain():
    assert words(["env", "A=1", "prog"]) == "env A=1 prog"


def test_a_requirement_under_the_home_folder_reaches_pip_expanded(tmp_path):
    """pip expands no ``~``: a quoted one names a folder ``~`` in the current one, and the install fails."""
    from slurmkit.render.render import requirements

    line = "printf '%s\\n' " + requirements(["~/w/a-1.0-py3-none-any.whl", "$HOME/my wheels/b.whl", "numpy>=1.2", "~", "x~/y"])
    out = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env={**os.environ, "HOME": str(tmp_path)})
    assert out.stdout.splitlines() == [f"{tmp_path}/w/a-1.0-py3-none-any.whl", f"{tmp_path}/my wheels/b.whl", "numpy>=1.2",
                                       "~", "x~/y"]


def test_the_virtualenv_recipe_installs_a_wheel_of_the_home_folder():
    from slurmkit import Job
    from slurmkit.render.render import render

    spec = {"name": "j", "profile": "fir", "account": "def-x", "resources": {"time": "1:00:00"},
            "environment": {"venv": {"packages": ["numpy", "~/w/a-1.0-py3-none-any.whl"]}}, "launch": {"command": "python t.py"}}
    text = render(Job(**spec).resolve().plan)
    assert 'pip install --no-index numpy "$HOME"/w/a-1.0-py3-none-any.whl\n' in text
