"""A launch line that is a shell pipeline (launch.shell), the job's own shell lines
(environment.setup), and mail to the registered address: rendered quoted, shellcheck-clean,
and run by bash doing what the line says."""

import re
import shutil
import subprocess
import sys

import pytest

from slurmkit.core.errors import SpecError
from slurmkit.render.runtime import write_runtime
from slurmkit.spec.spec import spec_from_mapping

from .test_quoting import bash_syntax_ok, script_of


def _run(script: str, folder, env=None) -> subprocess.CompletedProcess:
    bash_syntax_ok(script)
    (folder / "job.sbatch").write_text(script)
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "SLURM_TMPDIR": str(folder / "tmp"),
                   "SLURM_SUBMIT_DIR": str(folder), **(env or {})}
    (folder / "tmp").mkdir(exist_ok=True)
    write_runtime(folder)   # as slurmkit submit writes it
    return subprocess.run(["bash", str(folder / "job.sbatch")], cwd=folder, env=environment, capture_output=True, text=True)


def _run_with(script: str, folder, arguments) -> subprocess.CompletedProcess:
    """The script run as sbatch runs it: ``bash SCRIPT ARGS...``."""
    (folder / "job.sbatch").write_text(script)
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "SLURM_TMPDIR": str(folder)}
    write_runtime(folder)   # as slurmkit submit writes it
    return subprocess.run(["bash", str(folder / "job.sbatch"), *arguments], cwd=folder, env=environment,
                          capture_output=True, text=True)


