"""A GPU job across nodes of an Ethernet-linked cluster says what NCCL does there.

Nibi's GPU nodes talk over 200 Gb/s Ethernet, not InfiniBand, and its page gives no NCCL setting
(alliance facts: "none documented"), so the script says that, rather than staying silent or
inventing NCCL variables. One node (NVLink) and InfiniBand clusters say nothing.
"""

import pytest

from slurmkit.api.job import Job
from slurmkit.render.render import render
from slurmkit.sites.profiles import load_profile

from .golden_specs import spec_for

NOTE = "linked by Ethernet, not InfiniBand"


def _script(profile: str, kind: str) -> str:
    return render(Job(**spec_for(load_profile(profile), kind)).resolve().plan)


@pytest.mark.parametrize("kind", ["ddp", "horovod", "lightning", "accelerate", "tf-multiworker"])
def test_a_multi_node_gpu_job_on_nibi_says_no_nccl_setting_is_documented(kind):
    script = _script("nibi", kind)
    assert script.count(NOTE) == 1 and "gives no NCCL setting" in script


@pytest.mark.parametrize("profile, kind", [("nibi", "multigpu"), ("fir", "ddp"), ("rorqual", "ddp"), ("nibi", "mpi")])
def test_one_node_or_an_infiniband_cluster_says_nothing_of_it(profile, kind):
    assert NOTE not in _script(profile, kind)


SWITCH = "for tightly coupled jobs, its page advises #SBATCH --switches=1 (https://docs.alliancecan.ca/wiki/Nibi/en#Interconnect_fabric)"


@pytest.mark.parametrize("kind", ["ddp", "horovod", "lightning", "accelerate", "tf-multiworker"])
def test_a_multi_node_gpu_job_on_nibi_cites_the_pages_one_switch_advice_as_a_comment(kind):
    """Nibi's page advises --switches=1 for tightly coupled multi-node jobs. A comment, not the
    directive: waiting for one switch can hold a job in the queue far longer."""
    script = _script("nibi", kind)
    assert script.count(SWITCH) == 1 and "\n#SBATCH --switches" not in script
    assert f"prints which); {SWITCH}\n" in script   # one line with the Ethernet note: the user part stays short


@pytest.mark.parametrize("profile, kind", [("nibi", "multigpu"), ("fir", "ddp"), ("nibi", "mpi")])
def test_one_node_or_a_site_without_the_advice_has_no_switch_line(profile, kind):
    assert "--switches" not in _script(profile, kind)
