"""What every unit test starts from: no account in the environment, so that a spec without one
renders the same bytes on every machine (the resolver takes $SBATCH_ACCOUNT and $SLURM_ACCOUNT
as sbatch does, see slurmkit/accounts.py; inside a SLURM job $SLURM_ACCOUNT is always set)."""

import pytest


@pytest.fixture(autouse=True)
def no_account_in_the_environment(monkeypatch):
    for variable in ("SBATCH_ACCOUNT", "SLURM_ACCOUNT"):
        monkeypatch.delenv(variable, raising=False)
