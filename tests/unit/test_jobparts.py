"""Files that are not one plain batch script: where import finds the job, and what it says
about the rest of the file."""

import pytest

from slurmkit.port import jobparts
from slurmkit.port.porting import import_script, submitted_script

JOB = "#!/bin/bash\n#SBATCH --account=def-x\n#SBATCH --time=1:00:00\n./run\n"


def test_a_plain_script_is_read_whole():
    assert jobparts.job_part(JOB) is None
    assert jobparts.job_part("#!/bin/bash\n# a comment\n#SBATCH --time=1:00:00\n./run\n") is None


def test_a_shebang_in_a_heredoc_or_a_string_starts_no_job():
    text = JOB + "cat > next.sh <<EOF\n#!/bin/bash\n#SBATCH --time=2:00:00\nEOF\nT=\"\n#!/bin/bash\n#SBATCH -n 1\n\"\n"
    assert jobparts.job_part(text) is None


def test_a_file_without_a_shebang_is_read_as_bash_with_a_note():
    imported = import_script("#SBATCH --account=def-x\n#SBATCH --time=2:00:00\n./run\n", name="t", profile="cedar")
    assert imported.spec["resources"]["time"] == "2:00:00" and imported.spec["launch"] == {"command": "./run"}
    assert [n.outcome for n in imported.notes if "no #! line" in n.reason] == ["mapped"]


def test_a_second_job_script_is_one_to_do_and_not_part_of_the_job():
    text = JOB + "\n" + JOB.replace("./run", "./merge")
    imported = import_script(text, name="t", profile="cedar")
    assert imported.spec["launch"] == {"command": "./run"}
    assert [(n.line, n.outcome) for n in imported.notes if n.reason] == [(6, "to do")]
    assert "./merge" not in submitted_script(text)   # verification runs the same job


def test_commands_above_the_job_scripts_shebang_are_one_to_do_and_the_lines_keep_their_numbers():
    text = "git clone x\nmodule load python\n\n" + JOB.replace("./run", "python t.py")
    imported = import_script(text, name="t", profile="cedar")
    assert imported.spec["launch"] == {"command": "python t.py"} and "environment" not in imported.spec
    # (and the python the job never loads: the module line above the shebang is not the job's)
    assert [(n.line, n.outcome) for n in imported.unmapped if n.text != "environment.venv"] == [(1, "to do")]
    assert submitted_script(text).startswith("#!/bin/bash\n#SBATCH")


def test_an_sbatch_line_after_the_first_command_is_ignored_with_a_note_as_sbatch_does():
    imported = import_script(JOB + "#SBATCH --mem=64G\n", name="t", profile="cedar")
    assert "mem" not in imported.spec["resources"]
    assert [(n.line, n.outcome) for n in imported.notes if n.line == 5] == [(5, "dropped")]


def test_an_option_given_twice_takes_the_last_and_the_first_is_said_dropped():
    imported = import_script(JOB.replace("./run", "#SBATCH -t 3:00:00\n./run"), name="t", profile="cedar")
    assert imported.spec["resources"]["time"] == "3:00:00"
    assert [(n.line, n.outcome) for n in imported.notes if n.reason] == [(3, "dropped")]


WRAPPER = ("#!/bin/bash\ngo() {\n  sbatch <<EOF\n#!/bin/bash\n#SBATCH --account=def-x\n#SBATCH --time=1:00:00\n"
           "./run $1 \\$SLURM_JOB_ID\nEOF\n}\n")


def test_a_heredoc_in_a_function_called_once_with_words_is_the_job_with_them_put_in():
    imported = import_script(WRAPPER + "go small\n", name="t", profile="cedar")
    assert imported.spec["launch"] == {"command": "./run small $SLURM_JOB_ID"}
    assert imported.unmapped == ()
    assert submitted_script(WRAPPER + "go small\n").endswith("./run small $SLURM_JOB_ID\n")


@pytest.mark.parametrize("calls", ["go a\ngo b\n", "for x in a b; do go $x; done\n"])
def test_a_heredoc_in_a_function_called_many_times_says_each_call_is_a_job(calls):
    imported = import_script(WRAPPER + calls, name="t", profile="cedar")
    assert "$1" in imported.spec["launch"]["shell"]
    assert any("each a job of its own" in n.reason for n in imported.unmapped)


def test_a_function_wrapper_that_does_more_than_call_it_is_left_to_the_user():
    imported = import_script(WRAPPER + "make build\ngo a\n", name="t", profile="cedar")
    assert any("this script submits a job" in n.reason for n in imported.unmapped)
