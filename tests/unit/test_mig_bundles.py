"""The cores and memory a MIG instance gets when the spec asks none: the site's own
recommendation where its profile gives one (Nibi), else the GPU's bundle in the proportion of
the instance's memory (Fir, Narval, Rorqual, whose pages recommend just that)."""

import functools

import pytest

from slurmkit.resolve.resolve import resolve
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping


@functools.lru_cache(maxsize=None)
def profile(name: str):
    return load_profile(name)


def defaults(cluster: str, gpus: str, **resources):
    data = {"name": "demo", "account": "def-someprof", "kind": "gpu", "resources": {"time": "3h", "gpus": gpus, **resources},
            "launch": {"command": "python main.py"}}
    resolution = resolve(spec_from_mapping(data, source="job.yaml"), profile(cluster))
    assert resolution.plan is not None, resolution.errors
    directives = dict(resolution.plan.directives)
    return directives["--cpus-per-task"], directives.get("--mem")


@pytest.mark.parametrize("instance, cores, memory", [
    ("h100_1g.10gb", "2", "31G"), ("h100_2g.20gb", "4", "62G"), ("h100_3g.40gb", "6", "124G")])
def test_nibi_mig_instances_get_the_cores_and_memory_its_page_recommends(instance, cores, memory):
    """Allocations_and_compute_scheduling/en#Ratios_in_bundles, Nibi: 2 cores 31 GB, 4 / 62, 6 / 124
    (the H100's 14 cores in proportion would give 1, 3 and 7)."""
    assert defaults("nibi", instance) == (cores, memory)


@pytest.mark.parametrize("cluster, instance, cores, memory", [
    ("fir", "h100_1g.10gb", "1", "35G"), ("fir", "h100_3g.40gb", "6", "140G"),
    ("rorqual", "h100_1g.10gb", "2", "15G"), ("rorqual", "h100_3g.40gb", "8", "62G"),
    ("narval", "a100_1g.5gb", "1", "15G"), ("narval", "a100_3g.20gb", "6", "62G")])
def test_elsewhere_a_mig_instance_gets_the_bundle_in_proportion_as_recommended(cluster, instance, cores, memory):
    assert defaults(cluster, instance) == (cores, memory)


def test_a_spec_that_asks_cores_and_memory_for_a_nibi_instance_keeps_them():
    assert defaults("nibi", "h100_1g.10gb", cpus_per_task=1, mem="20G") == ("1", "20G")


def test_the_nibi_profile_gives_each_mig_instance_cores_memory_and_a_source():
    nibi = profile("nibi").node_type("gpu-h100").gpus
    assert [(m.cores, m.host_memory_mib) for m in nibi.mig] == [(2, 31 * 1024), (4, 62 * 1024), (6, 124 * 1024)]
    assert all("https://docs.alliancecan.ca/wiki/Allocations_and_compute_scheduling/en#Ratios_in_bundles" in m.source
               for m in nibi.mig)
