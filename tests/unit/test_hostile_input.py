"""Hostile and malformed input: every entry point ends bad input with one line,
exit 2 and nothing written, in bounded time and memory measured here.

The bounded cases run each command in a child process (as a user would run it) that reports
its own CPU time and peak resident memory; the child's address space is capped at 1.5 GiB so
that a regression fails fast instead of swapping the machine.
"""

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slurmkit.core.errors import InputError, SpecError
from slurmkit.core.yamlfile import MAX_ALIASES, MAX_BYTES, MAX_DEPTH, MAX_VALUES, parse_yaml

#: the bounds the issue sets for refusing a hostile file, whole process included.
CPU_LIMIT_S = 1.0
PEAK_LIMIT_MB = 100

GOOD_SPEC = """\
name: ok
profile: local
account: def-someprof
resources: {time: 1h}
launch: python main.py
"""


def billion_laughs() -> str:
    """A spec whose array parameters expand, alias by alias, to 10^9 values."""
    lines = ["name: lol", "kind: array", "profile: local", "resources: {time: 1h}", "launch: python run.py $a",
             "array:", "  parameters:", "    a: &a [" + ", ".join(["lol"] * 10) + "]"]
    for previous, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"    {name}: &{name} [" + ", ".join([f"*{previous}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def nested_aliases_288() -> str:
    """The issue's 288-byte spec: 7 levels of 9 aliases each (9^7 values), padded to 288 bytes."""
    lines = ["name: n", "resources: {time: 1h}", "launch: python a.py", "x: &a [1,1,1,1,1,1,1,1,1]"]
    for previous, name in zip("abcdef", "bcdefg"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    text = "\n".join(lines) + "\n"
    return text + "#" * (287 - len(text)) + "\n"


def line_of(text: str, start: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.lstrip().startswith(start))


TOO_MANY_VALUES = (f"more than {MAX_VALUES:,} values once aliases are expanded, slurmkit's limit for one file "
                   f"(a spec or profile has a few hundred); write the values out or shorten the file")
SELF_ALIAS = "alias *a is inside the value it names (&a), which would contain itself without end; write the value out instead"


class Outcome(NamedTuple):
    rc: int
    stdout: str
    stderr: str
    cpu_s: float
    peak_mb: float


# The child's peak memory is VmHWM, the high-water mark of its own address space. Not
# ru_maxrss: Linux keeps that across execve, so a child forked from a large pytest (late in a
# full run) would report the parent's size as its own.
_CHILD = """\
import atexit, json, os, resource, sys
def _usage():
    r = resource.getrusage(resource.RUSAGE_SELF)
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    with open(os.environ["SK_USAGE"], "w") as out:
        json.dump({"cpu": r.ru_utime + r.ru_stime, "peak_kb": peak}, out)
atexit.register(_usage)
"""


def _cap_memory():
    resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))


def measured(code: str, cwd: Path, home: Path) -> Outcome:
    """Run ``code`` in a child python in ``cwd``, with ``home`` as HOME and XDG folders."""
    usage = home / "usage.json"
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"),
           "XDG_CACHE_HOME": str(home / "cache"), "SK_USAGE": str(usage), "NO_COLOR": "1"}
    for variable in ("SLURMKIT_PROFILE", "CC_CLUSTER", "SLURM_CLUSTER_NAME"):
        env.pop(variable, None)
    done = subprocess.run([sys.executable, "-c", _CHILD + code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=60, preexec_fn=_cap_memory)
    report = json.loads(usage.read_text())
    return Outcome(done.returncode, done.stdout, done.stderr, report["cpu"], report["peak_kb"] / 1024)


def cli(*args: str) -> str:
    return f"import sys; from slurmkit.cli.main import main; sys.argv = ['slurmkit', *{list(args)!r}]; main()\n"


FROM_YAML = ("from slurmkit import Job\nfrom slurmkit.core.errors import SlurmkitError\n"
             "try:\n    Job.from_yaml('job.yaml')\nexcept SlurmkitError as error:\n"
             "    print('error: ' + error.message, file=sys.stderr); sys.exit(error.exit_code)\n")
SPEC_ENTRY_POINTS = {
    "check": cli("check", "job.yaml"),
    "render": cli("render", "job.yaml", "-o", "job.sbatch"),
    "submit --dry-run": cli("submit", "--dry-run", "job.yaml"),
    "port": cli("port", "job.yaml", "--from", "cedar", "--to", "nibi", "-o", "ported.yaml"),
    "Job.from_yaml": "import sys\n" + FROM_YAML,
}


@pytest.fixture
def folders(tmp_path):
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    return work, home


def refused(work: Path, home: Path, code: str, expected: str) -> Outcome:
    """Run ``code``; assert one exact error line, exit 2, nothing new in ``work``, and the bounds."""
    before = sorted(work.rglob("*"))
    outcome = measured(code, work, home)
    assert outcome.stderr == f"error: {expected}\n"
    assert outcome.rc == 2
    assert sorted(work.rglob("*")) == before
    assert outcome.cpu_s < CPU_LIMIT_S, outcome
    assert outcome.peak_mb < PEAK_LIMIT_MB, outcome
    return outcome


# ----------------------------------------------------------------------- alias bombs, recursion

@pytest.mark.parametrize("entry", sorted(SPEC_ENTRY_POINTS))
def test_billion_laughs_spec_is_one_line_on_every_entry_point_in_bounded_time_and_memory(folders, entry):
    work, home = folders
    text = billion_laughs()
    (work / "job.yaml").write_text(text)
    refused(work, home, SPEC_ENTRY_POINTS[entry], f"job.yaml:{line_of(text, 'e:')}: {TOO_MANY_VALUES}")


@pytest.mark.parametrize("entry", sorted(SPEC_ENTRY_POINTS))
def test_288_byte_nested_alias_spec_is_refused_in_bounded_time_and_memory(folders, entry):
    work, home = folders
    text = nested_aliases_288()
    assert len(text.encode()) == 288
    (work / "job.yaml").write_text(text)
    refused(work, home, SPEC_ENTRY_POINTS[entry], f"job.yaml:{line_of(text, 'e:')}: {TOO_MANY_VALUES}")


@pytest.mark.parametrize("entry", sorted(SPEC_ENTRY_POINTS))
def test_a_self_referencing_alias_in_a_spec_is_one_line_not_a_recursion_error(folders, entry):
    work, home = folders
    (work / "job.yaml").write_text(GOOD_SPEC + "a: &a [*a]\n")
    refused(work, home, SPEC_ENTRY_POINTS[entry], f"job.yaml:6: {SELF_ALIAS}")


def _bad_profile(work: Path, body: str) -> Path:
    folder = work / "site_profiles"
    folder.mkdir()
    path = folder / "mine.yaml"
    path.write_text("name: mine\nextends: local\n" + body)
    return path


@pytest.mark.parametrize("body, message", [
    ("a: &a [*a]\n", f"mine.yaml:3: {SELF_ALIAS}"),
    (billion_laughs().split("array:\n  parameters:\n")[1].replace("    ", ""), f"mine.yaml:7: {TOO_MANY_VALUES}"),
], ids=["self-alias", "billion-laughs"])
@pytest.mark.parametrize("command", ["show", "validate", "check"])
def test_a_hostile_user_profile_is_one_line_when_used(folders, body, message, command):
    work, home = folders
    _bad_profile(work, body)
    (work / "job.yaml").write_text(GOOD_SPEC)
    code = {"show": cli("profiles", "show", "mine"), "validate": cli("profiles", "validate", "site_profiles/mine.yaml"),
            "check": cli("check", "job.yaml", "--profile", "mine")}[command]
    # validate names the file as given; the others as found on the search path
    folder = "site_profiles" if command == "validate" else work / "site_profiles"
    refused(work, home, code, f"{folder}/{message}")


def test_a_hostile_user_profile_is_skipped_by_profiles_list_and_the_rest_are_listed(folders):
    work, home = folders
    _bad_profile(work, "a: &a [*a]\n")
    outcome = refused(work, home, cli("profiles", "list"),
                      f"{work}/site_profiles/mine.yaml:3: {SELF_ALIAS} (skipped; the other profiles are listed)")
    names = [line.split()[0] for line in outcome.stdout.splitlines()[1:]]
    assert "local" in names and "nibi" in names and "mine" not in names


def test_a_hostile_user_profile_does_not_break_a_spec_that_names_another_profile(folders):
    work, home = folders
    _bad_profile(work, "a: &a [*a]\n")
    (work / "job.yaml").write_text(GOOD_SPEC)
    outcome = measured(cli("render", "job.yaml"), work, home)
    assert outcome.rc == 0, outcome.stderr
    assert outcome.stdout.startswith("#!/bin/bash")


# ------------------------------------------------------------------- each limit, one line each

def parse_error(text: str) -> str:
    with pytest.raises(SpecError) as caught:
        parse_yaml(text, "job.yaml", SpecError)
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_more_aliases_than_the_limit_are_refused_at_the_first_one_past_it():
    text = "a: &a 1\nb: [" + ", ".join(["*a"] * (MAX_ALIASES + 1)) + "]\n"
    assert parse_error(text) == (f"job.yaml:2: more than {MAX_ALIASES:,} aliases (*name), slurmkit's limit for one "
                                 f"file; write the values out")
    parse_yaml("a: &a 1\nb: [" + ", ".join(["*a"] * MAX_ALIASES) + "]\n", "job.yaml", SpecError)


def test_nesting_deeper_than_the_limit_is_refused_even_when_aliases_build_it():
    # Each alias adds the depth of what it names: 8 levels written 9 times over.
    lines = ["l0: &l0 " + "[" * 8 + "1" + "]" * 8]
    lines += [f"l{i}: &l{i} " + "[" * 8 + f"*l{i - 1}" + "]" * 8 for i in range(1, 9)]
    assert parse_error("\n".join(lines) + "\n") == (
        f"job.yaml:{(MAX_DEPTH - 1) // 8 + 1}: nested more than {MAX_DEPTH} levels deep (aliases expanded), slurmkit's limit")


def test_nesting_libyaml_accepts_but_python_recursion_would_not_is_one_line():
    assert parse_error("a: " + "[" * 990 + "]" * 990 + "\n") == (
        f"job.yaml:1: nested more than {MAX_DEPTH} levels deep (aliases expanded), slurmkit's limit")


def test_an_undefined_alias_and_a_twice_defined_anchor_are_one_line_each():
    assert parse_error("a: *nope\n") == "job.yaml:1: alias *nope names no anchor (&nope) defined above it"
    assert parse_error("a: &x 1\nb: &x 2\n") == "job.yaml:2: anchor &x is defined twice (first on line 1); give each its own name"


def test_a_second_document_is_refused():
    assert parse_error("a: 1\n---\nb: 2\n") == "job.yaml:2: a second YAML document starts here; a spec or profile is one document"


def test_a_file_larger_than_the_limit_is_refused_before_it_is_read_whole(folders):
    work, home = folders
    (work / "job.yaml").write_text(GOOD_SPEC + "#" * MAX_BYTES + "\n")
    refused(work, home, cli("check", "job.yaml"),
            "job.yaml: larger than 1 MiB, slurmkit's limit for this file; a job spec or profile is a few KiB")


def test_an_endless_spec_file_is_refused_not_read_forever(folders):
    work, home = folders
    refused(work, home, cli("check", "/dev/zero"),
            "/dev/zero: cannot read it: not a regular file (a character device)")   # refused before a byte is read


def test_import_refuses_an_oversized_script_in_one_line(folders):
    work, home = folders
    (work / "big.sh").write_text("#!/bin/bash\n" + "echo hi\n" * (MAX_BYTES // 8 + 1))
    refused(work, home, cli("import", "big.sh", "-o", "job.yaml"),   # porting.MAX_SCRIPT_BYTES
            "big.sh: larger than 256 KiB, slurmkit's limit for this file; a job spec or profile is a few KiB")


def test_the_values_and_lines_of_an_ordinary_file_are_unchanged_by_the_bounds():
    text = textwrap.dedent("""\
        base: &base {cpus: 4, mem: 8G}
        merged:
          <<: *base
          gpus: 1
        list: [*base, *base]
        tagged: !!set {a, b}
        """)
    data, lines, _ = parse_yaml(text, "x.yaml")
    assert data == yaml.safe_load(text)
    assert lines[("merged", "gpus")] == 4 and lines[("list",)] == 5


# Random documents of anchors and aliases: what the bounded reader returns is what yaml's own
# loader returns, whenever the expanded document is within the limit; past it, the one error.

@st.composite
def alias_documents(draw):
    count = draw(st.integers(1, 6))
    lines, sizes = [], []
    for i in range(count):
        items = draw(st.lists(st.one_of(st.integers(0, 9).map(str), st.integers(0, max(i - 1, 0))
                                        .map(lambda j: f"*d{j}") if i else st.just("x")), min_size=0, max_size=12))
        lines.append(f"d{i}: &d{i} [{', '.join(items)}]")
        sizes.append(1 + sum(sizes[int(item[2:])] if item.startswith("*") else 1 for item in items))
    # the file's values: each key and each anchored list (aliases counted in full)
    return "\n".join(lines) + "\n", 1 + count + sum(sizes)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(alias_documents())
def test_bounded_reader_agrees_with_yaml_or_refuses_past_the_limit(document):
    text, expanded = document
    if expanded <= MAX_VALUES:
        assert parse_yaml(text, "x.yaml")[0] == yaml.safe_load(text)
    else:
        with pytest.raises(InputError, match="values once aliases are expanded"):
            parse_yaml(text, "x.yaml")


# ------------------------------------------------------------------ templates from the folder

REPO = Path(__file__).resolve().parents[2]
SANDBOX = "templates run sandboxed: they format the plan and cannot reach Python objects"
LOCAL_TEMPLATE_NOTE = "note: using ./templates/serial.sbatch.j2 from the current folder, in place of the bundled serial.sbatch.j2\n"


def _local_template(work: Path, body: str) -> Path:
    (work / "templates").mkdir()
    path = work / "templates" / "serial.sbatch.j2"
    path.write_text('{% extends "base.sbatch.j2" %}\n{% block stage_in %}\n' + body + "\n{% endblock %}\n")
    return path


ESCAPES = {
    "dunder of the plan": ("{{ plan.__class__.__mro__ }}", "access to attribute '__class__' of 'Plan' object is unsafe"),
    "globals through cycler": ("{{ cycler.__init__.__globals__.os.popen('touch pwned').read() }}",
                               "access to attribute '__init__' of 'type' object is unsafe"),
    "globals through lipsum": ("{{ lipsum.__globals__['os'].system('touch pwned') }}",
                               "access to attribute '__globals__' of 'function' object is unsafe"),
    "subclasses of object": ("{{ ''.__class__.__mro__[1].__subclasses__() }}",
                             "access to attribute '__class__' of 'str' object is unsafe"),
    "a list changed": ("{% set l = [] %}{{ l.append(1) }}", "access to attribute 'append' of 'list' object is unsafe"),
    "the template's context": ("{{ self._TemplateReference__context }}",
                               "access to attribute '_TemplateReference__context' of 'TemplateReference' object is unsafe"),
}


@pytest.mark.parametrize("escape", sorted(ESCAPES))
@pytest.mark.parametrize("command", [("render", "job.yaml", "-o", "job.sbatch"), ("submit", "--dry-run", "job.yaml")],
                         ids=["render", "submit --dry-run"])
def test_a_template_in_the_folder_that_reaches_for_python_fails_in_one_line_and_runs_nothing(folders, escape, command):
    work, home = folders
    payload, message = ESCAPES[escape]
    template = _local_template(work, payload)
    (work / "job.yaml").write_text(GOOD_SPEC)
    before = sorted(work.rglob("*"))
    outcome = measured(cli(*command), work, home)
    assert outcome.stderr == LOCAL_TEMPLATE_NOTE + f"error: {template}:3: {message}; {SANDBOX}\n"
    assert outcome.rc == 2
    assert sorted(work.rglob("*")) == before  # no script, no logs/, no pwned


def test_a_template_escape_from_python_is_an_input_error_at_its_line(tmp_path, monkeypatch):
    from slurmkit import Job

    monkeypatch.chdir(tmp_path)
    template = _local_template(tmp_path, "ok\n{{ plan.__class__ }}")
    with pytest.raises(InputError) as caught:
        Job(name="s", profile="local", account="def-x", resources={"time": "1h"}, launch="python a.py").render()
    assert str(caught.value) == f"{template}:4: access to attribute '__class__' of 'Plan' object is unsafe; {SANDBOX}"


def test_a_template_that_only_formats_the_plan_still_renders_in_the_sandbox(folders):
    work, home = folders
    _local_template(work, 'echo {{ plan.name | quote }} {{ plan.modules | join(",") | quote }} {{ "%s-%d" | format("a", 1) }}')
    (work / "job.yaml").write_text(GOOD_SPEC)
    outcome = measured(cli("render", "job.yaml"), work, home)
    assert (outcome.rc, outcome.stderr) == (0, LOCAL_TEMPLATE_NOTE)
    (line,) = [line for line in outcome.stdout.splitlines() if line.startswith("echo ")]
    assert line == "echo ok StdEnv/2023,python/3.11 a-1"  # the local profile's default modules


def test_templates_and_profiles_from_the_folder_are_announced_once_with_what_they_replace(folders):
    work, home = folders
    _local_template(work, "echo hook")
    (work / "site_profiles").mkdir()
    (work / "site_profiles" / "local.yaml").write_text("name: local\nextends: local\ndescription: ours\n")
    (work / "site_profiles" / "mylab.yaml").write_text("name: mylab\nextends: local\n")
    (work / "site_profiles" / "unused.yaml").write_text("name: unused\nextends: local\n")
    twice = ("import sys\nfrom slurmkit import Job\n"
             "for _ in range(2):\n"
             "    Job(name='s', profile='mylab', account='def-x', resources={'time': '1h'}, launch='python a.py').render()\n")
    outcome = measured(twice, work, home)
    assert outcome.rc == 0, outcome.stderr
    assert outcome.stderr == ("note: using ./site_profiles/mylab.yaml from the current folder\n"
                              "note: using ./site_profiles/local.yaml from the current folder, in place of the bundled local.yaml\n"
                              + LOCAL_TEMPLATE_NOTE)


def test_nothing_is_announced_inside_slurmkits_own_checkout(folders):
    work, home = folders
    (work / "job.yaml").write_text(GOOD_SPEC)
    outcome = measured(cli("render", str(work / "job.yaml")), REPO, home)
    assert (outcome.rc, outcome.stderr) == (0, "")


def test_a_clone_of_slurmkits_repository_is_not_announced_while_an_edited_file_is(folders):
    """The README's first command runs inside a clone, whose templates/ and site_profiles/ are
    copies of the bundled ones: identical files change nothing and are not announced; a file
    edited there is."""
    import shutil

    work, home = folders
    shutil.copytree(REPO / "templates", work / "templates")
    shutil.copytree(REPO / "site_profiles", work / "site_profiles")
    (work / "job.yaml").write_text(GOOD_SPEC)
    outcome = measured(cli("render", "job.yaml"), work, home)
    assert (outcome.rc, outcome.stderr) == (0, "")
    with open(work / "templates" / "serial.sbatch.j2", "a") as template:
        template.write("{# ours #}\n")
    outcome = measured(cli("render", "job.yaml"), work, home)
    assert (outcome.rc, outcome.stderr) == (0, LOCAL_TEMPLATE_NOTE)


# ------------------------------------------------------------------------- private files, cancel

SECRET_SPEC = dict(name="sec", profile="local", account="def-x", resources={"time": "1h"},
                   environment={"variables": {"API_TOKEN": "s3cret"}}, launch="python main.py")


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


@pytest.fixture
def fake_slurm(tmp_path, monkeypatch):
    """sbatch answers job 4242; scancel records its arguments; the registry lives in tmp_path."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text("#!/bin/sh\necho 4242\n")
    (bin_dir / "scancel").write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/scancel.args\n')
    for program in bin_dir.iterdir():
        program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("SLURMKIT_REGISTRY", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(params=[0o022, 0o000], ids=["umask 022", "umask 000"])
def umask(request):
    previous = os.umask(request.param)
    yield request.param
    os.umask(previous)


def test_the_kept_script_the_job_folder_and_the_registry_are_private_whatever_the_umask(fake_slurm, umask):
    from slurmkit import Job

    handle = Job(**SECRET_SPEC).submit()
    assert handle.job_id == "4242"
    logs, state = fake_slurm / "logs", fake_slurm / "state"
    script = logs / "4242_submission.sh"
    assert "API_TOKEN=s3cret" in script.read_text()
    assert (_mode(logs), _mode(script)) == (0o700, 0o600)
    registry = state / "slurmkit" / "jobs.jsonl"
    assert (_mode(state), _mode(state / "slurmkit"), _mode(registry)) == (0o700, 0o700, 0o600)
    assert sorted(p.name for p in logs.iterdir()) == ["4242_submission.sh"]  # no other copy left


def test_a_registry_left_readable_by_others_is_narrowed_on_the_next_submission(fake_slurm):
    from slurmkit import Job

    registry = fake_slurm / "state" / "slurmkit" / "jobs.jsonl"
    registry.parent.mkdir(parents=True)
    registry.write_text("")
    registry.chmod(0o644)
    Job(**SECRET_SPEC).submit()
    assert _mode(registry) == 0o600 and registry.read_text().count("\n") == 2  # intent, then the job


def test_a_job_folder_the_user_made_keeps_its_mode(fake_slurm):
    from slurmkit import Job

    (fake_slurm / "shared-logs").mkdir(mode=0o750)
    (fake_slurm / "shared-logs").chmod(0o750)
    Job(**SECRET_SPEC).submit(folder=fake_slurm / "shared-logs")
    assert _mode(fake_slurm / "shared-logs") == 0o750
    assert _mode(fake_slurm / "shared-logs" / "4242_submission.sh") == 0o600


def test_a_script_written_with_render_o_follows_the_umask(fake_slurm):
    from click.testing import CliRunner

    from slurmkit.cli.main import main

    (fake_slurm / "job.yaml").write_text(GOOD_SPEC)
    previous = os.umask(0o077)
    try:
        result = CliRunner().invoke(main, ["render", "job.yaml", "-o", "job.sbatch"])
    finally:
        os.umask(previous)
    assert result.exit_code == 0, result.output
    assert _mode(fake_slurm / "job.sbatch") == 0o700


@pytest.mark.parametrize("command", ["cancel", "status", "watch", "logs", "report"])
@pytest.mark.parametrize("argv, word", [(["--", "--user=nobody"], "--user=nobody"), (["12", "--", "-u", "x"], "-u"),
                                        (["12;rm"], "12;rm"), (["1_2_3"], "1_2_3"), (["١٢"], "١٢"), (["_12"], "_12"),
                                        (["12_"], "12_"), (["12\n"], "12\n")])
def test_commands_that_name_jobs_take_job_ids_only_and_run_no_slurm_command_otherwise(fake_slurm, command, argv, word):
    """Job ids reach sacct, squeue and scancel as arguments: an option there would change what
    is asked (scancel --user cancels every job of a user), and a word that is no id made
    status say the controller did not answer, and watch retry for ever."""
    from click.testing import CliRunner

    from slurmkit.cli.main import main

    if command in ("logs", "report") and len(argv) > 1 and argv[0] == "12":
        argv = argv[1:]  # one id only: the second word would be refused as an extra argument
    for tool in ("sacct", "squeue"):
        (fake_slurm / "bin" / tool).write_text(f'#!/bin/sh\necho "$@" >> {fake_slurm}/{tool}.args\n')
        (fake_slurm / "bin" / tool).chmod(0o755)
    result = CliRunner().invoke(main, [command, *argv])
    assert result.exit_code == 2, result.output
    assert f"{word!r} is not a job id: use 123 (a job or a whole array) or 123_4 (one array task)" in result.stderr
    assert "Traceback" not in result.output
    for tool in ("scancel", "sacct", "squeue"):
        assert not (fake_slurm / f"{tool}.args").exists(), tool


# ------------------------------------------------------------------------------- sanity limits

def spec_error(data: dict) -> str:
    from slurmkit.spec.spec import spec_from_mapping

    with pytest.raises(SpecError) as caught:
        spec_from_mapping(data, source="job.yaml")
    assert "\n" not in str(caught.value)
    return str(caught.value)


def spec_of(**fields) -> dict:
    return {"name": "s", "profile": "local", "account": "def-x", "resources": {"time": "1h"}, "launch": "python a.py", **fields}


def findings_of(profile: str = "local", **fields):
    from slurmkit import Job

    return [str(f) for f in Job(**{**spec_of(**fields), "profile": profile}).resolve().findings]


def test_more_nodes_than_the_cluster_has_is_refused_with_how_many_it_has(folders):
    work, home = folders
    (work / "job.yaml").write_text(GOOD_SPEC.replace("resources: {time: 1h}", "resources: {time: 1h, nodes: 1000000}"))
    refused(work, home, cli("render", "job.yaml", "-o", "job.sbatch"),
            "job.yaml:4: resources.nodes: 1000000 nodes is more than local has of the node types that fit this job "
            "(2 gpu-p100); ask at most 2")


def test_as_many_nodes_as_the_cluster_has_is_fine():
    assert not [f for f in findings_of(resources={"time": "1h", "nodes": 2}) if f.startswith("error")]


@pytest.mark.parametrize("directive, message", [
    ("--array=10-1", "'--array=10-1' sets what kind: array with array.parameters says; use kind: array with array.parameters "
                     "instead (slurmkit writes --array from it)"),
    ("--time=25:00:00", "'--time=25:00:00' sets what resources.time says; use resources.time instead (slurmkit writes --time from it)"),
    ("--tim=1:00:00", "'--tim=1:00:00' sets what resources.time says; use resources.time instead (slurmkit writes --time from it)"),
    ("-t=60", "'-t=60' sets what resources.time says; use resources.time instead (slurmkit writes --time from it)"),
    ("--mem=4G", "'--mem=4G' sets what resources.mem says; use resources.mem instead (slurmkit writes --mem from it)"),
    ("--nodes=2", "'--nodes=2' sets what resources.nodes says; use resources.nodes instead (slurmkit writes --nodes from it)"),
    ("-N2", "'-N2' sets what resources.nodes says; use resources.nodes instead (slurmkit writes --nodes from it)"),
    ("--ntasks=8", "'--ntasks=8' sets what resources.nodes and resources.tasks_per_node says; use resources.nodes and "
                   "resources.tasks_per_node instead (slurmkit writes --ntasks from it)"),
    ("--gres=gpu:2", "'--gres=gpu:2' asks for GPUs, which resources.gpus says; use resources.gpus instead (slurmkit writes "
                     "the GPU request from it)"),
    ("--job-name=x", "'--job-name=x' sets what name says; use name instead (slurmkit writes --job-name from it)"),
    ("--output=o.txt", "'--output=o.txt' sets what logs.output says; use logs.output instead (slurmkit writes --output from it)"),
    ("-e", "'-e' sets what logs.error says; use logs.error instead (slurmkit writes --error from it)"),
    ("--comment=x", "'--comment=x' cannot be given: slurmkit's submission token lives there (it finds a job whose id was lost by it)"),
])
def test_an_extra_directive_that_a_spec_key_decides_is_refused_with_the_key_to_use(directive, message):
    assert spec_error(spec_of(extra_directives=["--constraint=cascade", directive])) == f"job.yaml: extra_directives[1]: {message}"


def test_an_extra_directive_given_twice_is_refused_and_others_pass():
    assert spec_error(spec_of(extra_directives=["--constraint=a", "--gres=lscratch:10", "--constraint=b"])) == (
        "job.yaml: extra_directives[2]: --constraint is given twice (first at extra_directives[0]); keep one")
    from slurmkit.spec.spec import spec_from_mapping

    passed = ("--constraint=cascade", "--gres=lscratch:10", "--time-min=30", "--gres-flags=enforce-binding",
              "--exclusive")   # --mem-per-gpu contradicts --mem
    assert spec_from_mapping(spec_of(extra_directives=list(passed))).extra_directives == passed


@pytest.mark.parametrize("every, message", [
    ("0", "at least 1 minute, got str '0'; a shorter interval copies without pause"),
    ("30s", "at least 1 minute, got str '30s'; a shorter interval copies without pause"),
    (0, "at least 1 minute, got int 0; a shorter interval copies without pause"),
])
def test_a_checkpoint_every_under_a_minute_is_refused(every, message):
    stage = {"checkpoint": {"from": "ckpt", "to": "saved", "every": every}}
    assert spec_error(spec_of(stage=stage)) == f"job.yaml: stage.checkpoint.every: {message}"


@pytest.mark.parametrize("written, message", [
    ("25:00", "'25:00' is minutes:seconds to SLURM (25m), rarely what is meant: "
              "write '25:00:00' or '1-01:00:00' for 25h, or '25m' for 25m"),
    ("2:30", "'2:30' is minutes:seconds to SLURM (2m30s), rarely what is meant: "
             "write '2:30:00' for 2h30m, or '2m30s' for 2m30s"),
])
def test_a_time_slurm_reads_as_minutes_seconds_is_refused_with_the_spelling_for_hours(written, message):
    assert spec_error(spec_of(resources={"time": written})) == f"job.yaml: resources.time: {message}"


def test_an_unquoted_time_in_yaml_is_read_as_sbatch_reads_it_not_as_a_base_60_number(tmp_path):
    from slurmkit.spec.spec import load_spec

    path = tmp_path / "job.yaml"
    path.write_text(GOOD_SPEC.replace("{time: 1h}", "{time: 1:00:00}"))
    assert load_spec(path).resources.time_s == 3600  # YAML 1.1 would make it 3600, read as minutes: 60 hours
    path.write_text(GOOD_SPEC.replace("{time: 1h}", "{time: 25:00}"))
    with pytest.raises(SpecError, match=r"job.yaml:4: resources.time: '25:00' is minutes:seconds to SLURM \(25m\)"):
        load_spec(path)


@pytest.mark.parametrize("stage, message", [
    ({"outputs": [{"from": "a", "to": "results"}, {"from": "b", "to": "results/"}]},
     "stage.outputs[1].to: 'results/' is also where stage.outputs[0] goes: their files would overwrite each other; "
     "give each its own destination"),
    ({"outputs": [{"from": "a", "to": "results"}, {"from": "b", "to": "./results/b"}]},
     "stage.outputs[1].to: './results/b' and stage.outputs[0]'s destination are one inside the other: one copy back would "
     "overwrite or replace the other's files; give them separate folders"),
    ({"outputs": [{"from": "a", "to": "results/run"}], "checkpoint": {"from": "c", "to": "results"}},
     "stage.checkpoint.to: 'results' and stage.outputs[0]'s destination are one inside the other: one copy back would "
     "overwrite or replace the other's files; give them separate folders"),
])
def test_outputs_that_land_on_one_another_are_refused(stage, message):
    assert spec_error(spec_of(stage=stage)) == f"job.yaml: {message}"


def test_outputs_side_by_side_are_fine():
    from slurmkit.spec.spec import spec_from_mapping

    stage = {"outputs": [{"from": "a", "to": "results/a"}, {"from": "b", "to": "results/ab"}], "checkpoint": {"from": "c", "to": "ckpt"}}
    assert len(spec_from_mapping(spec_of(stage=stage)).stage.outputs) == 2


def test_array_outputs_that_every_task_sends_to_one_place_are_warned_about():
    array = {"parameters": {"lr": ["0.1", "0.2"]}}
    same = findings_of(kind="array", array=array, stage={"outputs": [{"from": "out", "to": "results"}]})
    assert ("warning: stage.outputs.0.to: 'results' is the same for every task of the array: each task's files overwrite "
            "the last one's; put the task in it, e.g. results/$SLURM_ARRAY_TASK_ID") in same
    for to in ("results/$SLURM_ARRAY_TASK_ID", "results/${SLURM_ARRAY_TASK_ID}", "results/lr-$lr"):
        varied = findings_of(kind="array", array=array, stage={"outputs": [{"from": "out", "to": to}]})
        assert not [f for f in varied if "same for every task" in f], to


def test_an_array_larger_than_slurmkits_cap_on_a_profile_without_limits_is_refused():
    array = {"parameters": {"a": list(map(str, range(30))), "b": list(map(str, range(30))), "c": list(map(str, range(30)))}}
    # Cedar states neither (Fir's 1000-job limit is now sourced in its profile, so Fir no longer serves here).
    errors = [f for f in findings_of("cedar", kind="array", array=array, launch="python a.py $a $b $c") if f.startswith("error")]
    assert ("error: array.parameters: 27000 tasks are more than slurmkit's cap of 10000 for one array (cedar's profile states "
            "no MaxArraySize or job limit); split the sweep") in errors


def test_a_sweep_of_a_billion_tasks_is_refused_without_building_it(folders):
    work, home = folders
    values = "[" + ", ".join(map(str, range(1000))) + "]"
    text = (GOOD_SPEC.replace("profile: local", "profile: fir") + "kind: array\n"
            f"array:\n  parameters:\n    a: {values}\n    b: {values}\n    c: {values}\n")
    (work / "job.yaml").write_text(text)
    outcome = refused(work, home, cli("render", "job.yaml", "-o", "job.sbatch"),
                      f"job.yaml:{line_of(text, 'parameters:')}: array.parameters: 1000000000 tasks: each array task counts as a job "
                      "and fir allows 1000 queued per user")
    assert outcome.peak_mb < PEAK_LIMIT_MB


def test_a_one_megabyte_command_is_refused_in_one_line_quickly(folders):
    from slurmkit.core.sanity import MAX_COMMAND_CHARS

    work, home = folders
    (work / "job.yaml").write_text(GOOD_SPEC.replace("launch: python main.py", "launch: 'python a.py " + "x" * 1_000_000 + "'"))
    refused(work, home, cli("check", "job.yaml"),
            f"job.yaml:5: launch.command: 1000012 characters, more than slurmkit's limit of {MAX_COMMAND_CHARS} (the most "
            f"Linux passes as one argument); put a long command in a script, or its data in a file the program reads")


def _split_seconds(text: str) -> float:
    import time

    from slurmkit.core.sanity import split_command

    start = time.thread_time()   # CPU time: a loaded machine slows the clock, not the work
    split_command(text)
    return time.thread_time() - start


def test_a_command_below_the_limit_is_split_in_linear_time():
    from slurmkit.core.sanity import MAX_COMMAND_CHARS

    half, full = "x" * (MAX_COMMAND_CHARS // 2), "x" * MAX_COMMAND_CHARS
    for text_half, text_full in ((half, full), ("'" + half + "'", "'" + full + "'"), ('"' + half + '"', '"' + full + '"'),
                                 ("a " * (MAX_COMMAND_CHARS // 4), "a " * (MAX_COMMAND_CHARS // 2))):
        short, long = min(_split_seconds(text_half) for _ in range(3)), min(_split_seconds(text_full) for _ in range(3))
        assert long < 0.25 and long < 4 * short + 0.005, (short, long)  # shlex: 4x and more for twice the length


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab $'\"\\\t\n\r\x0b\xa0#")), max_size=30))
def test_the_linear_split_reads_every_command_as_shlex_does(text):
    import shlex

    from slurmkit.core.sanity import split_linear  # what split_command uses past 2048 characters

    try:
        expected = tuple(shlex.split(text))
    except ValueError as error:
        with pytest.raises(ValueError, match=str(error)):
            split_linear(text)
    else:
        assert split_linear(text) == expected


def test_import_refuses_a_backwards_or_huge_array_range_in_one_note_each():
    from slurmkit.port.porting import import_script

    imported = import_script("#!/bin/bash\n#SBATCH --array=10-1\n#SBATCH --array=0-99999999999\n#SBATCH --array=1-x\n"
                             "#SBATCH --time=30:00\npython a.py\n")
    assert [(n.line, n.outcome, n.reason) for n in imported.notes if n.outcome == "to do" and n.text != "environment.venv"] == [
        (2, "to do", "--array=10-1: '10-1' runs backwards or has step 0; write it FIRST-LAST (e.g. 1-10) with a step of 1 or more"),
        (3, "to do", "--array=0-99999999999: 100000000000 tasks, more than slurmkit's cap of 10000 for one array; split the sweep"),
        (4, "to do", "--array=1-x: '1-x' is not FIRST, FIRST-LAST or FIRST-LAST:STEP"),
    ]
    assert imported.spec["resources"]["time"] == "30m" and "array" not in imported.spec


# --------------------------------------------------------------------- ~ and $HOME in stage paths

def test_tilde_and_home_variables_in_stage_paths_render_as_the_shell_would_read_them():
    from slurmkit import Job

    script = Job(**spec_of(stage={"inputs": ["~/d.tar", {"from": "$SCRATCH/x", "to": "x"}, "rel/y"],
                                  "outputs": [{"from": "out", "to": "~/scratch/run-$SLURM_JOB_ID"}],
                                  "checkpoint": {"from": "ck", "to": "$PROJECT/$USER/ck"}})).render()
    assert 'slurmkit_stage_in extract "${HOME}/d.tar" "${SLURM_TMPDIR}"\n' in script
    assert 'slurmkit_stage_in copy-as "${SCRATCH}/x" "${SLURM_TMPDIR}/x"\n' in script
    assert 'slurmkit_stage_in copy "${SLURM_SUBMIT_DIR}/rel/y" "${SLURM_TMPDIR}"\n' in script
    assert ' "${SLURM_TMPDIR}/out" "${HOME}/scratch/run-${SLURM_JOB_ID}"  # ' in script      # slurmkit_save_on_exit's pair
    assert 'slurmkit_checkpoint "${SLURM_TMPDIR}/ck" "${PROJECT}/${USER}/ck" ' in script
    assert "/~" not in script


@pytest.mark.parametrize("to", ["~", "~/", "$HOME", "${SCRATCH}/"])
def test_a_whole_home_or_scratch_folder_as_a_destination_is_refused(to):
    from slurmkit import Job

    (error,) = Job(**spec_of(stage={"outputs": [{"from": "out", "to": to}]})).resolve().errors
    assert str(error) == (f"error: stage.outputs.0.to: {to!r} is a whole folder such as your home or scratch, which the "
                          f"output would replace or fill: give it a folder of its own inside it (e.g. {to.rstrip('/')}/results)")


def test_check_looks_at_a_tilde_input_where_the_job_will_find_it(tmp_path, monkeypatch):
    from slurmkit.resolve.staging import inspect_inputs
    from slurmkit.spec.spec import spec_from_mapping

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SCRATCH", str(tmp_path / "scratch"))
    monkeypatch.delenv("PROJECT", raising=False)
    for folder in ("home/data", "scratch/more"):
        (tmp_path / folder).mkdir(parents=True)
        for i in range(3):
            (tmp_path / folder / f"f{i}").write_text("x" * 10)
    spec = spec_from_mapping(spec_of(stage={"inputs": ["~/data", "$SCRATCH/more", "$PROJECT/gone"]}))
    shapes = inspect_inputs(spec, tmp_path / "spec-folder")
    assert [(s.index, s.files, s.bytes) for s in shapes] == [(0, 3, 30), (1, 3, 30)]  # $PROJECT unset here: not looked at


# ------------------------------------------------------------------- values keep their spelling

SPELLINGS = ["0.00001", "1.0", "1.10", "1e-3", "010", "0x1F", "1_000", ".5", "yes", "off"]


def test_array_values_reach_the_job_as_the_yaml_file_spells_them(tmp_path):
    import subprocess

    from slurmkit import Job

    path = tmp_path / "job.yaml"
    path.write_text(GOOD_SPEC + "kind: array\narray:\n  parameters:\n"
                    f"    lr: [{', '.join(SPELLINGS)}]\n    wd: 0.000010\n")
    job = Job.from_yaml(path)
    assert dict(job.spec.array.parameters) == {"lr": tuple(SPELLINGS), "wd": ("0.000010",)}
    script = job.render()
    table = "\n".join(line for line in script.splitlines() if line.startswith(("lrs=", "lr=", "wds=", "wd=")))
    for task, spelled in enumerate(SPELLINGS):
        out = subprocess.run(["bash", "-c", table + '\necho "$lr $wd"'], capture_output=True, text=True, check=True,
                             env={"SLURM_ARRAY_TASK_ID": str(task), "PATH": os.environ["PATH"]}).stdout
        assert out == f"{spelled} 0.000010\n"


def test_variables_and_command_words_keep_their_spelling_too(tmp_path):
    from slurmkit.spec.spec import load_spec

    path = tmp_path / "job.yaml"
    path.write_text(GOOD_SPEC.replace("launch: python main.py", "launch: [python, main.py, 0.00001, 010]")
                    + "environment:\n  variables: {SEED: 0.00001, DEBUG: on}\n")
    spec = load_spec(path)
    assert spec.launch.command == ("python", "main.py", "0.00001", "010")
    assert dict(spec.environment.variables) == {"SEED": "0.00001", "DEBUG": "on"}


def test_counts_stay_numbers_and_quoted_values_stay_as_quoted(tmp_path):
    from slurmkit.spec.spec import load_spec

    path = tmp_path / "job.yaml"
    path.write_text(GOOD_SPEC.replace("{time: 1h}", "{time: 1h, nodes: 2, cpus_per_task: 8}")
                    + "kind: array\narray:\n  parameters:\n    lr: ['1e-05', \"0.1\"]\n")
    spec = load_spec(path)
    # a count is a number (010, octal to YAML 1.1, is refused: test_hostile_reader)
    assert (spec.resources.nodes, spec.resources.cpus_per_task) == (2, 8)
    assert dict(spec.array.parameters) == {"lr": ("1e-05", "0.1")}
