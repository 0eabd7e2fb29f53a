"""Hostile values in every user field that reaches the script: no syntax errors, nothing injected,
and each value arrives exactly as written.

The rendered script is really run by bash (profile ``generic``: no module system), with the job's
command replaced by a harness that prints its argv and environment as JSON. ``pip`` is a stub
that records its argv, and the virtualenv is a prepared folder, so nothing is installed.
Quoting rules (render.py): environment values, array values and pip packages are literal;
command arguments and the requirements path are words in which ``$NAME``/``${NAME}`` expand and
``$$`` is a literal ``$``.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slurmkit.api.job import Job
from slurmkit.render.render import render
from slurmkit.render.runtime import write_runtime

HARNESS = ("import json, os, sys; print(json.dumps({'argv': sys.argv[1:], "
           "'env': {k: v for k, v in os.environ.items() if k.startswith('SK_')}}))")
MARKER = "pwned"

#: strings that break naive quoting; several would create ./pwned if the shell ran them.
HOSTILE = [
    "", " ", "'", '"', "''", '""', "\\", "\\'", "a'b\"c", "$(touch pwned)", "`touch pwned`", "; touch pwned",
    "' ; touch pwned ; '", '" ; touch pwned ; "', "\ntouch pwned\n", "&& touch pwned", "| touch pwned", "$((1+1))",
    "${IFS}", "$IFS", "*", "?", "[a-z]*", "~", "~root", "-rf", "--help", "-", "a\tb", "line1\nline2", "\r\n",
    "!", "!!", "#not a comment", "{a,b}", "a=b", "%x", "\u00e9t\u00e9", "\u65e5\u672c", "\U0001f600", "\u202e", "\x1b[31m",
    "$", "$$", "a$", "$1", "$@", "$*", "$-", "${", "}", "${x", "$'\\n'", "\\$HOME", "EOF", "\\\n",
    "do", "done", "then", "fi", "esac", "in", "[[",
]
SAFE_CHARACTERS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
hostile = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(SAFE_CHARACTERS, max_size=12),
    st.lists(st.sampled_from(HOSTILE), min_size=2, max_size=4).map("".join),
)
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def literal_word(text: str) -> str:
    """How a spec writes ``text`` in a command argument or a path so that it stays literal."""
    return text.replace("$", "$$")


@pytest.fixture(scope="module")
def tools(tmp_path_factory) -> Path:
    """A folder for PATH with a ``pip`` that writes its argv, NUL-separated, to a new $PIP_LOG.* file."""
    folder = tmp_path_factory.mktemp("tools")
    pip = folder / "pip"
    pip.write_text('#!/bin/bash\nprintf \'%s\\0\' "$@" > "$(mktemp "$PIP_LOG.XXXXXX")"\n')
    pip.chmod(0o755)
    return folder


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A lasting virtualenv as the script sees one (bin/python, bin/activate), made in no time."""
    folder = tmp_path_factory.mktemp("venv")
    make_venv(folder)
    return folder


def make_venv(folder: Path) -> None:
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "activate").write_text("")
    (folder / "bin" / "python").symlink_to(sys.executable)


def script_of(profile: str = "generic", **fields) -> str:
    fields.setdefault("name", "quoting")
    fields.setdefault("account", "def-someprof")
    fields.setdefault("resources", {"time": "1h"})
    resolution = Job(profile=profile, **fields).resolve()
    assert resolution.plan is not None, resolution.errors
    return render(resolution.plan)


def harness(*args: str) -> list:
    return [sys.executable, "-S", "-c", HARNESS, *args]  # -S: no site-packages, a faster start


def bash_syntax_ok(script: str) -> None:
    result = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def run_script(script: str, tools: Path, task: int = 0, extra_env=None) -> dict:
    """Check the syntax, run the script in a fresh folder; return the harness's JSON and pip's calls."""
    bash_syntax_ok(script)
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        (work / "job.sbatch").write_text(script, encoding="utf-8")
        write_runtime(work)   # as slurmkit submit writes it (the script looks in $SLURM_SUBMIT_DIR first)
        env = {"PATH": f"{tools}{os.pathsep}{os.environ['PATH']}", "HOME": str(work), "LC_ALL": "C.UTF-8",
               "PYTHONUTF8": "1", "SLURM_TMPDIR": str(work), "SLURM_ARRAY_TASK_ID": str(task),
               "PIP_LOG": str(work / "pip.log"), **(extra_env or {})}
        result = subprocess.run(["bash", str(work / "job.sbatch")], cwd=work, env=env, capture_output=True,
                                text=True, encoding="utf-8")
        assert not (work / MARKER).exists(), "a value was run as a command"
        assert result.returncode == 0, result.stderr
        pip_calls = [log.read_bytes().decode("utf-8").split("\0")[:-1] for log in work.glob("pip.log.*")]
    output = json.loads(result.stdout.strip().splitlines()[-1])
    output["pip"] = pip_calls
    return output


