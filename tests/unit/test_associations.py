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
