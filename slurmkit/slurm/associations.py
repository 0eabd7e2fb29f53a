"""Whether the account a job charges is one SLURM lets this user charge, asked by ``check``.

sbatch refuses a job whose account is not one of the user's associations ("Invalid account or
account/partition combination specified") where accounting enforces them, as on every Alliance
cluster; ``check`` said nothing of it. So ``check``, on the cluster the job is for, asks
accounting once (``sacctmgr show assoc``, no retry, a short timeout) and makes an unknown
account an error with the user's own accounts and a did-you-mean.

The Alliance tracks CPU and GPU use apart, as ``def-prof_cpu`` and ``def-prof_gpu``, while users
pass the bare name to ``--account`` (Job_scheduling_policies, Running_jobs): the bare name of
either counts. Where accounting does not answer, a warning says the account went unchecked;
where it lists no account for the user, nothing is said (sbatch still answers for itself).
"""

from __future__ import annotations

import getpass
from typing import List, Optional, Sequence, Union

from slurmkit.core.errors import SlurmkitError, closest
from slurmkit.core.findings import Finding

#: the suffixes the Alliance adds to an account for CPU and GPU fair share.
TRACKING_SUFFIXES = ("_cpu", "_gpu")
#: seconds accounting has to answer before check goes on without it.
ASK_TIMEOUT_S = 10.0


class Unasked(str):
    """Why accounting could not be asked (its error, one line): no list of accounts."""


def user_accounts(user: Optional[str] = None) -> Union[List[str], Unasked, None]:
    """The accounts accounting associates with ``user`` (default: this user), bare names, sorted;
    Unasked (why) where accounting did not answer; None where SLURM has no configuration here
    (a host that only looks like the cluster: a laptop with ``$CC_CLUSTER`` set)."""
    from slurmkit.slurm.slurmcli import run_slurm

    user = user or getpass.getuser()
    try:
        listed = run_slurm(["sacctmgr", "-n", "-P", "show", "assoc", f"user={user}", "format=account"], retry_for=0.0,
                           timeout=ASK_TIMEOUT_S).stdout
    except SlurmkitError as error:
        from slurmkit.slurm.monitor import NOT_CONFIGURED

        if any(marker in error.message for marker in NOT_CONFIGURED):
            return None   # no SLURM configured on this host: it is not on the cluster, nothing to say
        return Unasked(error.message)
    return sorted({bare(line.strip()) for line in listed.splitlines() if line.strip()})


def bare(account: str) -> str:
    """``def-prof_cpu`` -> ``def-prof``: the name a user gives ``--account``."""
    for suffix in TRACKING_SUFFIXES:
        if account.endswith(suffix):
            return account[:-len(suffix)]
    return account


def account_findings(account: Optional[str], yours: Union[Sequence[str], Unasked, None]) -> List[Finding]:
    """An error on ``account`` when accounting listed this user's accounts and it is not one; a
    warning that it went unchecked when accounting could not be asked (so that "no problems
    found" never stands for a check that was not made)."""
    if isinstance(yours, Unasked) and account:
        return [Finding("warning", "account", f"{account!r} was not checked against your accounts: accounting did not "
                                              f"answer ({yours}); sbatch will say if it refuses it")]
    if not account or not yours or bare(account) in yours:
        return []
    close = closest(account, yours)
    hint = f"did you mean '{close}'? " if close else ""
    return [Finding("error", "account", f"{account!r} is not one of your accounts on this cluster, so sbatch would refuse "
                                        f"the job (Invalid account); {hint}yours: {', '.join(yours)} "
                                        "(from sacctmgr show assoc)")]