def _shellcheck(script: str, folder) -> None:
    if shutil.which("shellcheck") is None:   # tests/run installs it; test_golden fails loudly without it
        return
    (folder / "check.sh").write_text(script)
    result = subprocess.run(["shellcheck", "--shell=bash", str(folder / "check.sh")], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_a_shell_line_redirects_pipes_and_chains_as_written(tmp_path):
    line = f"{sys.executable} -c 'import sys; print(sys.argv[1:])' a \"b c\" > out.txt 2>&1 && echo ok | tee -a out.txt"
    script = script_of(launch={"shell": line})
    assert "bash -c " in script and " > out.txt" in script
    _shellcheck(script, tmp_path)
    result = _run(script, tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out.txt").read_text() == "['a', 'b c']\nok\n"


def test_variables_in_a_shell_line_expand_when_it_runs_not_when_it_is_rendered(tmp_path):
    script = script_of(environment={"variables": {"GREETING": "hello there"}, "setup": ["WHO=$(echo world)"]},
                       launch={"shell": 'echo "$GREETING $WHO $((2 * 3))" > said.txt'})
    _shellcheck(script, tmp_path)
    result = _run(script, tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "said.txt").read_text() == "hello there world 6\n"


def test_setup_lines_run_in_order_in_the_job_shell_and_a_failing_one_stops_the_job(tmp_path):
    (tmp_path / "sub").mkdir()
    setup = ["cd sub", "mkdir -p $SLURM_TMPDIR/results", 'if [ -d "$SLURM_TMPDIR/results" ]; then\n  echo made > made.txt\nfi']
    script = script_of(environment={"setup": setup}, launch={"shell": "pwd > where.txt"})
    _shellcheck(script, tmp_path)
    assert _run(script, tmp_path).returncode == 0
    assert (tmp_path / "sub" / "where.txt").read_text().strip() == str(tmp_path / "sub")
    assert (tmp_path / "sub" / "made.txt").exists() and (tmp_path / "tmp" / "results").is_dir()
    failing = script_of(environment={"setup": ["false", "touch ran.txt"]}, launch="true")
    assert _run(failing, tmp_path).returncode != 0 and not (tmp_path / "ran.txt").exists()


@pytest.mark.parametrize("command, operator", [
    ("python train.py > log.txt", ">"), ("python t.py 2>&1 | tee t.log", "2>&1"), ("make && ./a.out", "&&"),
    ("python t.py; echo done", ";"),
])
def test_a_command_with_shell_syntax_is_refused_with_the_shell_spelling(command, operator):
    with pytest.raises(SpecError) as caught:
        spec_from_mapping({"name": "j", "resources": {"time": "1h"}, "launch": {"command": command}}, "job.yaml")
    assert str(caught.value).startswith(f"job.yaml: launch.command: {operator!r} is shell syntax, not an argument: write launch: {{shell: ")


@pytest.mark.parametrize("command, argv", [
    ("python t.py '>' x", ("python", "t.py", ">", "x")),
    ('python t.py --expr="a>b|c"', ("python", "t.py", "--expr=a>b|c")),
    ("python t.py $((A*B>2))", ("python", "t.py", "$((A*B>2))")),
])
def test_quoted_operators_stay_arguments(command, argv):
    spec = spec_from_mapping({"name": "j", "resources": {"time": "1h"}, "launch": command})
    assert spec.launch.command == argv


def test_command_and_shell_together_are_refused():
    with pytest.raises(SpecError, match="launch.shell: give command .* or shell .*, not both"):
        spec_from_mapping({"name": "j", "resources": {"time": "1h"}, "launch": {"command": "a", "shell": "b > c"}})


def test_mail_without_a_user_goes_to_the_registered_address():
    script = script_of(mail={"events": ["FAIL"]}, launch="true")
    assert "#SBATCH --mail-type=FAIL\n" in script and "--mail-user" not in script


# ------------------------------------------------------------------ any text reaches bash exactly

from hypothesis import given  # noqa: E402

from .test_quoting import PROPERTY, hostile  # noqa: E402


@PROPERTY
@given(value=hostile)
def test_a_shell_line_reaches_bash_exactly_as_written(tmp_path_factory, value):
    import shlex

    folder = tmp_path_factory.mktemp("line")
    script = script_of(launch={"shell": f"printf '%s' {shlex.quote(value)} > out.bin"})
    result = _run(script, folder)
    assert result.returncode == 0, result.stderr
    assert (folder / "out.bin").read_bytes() == value.encode("utf-8", "surrogateescape")
    assert not (folder / "pwned").exists()


@PROPERTY
@given(value=hostile)
def test_a_setup_line_reaches_bash_exactly_and_its_assignment_reaches_the_launch(tmp_path_factory, value):
    import shlex

    folder = tmp_path_factory.mktemp("setup")
    script = script_of(environment={"setup": [f"SK_VALUE={shlex.quote(value)}"]},
                       launch={"shell": "printf '%s' \"$SK_VALUE\" > out.bin"})
    result = _run(script, folder)
    assert result.returncode == 0, result.stderr
    assert (folder / "out.bin").read_bytes() == value.encode("utf-8", "surrogateescape")
    assert not (folder / "pwned").exists()


HOSTILE = ["a b", "$(touch pwned)", "`touch pwned`", "x\ny", "it's", '"q"', "*", ""]


def test_a_shell_line_and_setup_read_the_script_arguments_as_sbatch_gave_them(tmp_path):
    script = script_of(environment={"setup": ["FIRST=$1"]},
                       launch={"shell": "printf '%s|' \"$#\" \"$1\" \"${2}\" \"$@\" \"$FIRST\" > out.txt"})
    assert re.search(r"^slurmkit_run .* \"\$0\" \"\$@\"$", script, re.M)
    _shellcheck(script, tmp_path)
    result = _run_with(script, tmp_path, HOSTILE)
    assert result.returncode == 0, result.stderr
    expected = [str(len(HOSTILE)), HOSTILE[0], HOSTILE[1], *HOSTILE, HOSTILE[0]]
    assert (tmp_path / "out.txt").read_text() == "|".join(expected) + "|"
    assert not (tmp_path / "pwned").exists()


def test_a_shell_line_that_reads_no_arguments_renders_as_before():
    script = script_of(launch={"shell": "echo $HOME $$ > out.txt"})
    assert '"$@"' not in script and '"$0"' not in script
