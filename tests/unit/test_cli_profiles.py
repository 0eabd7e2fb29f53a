"""``slurmkit profiles``: list, show, validate and detect's input checks, through click."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.sites.profiles import load_profile

BAD = Path(__file__).parent / "fixtures" / "bad_profiles"


@pytest.fixture
def run(tmp_path, monkeypatch):
    """Run ``slurmkit ARGS`` in an empty folder with an empty user config and no cluster
    variables, so only the bundled profiles (and what a test writes) are on the search path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for variable in ("SLURMKIT_PROFILE", "CC_CLUSTER", "SLURM_CLUSTER_NAME", "NO_COLOR"):
        monkeypatch.delenv(variable, raising=False)

    def invoke(*args, env=None):
        return CliRunner().invoke(main, ["profiles", *args], env=env)

    return invoke


def user_profile(name: str, text: str) -> Path:
    folder = Path("site_profiles")
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def test_slurmkit_help_imports_neither_yaml_nor_rich():
    code = ("import sys; from click.testing import CliRunner; from slurmkit.cli.main import main; "
            "r = CliRunner().invoke(main, ['--help']); assert 'profiles' in r.output, r.output; "
            "print(sorted(m for m in ('yaml', 'rich', 'jinja2', 'submitit', 'slurmkit.sites.profiles') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_list_prints_a_plain_table_when_piped(run):
    result = run("list")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["name", "status", "node", "types", "GPU", "models", "max", "walltime"]
    local = next(line for line in lines if line.startswith("local "))
    assert local.split() == ["local", "in-service", "gpu-p100", "p100", "7d"]
    assert not any(line.startswith("alliance ") for line in lines)  # abstract: not a cluster
    assert "\x1b[" not in result.stdout


def test_list_json_gives_every_column_for_scripts(run):
    result = run("list", "--json")
    entries = {entry["name"]: entry for entry in json.loads(result.stdout)["profiles"]}
    assert entries["local"]["node_types"] == ["gpu-p100"] and entries["local"]["max_walltime_seconds"] == 604800
    assert entries["generic"]["max_walltime"] == "-"


def test_list_names_a_broken_user_profile_and_still_lists_the_rest(run):
    user_profile("mine", "name: mine\nstatus: {state: in-sevice}\n")
    result = run("list")
    assert result.exit_code == 2
    assert "local" in result.stdout
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: ") and line.endswith(
        "site_profiles/mine.yaml:2: status.state: got 'in-sevice'; allowed: one of in-service, retired (did you mean 'in-service'?) "
        "(skipped; the other profiles are listed)")


def test_show_prints_a_summary_and_the_node_types(run):
    result = run("show", "local")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("local: The local test cluster")
    assert "max 7d" in result.stdout and "srun --mpi=pmix" in result.stdout
    row = next(line for line in result.stdout.splitlines() if line.startswith("gpu-p100"))
    assert row.split()[:5] == ["gpu-p100", "2", "2", "1", "4000M"] and "2 x p100" in row


def test_show_prints_the_rules_that_decide_whether_a_job_runs_with_their_sources(run):
    """Trillium's read-only paths, self-submission, login nodes, GPU counts, whole GPU nodes on several nodes, its
    partitions' limits, environments built on the login node, the VAST preload's launcher and Lustre's lfs on VAST."""
    result = run("show", "trillium")
    assert result.exit_code == 0, result.output
    rules = [line for line in result.stdout.splitlines() if "[https://" in line]
    assert rules[0].split()[0] == "rules" and len(rules) == 24
    assert any("vastpreload takes effect only under mpirun" in r for r in rules)
    assert any("the shared file systems are VAST, not Lustre" in r for r in rules)
    assert any("500 jobs queued or running per user" in r for r in rules) and any("whole nodes of 192 cores" in r for r in rules)
    assert any("GPU jobs do not name the compute partition: the scheduler picks it (naming it is warned about)" in r for r in rules)
    assert any("1d of walltime at most" in r for r in rules)
    assert any("no job is submitted from the" in r for r in rules) and any("compute nodes reach no internet" in r for r in rules)
    assert any("name no partition but default" in r for r in run("show", "nibi").stdout.splitlines())
    assert any("a GPU job on more than one node takes whole GPU nodes (4 GPUs per node)" in r for r in rules)
    assert any("CPU jobs in the debug partition: 2 nodes at most, 1h at most" in r for r in rules)
    assert any("CPU jobs in the compute partition (the default): 128 nodes at most, 15m at least, 10 nodes without a RAC "
               "allocation (more is warned about)" in r for r in rules)
    assert any("no job is submitted from the data-mover nodes (tri-dm*, nia-datamover*)" in r for r in rules)
    assert any("compute nodes reach no internet" in r and "wiki/Trillium/en]" in r for r in rules)
    assert "read-only inside jobs: $HOME, $PROJECT, /home, /project" in rules[0]
    assert any("jobs cannot submit jobs" in r and "Trillium_Quickstart/en]" in r for r in rules)
    assert any("GPU jobs only from trig-login*" in r for r in rules)
    assert any("GPUs per node: 1 or 4" in r for r in rules)
    assert any("Python environments are built on a login node, in $HOME/.slurmkit/envs: 'slurmkit env build SPEC'" in r
               and "wiki/Python/en]" in r for r in rules)
    rorqual = run("show", "rorqual").stdout
    assert "--tmp from 370G to 3360G" in rorqual and "[https://docs.alliancecan.ca/wiki/Rorqual/en]" in rorqual
    narval = run("show", "narval").stdout
    assert "torch 2.5.1" not in narval   # no H100 there
    assert "blocked on purpose: StdEnv/2016, StdEnv/2018" in narval and "name a GPU model" in narval
    assert "name a GPU model" not in run("show", "trillium").stdout   # one kind of GPU there


