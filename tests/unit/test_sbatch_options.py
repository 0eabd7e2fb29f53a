"""sbatch_options.OPTIONS is the one table of the sbatch options a spec decides: every option the
resolver writes from a spec field is in it, and the views (sanity, port, submitit) agree with it."""

from __future__ import annotations

import pytest

from slurmkit.api import functions
from slurmkit.api.job import Job
from slurmkit.core import sanity
from slurmkit.core.kinds import KIND_NAMES
from slurmkit.core.sbatch_options import OPTIONS, PORT_HINTS, SHORT_NAMES, SPEC_FIELDS, SUBMITIT_PARAMETERS
from slurmkit.port import porting
from slurmkit.sites.profiles import list_profiles, load_profile

from .golden_specs import spec_for

#: what the resolver writes that no spec field decides: the logs and the staging signal.
SLURMKIT_WRITES = {"output", "signal", "requeue", "open-mode"}   # signal, requeue, open-mode: kind lightning, stage


@pytest.mark.parametrize("profile", sorted(p.name for p in list_profiles()[0]))
def test_every_option_the_resolver_writes_from_a_spec_is_in_the_table(profile):
    written = set()
    for kind in KIND_NAMES:
        plan = Job(**spec_for(load_profile(profile), kind)).resolve().plan
        if plan is not None:
            written |= {flag[2:] for flag, _ in plan.directives}
    assert written - SLURMKIT_WRITES <= set(SPEC_FIELDS)


def test_the_views_are_the_table():
    assert sanity.SPEC_OPTIONS is SPEC_FIELDS and sanity.SHORT_OPTIONS is SHORT_NAMES
    assert porting.OWN_OPTIONS is PORT_HINTS and functions._NAMED is SUBMITIT_PARAMETERS
    assert porting.SHORT == {f"-{s}": n for s, n in SHORT_NAMES.items()}   # -D is --chdir, read as it is
    assert len({o.name for o in OPTIONS}) == len(OPTIONS) and len(SHORT_NAMES) == len([o for o in OPTIONS if o.short])


def test_an_abbreviation_means_the_first_shortest_option():
    """Order in the table decides ties, as it did in sanity's own list: --gpus-per is --gpus-per-node."""
    assert sanity.long_name("--gpus-per") == "gpus-per-node" and sanity.long_name("--nt") == "ntasks"


def test_an_abbreviated_long_option_is_read_as_sbatch_reads_it():
    """getopt_long takes a unique prefix (``--out`` is --output); an ambiguous one (``--mem-per``:
    --mem-per-cpu or --mem-per-gpu) sbatch refuses, and it stays as written."""
    from slurmkit.core.sbatch_options import full_long_name

    assert [full_long_name(n) for n in ("out", "arr", "accou", "output", "mem", "mem-per", "tim", "nosuch")] == [
        "output", "array", "account", "output", "mem", "mem-per", "tim", "nosuch"]


def test_tasks_is_a_prefix_of_tasks_per_node_and_imports_as_the_task_count():
    """sbatch takes --tasks-per-node as --ntasks-per-node, so --tasks=1 (accepted by Slurm 22.05's
    sbatch on the local cluster) is a prefix of it, not an unknown option left as a to-do."""
    from slurmkit.core.sbatch_options import full_long_name
    from slurmkit.port.porting import import_script

    assert full_long_name("tasks") == "tasks-per-node"
    result = import_script("#!/bin/bash\n#SBATCH --nodes=2 --tasks=4 --time=1:00:00\nsrun ./app\n", "t.sh")
    assert result.spec["resources"]["tasks_per_node"] == 4
    assert not [n for n in result.notes if n.outcome == "to do" and "--tasks" in n.text]
