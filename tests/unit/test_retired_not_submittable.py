"""A retired cluster's spec is not submittable: check says so as an error with the port command
(exit 2), submit and submit --dry-run refuse it before anything is written or asked."""

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main

RETIRED = ("graham", "cedar", "beluga", "niagara")


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("SLURMKIT_PROFILE", "CC_CLUSTER", "SLURM_CLUSTER_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-slurm"))   # an sbatch that ran would be a failure to find


def spec(profile: str) -> None:
    with open("job.yaml", "w") as handle:
        handle.write(f"name: t\nprofile: {profile}\naccount: def-x\nresources: {{nodes: 1, time: 1h}}\nlaunch: python x.py\n")


@pytest.mark.parametrize("profile", RETIRED)
def test_check_on_a_retired_cluster_is_an_error_with_the_port_command(profile):
    spec(profile)
    result = CliRunner().invoke(main, ["check", "job.yaml"])
    assert result.exit_code == 2, result.output
    assert f"error: job.yaml:2: profile: profile '{profile}' describes a cluster retired" in result.output
    assert "`slurmkit port job.yaml --to " in result.output


@pytest.mark.parametrize("profile", RETIRED)
@pytest.mark.parametrize("extra", [[], ["--dry-run"]])
def test_submit_refuses_a_retired_clusters_spec_and_writes_nothing(tmp_path, profile, extra):
    spec(profile)
    result = CliRunner().invoke(main, ["submit", "job.yaml", *extra])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: job.yaml:2: profile: profile '{profile}' describes a cluster retired")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.yaml"]


def test_check_as_json_lists_the_retirement_as_an_error():
    import json

    spec("graham")
    result = CliRunner().invoke(main, ["check", "job.yaml", "--json"])
    levels = {row["field"]: row["level"] for row in json.loads(result.stdout)["findings"]}
    assert result.exit_code == 2 and levels["profile"] == "error"
