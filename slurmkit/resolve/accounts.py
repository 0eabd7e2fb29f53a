"""The account a job is charged to when its spec names none: the one sbatch would take.

sbatch reads ``$SBATCH_ACCOUNT`` as ``--account`` (man sbatch, INPUT ENVIRONMENT VARIABLES:
"SBATCH_ACCOUNT  Same as -A, --account"), and "environment variables will override any options
set in a batch script" (same section, Slurm 22.05 and later). ``$SLURM_ACCOUNT`` is what Slurm
sets inside a job or an salloc allocation (OUTPUT ENVIRONMENT VARIABLES); sbatch does not read
it, so slurmkit writes whichever it takes into the script as ``--account``: the script then
says which account it charges, whatever environment submits it later.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional

from slurmkit.core.records import Record

#: the variables read, in order: what sbatch reads first, then the allocation's own.
ACCOUNT_VARIABLES = ("SBATCH_ACCOUNT", "SLURM_ACCOUNT")


class EnvironmentAccount(Record):
    account: str
    variable: str   # the variable it came from, for messages


def from_environment(environ: Optional[Mapping[str, str]] = None) -> Optional[EnvironmentAccount]:
    """The account of the first of ACCOUNT_VARIABLES that is set and not blank, else None."""
    environ = os.environ if environ is None else environ
    for variable in ACCOUNT_VARIABLES:
        value = environ.get(variable, "").strip()
        if value:
            return EnvironmentAccount(value, variable)
    return None


def overriding(spec_account: str, environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """``$SBATCH_ACCOUNT`` when it names another account than the spec: sbatch charges that one."""
    environ = os.environ if environ is None else environ
    value = environ.get("SBATCH_ACCOUNT", "").strip()
    return value if value and value != spec_account else None
