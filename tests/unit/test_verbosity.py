"""-v and -q: what each changes (slurmkit/core/verbosity.py; docs/cli.md)."""

import subprocess

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.core import verbosity
from slurmkit.slurm import slurmcli


@pytest.fixture(autouse=True)
def fresh(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("SLURMKIT_VERBOSITY", "SLURMKIT_PROFILE", "CC_CLUSTER", "SLURM_CLUSTER_NAME", "SBATCH_ACCOUNT", "SLURM_ACCOUNT"):
        monkeypatch.delenv(name, raising=False)
    yield
    verbosity.set_level(None)


def run(*args):
    return CliRunner().invoke(main, list(args))


NEW = ("new", "demo", "--yes", "--profile", "nibi", "--account", "def-someprof", "--kind", "gpu")


def test_quiet_drops_the_wrote_lines_and_keeps_the_result():
    result = run("-q", *NEW, "--show")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("#!/bin/bash\n") and "wrote " not in result.output


def test_quiet_drops_notes_but_not_warnings(capsys):
    verbosity.set_level(verbosity.QUIET)
    verbosity.note("note: something")
    assert capsys.readouterr().err == ""
    verbosity.set_level(None)
    verbosity.note("note: something")
    assert capsys.readouterr().err == "note: something\n"
    open("job.yaml", "w").write("name: t\nprofile: beluga\naccount: def-x\nresources: {time: 1h, mem: 1G}\nlaunch: python t.py\n")
    # a warning is about the job: -q keeps it
    warned = run("-q", "render", "job.yaml").stderr
    assert "warning: " in warned and warned == run("render", "job.yaml").stderr


def test_verbose_says_which_profile_and_why():
    result = run("-v", *NEW)
    assert result.exit_code == 0, result.output
    assert "slurmkit: profile nibi (named in Job(...))\n" in result.stderr
    open("job.yaml", "w").write("name: t\naccount: def-x\nresources: {time: 1h, mem: 1G}\nlaunch: python t.py\n")
    assert "slurmkit: profile fir (given)\n" in run("-v", "render", "job.yaml", "--profile", "fir").stderr
    assert "slurmkit: " not in run("render", "job.yaml", "--profile", "fir").stderr


def test_verbose_shows_each_slurm_command_with_its_time_and_exit(monkeypatch):
    from tests.unit.test_efficiency import SINGLE

    monkeypatch.setattr(slurmcli.subprocess, "run", lambda argv, **kw: subprocess.CompletedProcess(argv, 0, SINGLE, ""))
    result = run("-v", "report", "49")
    assert result.exit_code == 0, result.output
    assert "slurmkit: ran sacct -n -P -D -o JobID,State," in result.stderr and "s, exit 0)\n" in result.stderr
    assert "slurmkit: ran" not in run("report", "49").stderr


def test_the_environment_sets_the_level_for_the_library(monkeypatch, capsys):
    monkeypatch.setenv("SLURMKIT_VERBOSITY", "1")
    verbosity.detail("here")
    assert capsys.readouterr().err == "slurmkit: here\n"
    monkeypatch.setenv("SLURMKIT_VERBOSITY", "loud")
    assert verbosity.level() == verbosity.NORMAL


def test_verbose_and_quiet_together_is_a_usage_error():
    result = run("-v", "-q", "profiles", "list")
    assert result.exit_code == 2 and "give -v (more) or -q (less), not both" in result.output
