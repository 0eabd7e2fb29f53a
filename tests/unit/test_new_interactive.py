"""``slurmkit new`` as a person meets it: each answer is checked as it is typed, with
the did-you-mean and the choices, and asked again; the profile it takes says why; errors name
the flag (--gpus), not ``Job(...)``."""

import os

import pytest
from click.testing import CliRunner

from slurmkit.cli import jobs as cli_jobs
from slurmkit.cli.main import main


@pytest.fixture(autouse=True)
def empty_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("SLURMKIT_PROFILE", "CC_CLUSTER", "SLURM_CLUSTER_NAME"):
        monkeypatch.delenv(name, raising=False)


def at_a_terminal(monkeypatch, answers, *args):
    """``slurmkit new demo ARGS`` with a person typing ``answers`` (one line each)."""
    monkeypatch.setattr(cli_jobs, "_can_ask", lambda: True)
    return CliRunner().invoke(main, ["new", "demo", *args], input="".join(line + "\n" for line in answers))


def test_typos_are_caught_at_the_question_that_asked_and_asked_again(monkeypatch):
    result = at_a_terminal(monkeypatch, ["nibby", "nibi", "gpus", "gpu", "def-x", "3h", "a100:1", "h100:1", ""])
    assert result.exit_code == 0, result.output
    told = [line.strip() for line in result.stderr.splitlines()]
    assert told[0].startswith("profile generic, which knows no site's rules: no cluster detected")
    assert told[1].startswith("no site profile named 'nibby' (did you mean 'nibi'?)")
    assert told[2] == ("'gpus' is not one of them; did you mean 'gpu'? allowed: serial, threaded, mpi, gpu, array, "
                       "many-tasks, multigpu, ddp, tf-multiworker, horovod, lightning, accelerate")
    assert told[3] == ("nibi has no GPU called 'a100'; did you mean 'h100'? "
                       "it has: h100, h100_1g.10gb, h100_2g.20gb, h100_3g.40gb, mi300a")
    assert len(told) == 4
    assert result.stdout.count("Site profile [generic]:") == 2 and result.stdout.count("GPUs per node") == 2
    spec = open("demo/job.yaml").read()
    assert "profile: nibi\n" in spec and "kind: gpu\n" in spec and "  gpus: h100:1  # no cores or memory said" in spec


def test_a_blank_account_where_the_site_needs_one_is_asked_again(monkeypatch):
    result = at_a_terminal(monkeypatch, ["", "def-lab", "", ""], "--profile", "local", "--kind", "serial")
    assert result.exit_code == 0, result.output
    assert result.stderr.strip() == "local needs an account: give one such as def-yourprof (or export SBATCH_ACCOUNT)"
    assert "account: def-lab\n" in open("demo/job.yaml").read()


def test_a_time_above_the_sites_maximum_is_asked_again(monkeypatch):
    result = at_a_terminal(monkeypatch, ["8d", "2d", ""], "--profile", "nibi", "--kind", "serial", "--account", "def-x")
    assert result.exit_code == 0, result.output
    assert "8d is above nibi's maximum walltime of 7d" in result.stderr
    assert "time: 2d\n" in open("demo/job.yaml").read()


def test_without_a_terminal_it_says_which_profile_it_detected_and_why(monkeypatch):
    monkeypatch.setenv("CC_CLUSTER", "nibi")
    result = CliRunner().invoke(main, ["new", "demo", "--kind", "serial", "--account", "def-x"])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == ("profile nibi, detected from $CC_CLUSTER=nibi; choose another with "
                                             "--profile NAME (`slurmkit profiles list`)")


def test_without_a_terminal_and_no_cluster_it_says_generic_is_a_fallback(monkeypatch):
    result = CliRunner().invoke(main, ["new", "demo", "--yes"])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0].startswith("profile generic, which knows no site's rules: no cluster detected")
    assert result.stderr.splitlines()[0].endswith("; choose another with --profile NAME (`slurmkit profiles list`)")


def test_with_a_profile_given_nothing_is_said_about_detection():
    result = CliRunner().invoke(main, ["new", "demo", "--yes", "--profile", "nibi", "--account", "def-x"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert os.path.exists("demo/job.sbatch")
