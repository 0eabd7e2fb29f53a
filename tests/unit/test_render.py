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