# ---------------------------------------------------------------------------- properties


@PROPERTY
@given(args=st.lists(hostile, min_size=1, max_size=6), values=st.lists(hostile, min_size=1, max_size=4))
def test_command_arguments_and_variables_arrive_exactly(tools, args, values):
    variables = {f"SK_V{i}": value for i, value in enumerate(values)}
    script = script_of(environment={"variables": variables},
                       launch={"command": harness(*map(literal_word, args))})
    out = run_script(script, tools)
    assert out["argv"] == args
    assert out["env"] == variables


@PROPERTY
@given(values=st.lists(hostile, min_size=1, max_size=4), single=hostile, data=st.data())
def test_array_parameter_values_arrive_exactly_for_the_task(tools, values, single, data):
    task = data.draw(st.integers(0, len(values) - 1), label="task")
    script = script_of(kind="array", array={"parameters": {"SK_P0": values, "SK_P1": [single]}},
                       launch={"command": harness("${SK_P0}")})
    out = run_script(script, tools, task=task)
    # passed as an argument, SK_P0 is not exported; SK_P1, which the command does not name, is
    assert out["env"] == {"SK_P1": single}
    assert out["argv"] == [values[task]]


@PROPERTY
# A package may not start with '-' or a space (pip would read an option): prefix one letter.
# A requirements path that starts with '~' is a home path ($HOME/..., ~user refused): test_hostile_output.py.
@given(packages=st.lists(hostile.map(lambda v: "p" + v), min_size=1, max_size=4),
       requirements=hostile.filter(lambda v: not v.startswith("~")))
def test_venv_packages_and_requirements_path_reach_pip_exactly(tools, venv, packages, requirements):
    if refused_path(literal_word(requirements)):
        return   # a backquote: the shell would run it, a path keeps it as text, so it is refused
    script = script_of(environment={"venv": {"path": literal_word(str(venv)), "packages": packages,
                                             "requirements": literal_word(requirements)}},
                       launch={"command": harness()})
    calls = run_script(script, tools)["pip"]
    assert ["install", *packages] in calls
    assert (["install", "-r", requirements] in calls) == (requirements != "")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(profile_kind=st.sampled_from([("nibi", "gpu"), ("local", "mpi"), ("fir", "array"), ("narval", "threaded"),
                                     ("niagara", "mpi")]),
       value=hostile, args=st.lists(hostile, max_size=3))
def test_hostile_values_never_break_the_syntax_on_any_profile(profile_kind, value, args):
    profile, kind = profile_kind
    fields = {"kind": kind, "resources": {"time": "3h"}, "launch": {"command": ["./run", *args]},
              "environment": {"variables": {"SK_V": value},
                              "venv": {"packages": ["p" + value], "requirements": value.lstrip("~") or "r.txt"}}}
    if kind == "gpu":
        fields["resources"]["gpus"] = "h100:1"
    if kind == "threaded":
        fields["resources"]["cpus_per_task"] = 4
    if kind == "array":
        fields["array"] = {"parameters": {"p": [value, "x"]}}
    if refused_path(fields["environment"]["venv"]["requirements"], profile, **fields):
        return
    bash_syntax_ok(script_of(profile, **fields))


def refused_path(path: str, profile: str = "generic", **fields) -> bool:
    """Whether ``path`` holds shell that a path does not expand (userpaths.unexpanded_form): then
    the job is refused in one line on the requirements field, and nothing is rendered."""
    from slurmkit.core.userpaths import unexpanded_form

    if not unexpanded_form(path):
        return False
    fields.setdefault("name", "quoting")
    fields.setdefault("account", "def-someprof")
    fields.setdefault("resources", {"time": "1h"})
    fields.setdefault("environment", {"venv": {"requirements": path}})
    fields.setdefault("launch", {"command": "python run.py"})
    errors = Job(profile=profile, **fields).resolve().errors
    assert [e.field for e in errors if "is not expanded in a path" in e.message] == ["environment.venv.requirements"], errors
    return True


# ---------------------------------------------------------------------------- examples


