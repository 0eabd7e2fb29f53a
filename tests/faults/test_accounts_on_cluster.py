"""An account the user has no association with, on the real local cluster (Slurm 22.05, which
enforces associations as the Alliance's clusters do): ``check`` says what sbatch would say,
before submission, with the user's own accounts; where accounting cannot be asked, ``check``
goes on without a verdict."""

import os

from .test_slurm_config import counted, runs  # noqa: F401  (the fixture)
from .test_submission import run_cli


def spec(tmp_path, account):
    path = tmp_path / "job.yaml"
    path.write_text(f"name: acct\nprofile: local\naccount: {account}\nresources: {{time: 1h}}\nlaunch: {{command: ['true']}}\n")
    return path


def test_check_refuses_an_account_accounting_does_not_give_the_user_and_keeps_one_it_does(cluster, tmp_path):
    refused = run_cli("check", spec(tmp_path, "def-tset"))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    said = refused.stdout + refused.stderr
    assert "job.yaml:3: account: 'def-tset' is not one of your accounts on this cluster" in said
    assert "did you mean 'def-test'?" in said
    sbatch = run_cli("submit", spec(tmp_path, "def-tset"))   # what sbatch itself says of it: the check is no guess
    assert sbatch.returncode != 0 and "Invalid account" in sbatch.stdout + sbatch.stderr
    kept = run_cli("check", spec(tmp_path, "def-test"))
    assert kept.returncode == 0 and kept.stdout.endswith("job.yaml: no problems found\n"), kept.stdout + kept.stderr


def test_where_accounting_cannot_be_asked_check_says_the_account_went_unchecked(cluster, tmp_path):
    folder = tmp_path / "bin"
    folder.mkdir()
    broken = folder / "sacctmgr"
    broken.write_text("#!/bin/bash\necho 'sacctmgr: error: Problem talking to the database: Connection refused' >&2\nexit 1\n")
    broken.chmod(0o755)
    checked = run_cli("check", spec(tmp_path, "def-tset"), env={**os.environ, "PATH": f"{folder}:{os.environ['PATH']}"})
    said = checked.stdout + checked.stderr
    assert checked.returncode == 0 and "no problems found" not in said, said
    assert "warning: " in said and "account: 'def-tset' was not checked against your accounts: accounting did not answer" in said


def test_the_account_is_checked_with_the_specs_other_errors_in_one_run(cluster, tmp_path):
    """A spec with a misspelt key used to show its account error only in the run after."""
    path = spec(tmp_path, "def-tset")
    path.write_text(path.read_text().replace("resources:", "resourcs:"))
    checked = run_cli("check", path)
    errors = [line for line in (checked.stdout + checked.stderr).splitlines() if line.startswith("error: ")]
    assert checked.returncode == 2 and [line.split(": ")[2] for line in errors] == ["account", "resourcs"], errors


def test_the_account_is_checked_beside_a_gpu_model_the_cluster_lacks_and_a_misspelt_key(cluster, tmp_path):
    """A second retrial found the account skipped when the spec also named a GPU the cluster lacks."""
    path = spec(tmp_path, "def-tset")
    path.write_text(path.read_text().replace("resources: {time: 1h}", "resources: {time: 1h, cpus: 2, gpus: 'v100:1'}"))
    checked = run_cli("check", path)
    errors = [line for line in (checked.stdout + checked.stderr).splitlines() if line.startswith("error: ")]
    assert checked.returncode == 2 and sorted(line.split(": ")[2] for line in errors) == ["account", "resources.cpus", "resources.gpus"]


def test_slurm_account_which_sbatch_does_not_read_is_not_checked_over_the_specs_account(cluster, tmp_path):
    """Inside an salloc session SLURM sets $SLURM_ACCOUNT; sbatch reads only $SBATCH_ACCOUNT."""
    env = {**os.environ, "SLURM_ACCOUNT": "def-tset"}
    checked = run_cli("check", spec(tmp_path, "def-test"), env=env)
    assert checked.returncode == 0 and "not one of your accounts" not in checked.stdout + checked.stderr
    refused = run_cli("check", spec(tmp_path, "def-test"), env={**os.environ, "SBATCH_ACCOUNT": "def-tset"})
    assert refused.returncode == 2 and "$SBATCH_ACCOUNT=def-tset: 'def-tset' is not one of your accounts" in refused.stdout + refused.stderr
