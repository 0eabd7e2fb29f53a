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
    assert "bash -eo pipefail -c " in script and " > out.txt" in script
    _shellcheck(script, tmp_path)
    result = _run(script, tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out.txt").read_text() == "['a', 'b c']\nok\n"


@pytest.mark.parametrize("nounset, stops", [(True, True), (None, False), (False, False)])
def test_a_shell_line_stops_at_an_unset_variable_where_the_spec_says_nounset(tmp_path, nounset, stops):
    """A script under set -u stopped at an unset variable in its launch line too (import writes
    nounset: true for it): the shell line's own bash then runs under -u."""
    script = script_of(environment={"nounset": nounset}, launch={"shell": 'echo "[$NEVER_SET]" > said.txt'})
    _shellcheck(script, tmp_path)
    result = _run(script, tmp_path)
    assert (result.returncode != 0) == stops, result.stderr
    assert (tmp_path / "said.txt").exists() != stops


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


def test_a_shell_line_runs_under_the_jobs_own_options_so_a_failing_command_stops_it(tmp_path):
    """bash -c inherits none of the script's set -euo pipefail: a failing first command would be
    followed by the next, and the job end 0, as if nothing had failed."""
    script = script_of(launch={"shell": "false; echo went on > out.txt"})
    assert "bash -eo pipefail -c " in script
    _shellcheck(script, tmp_path)
    result = _run(script, tmp_path)
    assert result.returncode == 1 and not (tmp_path / "out.txt").exists(), result.stderr


def test_a_failing_program_before_a_pipe_fails_the_shell_line(tmp_path):
    script = script_of(launch={"shell": "sh -c 'exit 3' | cat > out.txt"})
    result = _run(script, tmp_path)
    assert result.returncode == 3, result.stderr


def test_a_shell_line_of_a_job_without_errexit_goes_on_past_a_failing_command(tmp_path):
    """environment.errexit: false (a script imported without set -e): as that script did."""
    script = script_of(environment={"errexit": False, "nounset": False}, launch={"shell": "false; echo went on > out.txt"})
    assert "bash -o pipefail -c " in script
    result = _run(script, tmp_path)
    assert result.returncode == 0 and (tmp_path / "out.txt").read_text() == "went on\n", result.stderr


@pytest.mark.parametrize("nounset, stops", [(None, False), (True, True), (False, False)])
def test_a_set_up_line_reading_an_unset_variable_stops_the_job_only_under_nounset_true(tmp_path, nounset, stops):
    environment = {"setup": ["echo ran $NOT_SET_ANYWHERE > setup.txt"], **({} if nounset is None else {"nounset": nounset})}
    result = _run(script_of(environment=environment, launch={"shell": "echo went on > out.txt"}), tmp_path)
    assert (result.returncode != 0) == stops, result.stderr
    assert (tmp_path / "out.txt").exists() != stops
    assert ("NOT_SET_ANYWHERE: unbound variable" in result.stderr) == stops


@pytest.mark.parametrize("loads", [True, False])
def test_the_virtualenv_comes_before_what_a_set_up_line_loads_on_path(tmp_path, loads):
    """A module line kept in setup (in an if) ran before the script's own virtualenv; slurmkit's
    virtualenv is made first, and Lmod puts the module's python before it on PATH: the job runs
    the virtualenv's python still, as the script did."""
    for folder in ("env/bin", "modpy"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "env/bin/activate").write_text('PATH="$VENV_HOME/env/bin:$PATH"; export VIRTUAL_ENV="$VENV_HOME/env"\n')
    for python in (tmp_path / "env/bin/python", tmp_path / "modpy/python"):
        python.write_text("#!/bin/sh\n")
        python.chmod(0o755)
    lmod = 'module() { PATH="$VENV_HOME/modpy:$PATH"; }'   # what Lmod does to PATH, as a shell function
    setup = [lmod, "if true; then module load python/3.10; fi" if loads else "echo no modules"]
    script = script_of(environment={"venv": {"path": "$VENV_HOME/env"}, "setup": setup},
                       launch={"shell": "command -v python > which.txt"})
    assert ("# first on PATH again" in script) == loads
    result = _run(script, tmp_path, env={"VENV_HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "which.txt").read_text().strip() == str(tmp_path / "env/bin/python")


def test_a_relative_virtualenv_is_entered_again_wherever_a_set_up_line_went(tmp_path):
    """``module list`` then ``cd pages``: the virtualenv ``ENV`` (the job folder's) is entered again
    after them by a path that holds in pages/ too; by its relative path the job stopped there."""
    for folder in ("ENV/bin", "pages"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "ENV/bin/activate").write_text('export VIRTUAL_ENV="$SLURM_SUBMIT_DIR/ENV"\n')
    (tmp_path / "ENV/bin/python").write_text("#!/bin/sh\n")
    (tmp_path / "ENV/bin/python").chmod(0o755)
    setup = ["module() { :; }", "module list", "cd pages"]
    script = script_of(environment={"venv": {"path": "ENV"}, "setup": setup}, launch={"shell": "echo \"$VIRTUAL_ENV\" > where.txt"})
    assert 'slurmkit_activate "${SLURM_SUBMIT_DIR}/ENV"  # first on PATH again' in script
    result = _run(script, tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "pages/where.txt").read_text().strip() == str(tmp_path / "ENV")


@pytest.mark.parametrize("kind", ["serial", "mpi"])
def test_an_assignment_before_the_program_reaches_it_as_a_variable(kind):
    """``X=1 prog``: srun, mpirun and a quoted first word would take ``X=1`` for the program; env runs it."""
    script = script_of(kind=kind, resources={"time": "1h", "tasks_per_node": 2},
                       launch={"command": "GREETING=hi sh -c 'echo $GREETING'"})
    launch = next(line for line in script.splitlines() if line.startswith("slurmkit_run "))
    assert " env GREETING=hi sh -c " in launch, launch


def test_an_assignment_before_the_program_runs_in_a_serial_job(tmp_path):
    program = "import os; open('out.txt', 'w').write(os.environ['GREETING'])"
    script = script_of(launch={"command": ["GREETING=hi there", sys.executable, "-c", program]})
    result = _run(script, tmp_path)
    assert result.returncode == 0 and (tmp_path / "out.txt").read_text() == "hi there", result.stderr


def test_an_assignment_before_the_program_of_many_tasks_reaches_gnu_parallel_through_env(tmp_path):
    """``parallel --quote -- "X={%}" prog``: every task would fail with ``X=1: command not found``."""
    script = script_of(kind="many-tasks", resources={"time": "1h", "tasks_per_node": 2}, tasks={"arguments": "t.tasks"},
                       launch={"command": "SLOT={%} python -u score.py {}"})
    assert '--quote -- env "SLOT={%}" python -u score.py "{}"' in script
    if shutil.which("parallel"):
        line = ["parallel", "--jobs", "2", "--quote", "--", "env", "SLOT={%}", "sh", "-c", 'echo "$SLOT $0"', "{}"]
        ran = subprocess.run(line, input="a\nb\n", capture_output=True, text=True, check=True)
        assert re.fullmatch(r"([12] [ab]\n){2}", ran.stdout), ran.stdout   # the slot, whichever a task got


@pytest.mark.parametrize("errexit", [True, False])
def test_a_payload_that_is_a_function_of_setup_runs_under_the_jobs_errexit(tmp_path, errexit):
    """A script without set -e went on past a failing command inside its function; with
    environment.errexit: false the job does too (the script's own set -e would stop it)."""
    script = script_of(environment={"errexit": errexit, "setup": ["work() {\n  false\n  echo after > after.txt\n}"]},
                       launch={"command": "work"})
    assert ("slurmkit_run slurmkit_without_errexit work" in script) is not errexit
    result = _run(script, tmp_path)
    assert (tmp_path / "after.txt").exists() is not errexit, result.stderr
    assert (result.returncode == 0) is not errexit, result.stderr
