"""The account from the environment: a spec that names none is charged to
$SBATCH_ACCOUNT, as sbatch does (man sbatch: "SBATCH_ACCOUNT  Same as -A, --account"; Slurm 22.05
here and the Alliance's newer Slurm alike), else to $SLURM_ACCOUNT; either is written into the
script, so that the script says what it charges."""

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.resolve.accounts import from_environment, overriding
from tests.unit.test_resolve import directives, job, only_error, warnings_of


def test_sbatch_account_comes_first_then_slurm_account_and_blank_is_unset():
    assert from_environment({"SBATCH_ACCOUNT": "def-a", "SLURM_ACCOUNT": "def-b"}) == ("def-a", "SBATCH_ACCOUNT")
    assert from_environment({"SBATCH_ACCOUNT": " ", "SLURM_ACCOUNT": "def-b"}) == ("def-b", "SLURM_ACCOUNT")
    assert from_environment({}) is None


@pytest.mark.parametrize("variable", ["SBATCH_ACCOUNT", "SLURM_ACCOUNT"])
def test_a_spec_without_an_account_takes_the_environments_into_the_script(variable):
    resolution = job("local", account=None, environ={variable: "def-lab"})   # local: an account is always required
    assert directives(resolution)["--account"] == "def-lab" and resolution.findings == ()


def test_without_any_the_site_that_needs_one_still_says_so():
    assert only_error(job("local", account=None)).message.endswith("(or export SBATCH_ACCOUNT)")


def test_the_spec_account_wins_in_the_script_and_a_different_sbatch_account_is_a_warning():
    resolution = job("nibi", account="def-someprof", environ={"SBATCH_ACCOUNT": "def-other"})
    assert directives(resolution)["--account"] == "def-someprof"
    assert warnings_of(resolution, "account") == [
        "$SBATCH_ACCOUNT=def-other overrides it: sbatch charges def-other, not def-someprof; "
        "unset SBATCH_ACCOUNT or make the two agree"]
    assert overriding("def-someprof", {"SBATCH_ACCOUNT": "def-someprof"}) is None


def test_an_environment_account_that_does_not_look_like_the_sites_says_where_it_came_from():
    assert warnings_of(job("nibi", account=None, environ={"SLURM_ACCOUNT": "someprof"}), "account") == [
        "'someprof' (from $SLURM_ACCOUNT) does not look like a nibi account (def-..., rrg-..., rpp-..., ctb-...)"]


def test_check_passes_a_spec_without_an_account_when_sbatch_account_is_set(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.yaml").write_text("name: hello\nprofile: local\nkind: serial\nresources: {time: 10m}\nlaunch: {command: echo hi}\n")
    assert CliRunner().invoke(main, ["check", "job.yaml"]).exit_code == 2
    monkeypatch.setenv("SBATCH_ACCOUNT", "def-lab")
    result = CliRunner().invoke(main, ["render", "job.yaml"])
    assert result.exit_code == 0 and "#SBATCH --account=def-lab\n" in result.stdout


def test_resolve_reads_no_environment_of_its_own(monkeypatch):
    """The submit shell reaches resolve as facts (LocalFacts.environment, which Job gathers):
    the same spec, profile and facts give the same plan whatever the calling process has set."""
    monkeypatch.setenv("SBATCH_ACCOUNT", "def-other")
    monkeypatch.setenv("SBATCH_TIMELIMIT", "1:00:00")
    assert job("nibi", account="def-someprof").findings == job("nibi", account="def-someprof", environ={}).findings == ()


def test_a_contributed_allocation_account_is_an_alliance_account():
    """ctb-* accounts exist (the JupyterHub page lists def-, rrg-, rpp- and ctb- accounts); a
    Narval script's ctb-lab was warned as not looking like a Narval account."""
    assert warnings_of(job("narval", account="ctb-lab"), "account") == []