def test_show_yaml_prints_the_merged_profile(run):
    result = run("show", "local", "--yaml")
    assert yaml.safe_load(result.stdout) == load_profile("local").raw


def test_show_without_a_name_uses_the_detected_profile(run):
    result = run("show", env={"SLURM_CLUSTER_NAME": "lab"})
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("local:") and "$SLURM_CLUSTER_NAME=lab" in result.stdout


def test_show_without_a_name_on_an_unknown_machine_says_how_to_choose(run):
    result = run("show", env={"CC_CLUSTER": "nowhere"})
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: cannot tell which cluster this is") and "--profile NAME" in line


def test_show_of_a_retired_profile_warns_with_its_successor(run):
    user_profile("new", "name: new\nstatus: {state: in-service, source: x}\n")
    user_profile("old", "name: old\nstatus: {state: retired, retired_on: 2025-09-01, successor: new, source: x}\n")
    result = run("show", "old")
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        "note: using ./site_profiles/old.yaml from the current folder",
        "warning: profile 'old' describes a cluster retired on 2025-09-01; its successor is 'new': "
        "move the job with `slurmkit port JOB.yaml --to new -o new.yaml`"]


def test_show_of_an_unknown_name_is_one_line_with_a_suggestion(run):
    result = run("show", "locl")
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert "no site profile named 'locl' (did you mean 'local'?)" in line


def test_validate_passes_good_files_and_exits_0(run):
    from slurmkit.core.bundled import profiles_dir

    result = run("validate", str(profiles_dir() / "local.yaml"), str(profiles_dir() / "generic.yaml"))
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == 2 and result.stdout.startswith("ok: ")


@pytest.mark.parametrize("path", sorted(p for p in BAD.glob("*.yaml") if p.stem != "base"), ids=lambda p: p.stem)
def test_validate_gives_each_malformed_profile_one_line_and_exit_2(run, path):
    result = run("validate", str(path))
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {path}:") and "Traceback" not in result.output
    assert result.stdout == ""


def test_validate_of_a_missing_file_is_bad_input(run):
    result = run("validate", "nowhere.yaml")
    assert result.exit_code == 2 and "nowhere.yaml: cannot read" in result.stderr


def test_detect_refuses_a_name_that_differs_from_the_output_file(run):
    result = run("detect", "-o", "site_profiles/lab.yaml", "--name", "other")
    assert result.exit_code == 2 and "--name other differs from the file name" in result.stderr
    assert not Path("site_profiles").exists()


def test_detect_never_overwrites_without_force(run):
    existing = user_profile("lab", "name: lab\n")
    result = run("detect", "-o", str(existing))
    assert result.exit_code == 2 and "exists; pass --force" in result.stderr
    assert existing.read_text() == "name: lab\n"


def _on_a_terminal(argv, env) -> str:
    """What ``slurmkit ARGV`` prints with its stdout on a terminal (a pseudo-terminal)."""
    import os
    import pty

    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "slurmkit.cli", *argv], stdout=follower, stderr=subprocess.DEVNULL,
                               env={**os.environ, "COLUMNS": "200", **env})
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:   # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode()


def test_list_on_a_terminal_honours_no_color(tmp_path):
    """https://no-color.org: NO_COLOR set (to anything) means no colour, even on a terminal."""
    coloured = _on_a_terminal(["profiles", "list"], {"XDG_CONFIG_HOME": str(tmp_path)})
    plain = _on_a_terminal(["profiles", "list"], {"XDG_CONFIG_HOME": str(tmp_path), "NO_COLOR": "1"})
    assert "\x1b[" in coloured   # the terminal does get colour without it
    assert "\x1b[" not in plain and plain.splitlines()[0].split() == ["name", "status", "node", "types", "GPU", "models", "max", "walltime"]