def test_dollar_name_and_braced_name_expand_in_command_arguments(tools):
    value = "a b*  $(touch pwned) `x`"
    script = script_of(environment={"variables": {"SK_FOO": value}},
                       launch={"command": harness("x$SK_FOO-y", "${SK_FOO}bar", "$SK_FOO", "$$SK_FOO", "$$$SK_FOO", "$${SK_FOO}")})
    assert script_of(launch={"command": ["echo", "$HOME"]}).rstrip().endswith('\nslurmkit_run echo "${HOME}"')
    out = run_script(script, tools)
    assert out["argv"] == [f"x{value}-y", f"{value}bar", value, "$SK_FOO", f"${value}", "${SK_FOO}"]


def test_dollar_name_expands_in_the_requirements_path(tools, venv):
    script = script_of(environment={"venv": {"path": str(venv), "requirements": "$SK_DIR/req s.txt"},
                                    "variables": {"SK_DIR": "/data dir"}},
                       launch={"command": harness()})
    assert ["install", "-r", "/data dir/req s.txt"] in run_script(script, tools)["pip"]


@pytest.mark.parametrize("arg", ["$(touch pwned)", "`touch pwned`", "cost: 5$", "$1", "$@", "${", "$((1))", "$-x"])
def test_a_dollar_that_starts_no_name_stays_literal_even_unescaped(tools, arg):
    assert run_script(script_of(launch={"command": harness(arg)}), tools)["argv"] == [arg]


def test_a_name_that_is_not_set_stops_the_job_instead_of_running_with_an_empty_argument(tools, tmp_path):
    script = script_of(launch={"command": harness("--out", "$SK_NOT_SET_ANYWHERE")})
    bash_syntax_ok(script)
    write_runtime(tmp_path)
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env={"PATH": os.environ["PATH"]}, cwd=tmp_path)
    assert result.returncode != 0
    assert "SK_NOT_SET_ANYWHERE: unbound variable" in result.stderr


def test_a_command_string_keeps_its_quoted_words_together(tools):
    script = script_of(launch={"command": f"{sys.executable} -c \"{HARNESS}\" --tag 'run 1' \"a  b\" '$x'"})
    assert run_script(script, tools)["argv"] == ["--tag", "run 1", "a  b", "$x"]


def test_a_command_string_expands_dollar_names_as_bash_does(tools):
    """Single quotes and a backslash keep $ as written; unquoted and in double quotes $NAME expands."""
    script = script_of(launch={"command": f"{sys.executable} -c \"{HARNESS}\" '$SK_V' \"$SK_V\" $SK_V \\$SK_V \"\\$SK_V\" "
                                          "'a'$SK_V'b' \"'$SK_V'\""},
                       environment={"variables": {"SK_V": "v"}})
    assert run_script(script, tools)["argv"] == ["$SK_V", "v", "v", "$SK_V", "$SK_V", "avb", "'v'"]


def test_an_alliance_gpu_script_with_hostile_values_runs_with_lmod_stubbed(tools, tmp_path):
    venv = tmp_path / "my env"
    make_venv(venv)
    args = ["' ; touch pwned", "$(touch pwned)", "a\nb", "*"]
    variables = {"SK_A": "`touch pwned`", "SK_B": "x'y\"z"}
    script = script_of("nibi", kind="gpu", resources={"time": "3h", "gpus": "h100:1"},
                       environment={"modules": ["gcc/12.3"], "variables": variables,
                                    "venv": {"path": str(venv), "packages": ["numpy>=1.0", "$(touch pwned)"]}},
                       launch={"command": harness(*map(literal_word, args))})
    assert "module load StdEnv/2023 gcc/12.3 python/3.12" in script
    out = run_script(script, tools, extra_env={"BASH_FUNC_module%%": "() { :; }"})
    assert (out["argv"], out["env"]) == (args, variables)
    assert ["install", "--no-index", "numpy>=1.0", "$(touch pwned)"] in out["pip"]


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="tests/run installs shellcheck")
def test_a_script_full_of_hostile_values_has_no_shellcheck_warnings():
    hostile_values = [v for v in HOSTILE if v]
    script = script_of("local", kind="array", array={"parameters": {"p": hostile_values}},
                       environment={"variables": {"V": "$(x) `y` 'z'"}, "venv": {"packages": ["p" + v for v in hostile_values],
                                                                                "requirements": "$HOME/r'q.txt"}},
                       launch={"command": ["./run", *map(literal_word, hostile_values), "$p"]})
    # info-level notes (SC2016: "$x" in single quotes does not expand) are what literal quoting means
    result = subprocess.run(["shellcheck", "--shell=bash", "--severity=warning", "-"], input=script, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
