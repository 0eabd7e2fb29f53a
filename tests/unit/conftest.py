"""What every unit test starts from: no account and no sbatch input variable in the environment,
so that a spec renders the same bytes and findings on every machine (the resolver takes
$SBATCH_ACCOUNT and $SLURM_ACCOUNT as sbatch does, see slurmkit/resolve/accounts.py, and reports the
other SBATCH_* variables, sbatch_environment.py; inside a SLURM job $SLURM_ACCOUNT is set).

Nor does a unit test know which cluster it runs on: $SLURM_CONF (the suite exports the local
cluster's for every tier), $CC_CLUSTER and $SLURM_CLUSTER_NAME are removed, so a spec for any
cluster is checked as it would be on a laptop (sites/elsewhere.py refuses a spec for another
cluster than the one these name)."""

import os

import pytest


@pytest.fixture(autouse=True)
def no_account_in_the_environment(monkeypatch):
    for variable in ("SBATCH_ACCOUNT", "SLURM_ACCOUNT", "SLURM_CLUSTERS", "SLURM_HINT"):
        monkeypatch.delenv(variable, raising=False)
    for variable in [name for name in os.environ if name.startswith("SBATCH_")]:
        monkeypatch.delenv(variable)


@pytest.fixture(autouse=True)
def no_cluster_told_by_the_environment(monkeypatch):
    for variable in ("SLURM_CONF", "CC_CLUSTER", "SLURM_CLUSTER_NAME"):
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture(autouse=True)
def runtime_in_a_data_folder_of_the_tests_own(tmp_path_factory, monkeypatch):
    """submit, new and render -o write slurmkit's runtime library into the data folder: the tests'
    own, never the user's ~/.local/share."""
    if not os.path.isabs(os.environ.get("XDG_DATA_HOME", "")) or "pytest" not in os.environ.get("XDG_DATA_HOME", ""):
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.getbasetemp() / "xdg-data"))


@pytest.fixture(autouse=True)
def registry_of_the_tests_own(tmp_path_factory, monkeypatch):
    """A registry of each test's own, never the user's ~/.local/state/slurmkit: a report test
    of job 49 read a real job 49 that a user of this machine had submitted (and its exit file)."""
    monkeypatch.delenv("SLURMKIT_REGISTRY", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
