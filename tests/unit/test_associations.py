"""An account against the user's associations (slurm/associations.py): the decision, without a
cluster (tests/faults/test_accounts_on_cluster.py asks the local cluster's accounting)."""

import pytest

from slurmkit.slurm.associations import Unasked, account_findings, bare


@pytest.mark.parametrize("listed, name", [("def-prof_cpu", "def-prof"), ("def-prof_gpu", "def-prof"), ("rrg-prof", "rrg-prof"),
                                          ("def-prof_cpu_x", "def-prof_cpu_x")])
def test_the_alliances_tracking_suffixes_are_taken_off(listed, name):
    assert bare(listed) == name


@pytest.mark.parametrize("account, yours, refused", [
    ("def-tset", ["def-other", "def-test"], True),
    ("def-test", ["def-other", "def-test"], False),
    ("def-prof_cpu", ["def-prof"], False),    # a tracking name given to --account: its bare name is the user's
    ("def-x", [], False),                     # accounting lists nothing for the user: no verdict
    ("def-x", None, False),                   # not asked: no verdict
    (None, ["def-test"], False),              # no account: resolve's own rule speaks
])
def test_an_account_not_among_the_users_is_an_error_with_a_did_you_mean(account, yours, refused):
    found = account_findings(account, yours)
    assert bool(found) == refused
    if refused:
        assert found[0].level == "error" and found[0].field == "account"
        assert found[0].message == ("'def-tset' is not one of your accounts on this cluster, so sbatch would refuse the job "
                                    "(Invalid account); did you mean 'def-test'? yours: def-other, def-test (from sacctmgr show assoc)")


def test_an_account_accounting_could_not_be_asked_about_is_a_warning_not_no_problem():
    [said] = account_findings("def-x", Unasked("sacctmgr failed: Connection refused"))
    assert (said.level, said.field) == ("warning", "account")
    assert said.message == ("'def-x' was not checked against your accounts: accounting did not answer (sacctmgr failed: "
                            "Connection refused); sbatch will say if it refuses it")


def test_a_host_where_slurm_has_no_configuration_is_not_asked_about(monkeypatch):
    """A laptop with $CC_CLUSTER set looks like the cluster, but its sacctmgr finds no
    configuration: that is no unchecked account to warn of (the login-node page's first job)."""
    from slurmkit.slurm import associations, slurmcli

    def no_configuration(argv, **options):
        raise slurmcli.SchedulerError("sacctmgr failed: _establish_config_source: failed to fetch config; "
                                      "sacctmgr: fatal: Could not establish a configuration source")

    monkeypatch.setattr(slurmcli, "run_slurm", no_configuration)
    assert associations.user_accounts("me") is None and account_findings("def-x", None) == []
    monkeypatch.setattr(slurmcli, "run_slurm", lambda argv, **options: (_ for _ in ()).throw(
        slurmcli.SchedulerError("sacctmgr failed: Connection refused")))
    assert isinstance(associations.user_accounts("me"), Unasked)
