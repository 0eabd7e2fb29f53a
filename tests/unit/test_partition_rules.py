"""Site rules about partitions and GPU nodes, from the profile's ``rules:`` (Trillium's
Quickstart page): each with a spec that breaks it and one that keeps it, on Trillium, and the
breaking spec on a cluster where the rule does not apply."""

import functools

import pytest

from slurmkit.resolve.resolve import resolve
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

SOURCE = "(source: https://docs.alliancecan.ca/wiki/Trillium_Quickstart/en)"


@functools.lru_cache(maxsize=None)
def profile(name: str):
    return load_profile(name)


def resolved(cluster: str, kind: str = "mpi", partition=None, **resources):
    data = {"name": "demo", "account": "def-someprof", "kind": kind, "resources": {"time": "3h", **resources},
            "launch": {"command": "./solver"}}
    if partition:
        data["extra_directives"] = [partition]
    return resolve(spec_from_mapping(data, source="job.yaml"), profile(cluster))


def errors(resolution, field):
    return [f.message for f in resolution.errors if f.field == field]


# ------------------------------------------------------------------ multi-node GPU jobs

def test_trillium_refuses_part_of_each_gpu_node_on_several_nodes_with_the_fix():
    resolution = resolved("trillium", kind="ddp", nodes=2, gpus="h100:1")
    assert errors(resolution, "resources.gpus") == [
        "1 GPU(s) per node on 2 nodes: trillium gives a job on more than one node whole GPU nodes only; ask 'gpus: h100:4' "
        f"(8 GPUs in all), or 'nodes: 1' {SOURCE}"]


def test_trillium_takes_whole_gpu_nodes_on_several_nodes_and_one_gpu_on_one_node():
    assert resolved("trillium", kind="ddp", nodes=2, gpus="h100:4").errors == ()
    assert resolved("trillium", kind="gpu", gpus="h100:1").errors == ()


def test_elsewhere_one_gpu_per_node_on_several_nodes_is_no_error():
    assert resolved("rorqual", kind="ddp", nodes=2, gpus="h100:1").errors == ()


# --------------------------------------------------------------------- debug partition

def test_trillium_debug_partition_refuses_a_cpu_job_above_two_nodes_or_one_hour():
    resolution = resolved("trillium", partition="--partition=debug", nodes=3, time="2h")
    assert errors(resolution, "resources.nodes") == [
        "3 nodes is more than trillium's debug partition takes (2 at most); ask fewer, or leave the partition out "
        f"(extra_directives) for the default one {SOURCE}"]
    assert errors(resolution, "resources.time") == [
        "2h is longer than trillium's debug partition allows (1h at most); ask less time, or leave the partition out "
        f"(extra_directives) for the default one {SOURCE}"]


def test_trillium_debug_partition_time_shrinks_with_the_gpus_asked():
    """2 hours for 1 GPU, 30 minutes for 8 (and for 4, in the debugjob table)."""
    assert resolved("trillium", kind="gpu", partition="-p=debug", gpus="h100:1", time="2h").errors == ()
    assert errors(resolved("trillium", kind="gpu", partition="-p=debug", gpus="h100:1", time="3h"), "resources.time") == [
        "3h is longer than trillium's debug partition allows for 1 GPU(s) (2h at most); ask less time, or leave the partition "
        f"out (extra_directives) for the default one {SOURCE}"]
    many = resolved("trillium", kind="ddp", partition="--partition=debug", nodes=2, gpus="h100:4", time="1h")
    assert errors(many, "resources.time") == [
        "1h is longer than trillium's debug partition allows for 8 GPU(s) (30m at most); ask less time, or leave the partition "
        f"out (extra_directives) for the default one {SOURCE}"]
    assert resolved("trillium", kind="ddp", partition="--partition=debug", nodes=2, gpus="h100:4", time="30m").errors == ()


def test_trillium_debug_partition_refuses_more_than_eight_gpus():
    resolution = resolved("trillium", kind="ddp", partition="--partit=debug", nodes=3, gpus="h100:4", time="20m")
    assert errors(resolution, "resources.gpus") == [
        "12 GPUs in all is more than trillium's debug partition takes (8 at most); ask fewer, or leave the partition out "
        f"(extra_directives) for the default one {SOURCE}"]


def test_trillium_debug_partition_keeps_a_short_small_job_and_the_compute_partition_a_long_one():
    assert resolved("trillium", partition="--partition=debug", nodes=2, time="1h").errors == ()
    assert resolved("trillium", nodes=3, time="2h").errors == ()


def test_elsewhere_a_partition_named_debug_has_no_such_limits():
    resolution = resolved("nibi", partition="--partition=debug", nodes=3, time="2h")
    assert errors(resolution, "resources.nodes") == errors(resolution, "resources.time") == []


# ------------------------------------------------------------------ minimum walltime

def test_trillium_refuses_less_than_15_minutes_in_the_compute_partition():
    resolution = resolved("trillium", time="10m")
    assert errors(resolution, "resources.time") == [
        "10m is shorter than trillium's compute partition (where a job that names no partition runs) takes (15m at least); "
        "ask 15m or more, or bundle short tasks into one longer job; a short test may go to the debug partition "
        f"(extra_directives: [--partition=debug]) {SOURCE}"]
    assert resolution.warnings == ()   # the error alone: no 'is short' advice beside it
    assert errors(resolved("trillium", kind="gpu", gpus="h100:1", time="10m"), "resources.time") != []


def test_trillium_takes_15_minutes_in_compute_and_less_in_debug():
    assert resolved("trillium", time="15m").errors == ()
    assert resolved("trillium", partition="--partition=debug", time="10m").errors == ()


def test_elsewhere_a_short_job_is_advice_not_an_error():
    resolution = resolved("nibi", time="10m")
    assert resolution.errors == ()
    assert [f.field for f in resolution.warnings] == ["resources.time"]


@pytest.mark.parametrize("cluster", ["fir", "nibi", "rorqual", "narval"])
def test_only_trillium_states_these_rules(cluster):
    rules = profile(cluster).rules
    assert rules.multi_node_gpus is None and rules.partition_limits == ()


# ------------------------------------------------------------------ naming a partition

def test_a_general_purpose_cluster_warns_of_a_named_partition_with_its_source():
    """Running_jobs/en, "Do not specify a partition": --partition=default is the way out for software that insists."""
    resolution = resolved("nibi", kind="gpu", partition="--partition=gpubase_bygpu_b1", gpus="h100:1")
    assert resolution.errors == ()
    assert [str(f) for f in resolution.warnings] == [
        "warning: extra_directives.0: --partition=gpubase_bygpu_b1: nibi asks jobs not to name a partition: the scheduler "
        "picks one from the resources asked; leave it out (--partition=default where software insists on one) "
        "(source: https://docs.alliancecan.ca/wiki/Running_jobs/en)"]


@pytest.mark.parametrize("cluster, partition", [("nibi", None), ("nibi", "--partition=default"), ("fir", "-p=default")])
def test_no_partition_or_the_default_one_is_no_warning(cluster, partition):
    resolution = resolved(cluster, kind="gpu", partition=partition, gpus="h100:1")
    assert resolution.errors == () and [f for f in resolution.warnings if f.field.startswith("extra_directives")] == []


def test_trillium_warns_of_its_gpu_compute_partition_named_and_takes_debug():
    """Trillium_Quickstart/en, the GPU table's compute partition: "Do not specify this partition explicitly"."""
    named = resolved("trillium", kind="gpu", partition="--partition=compute", gpus="h100:1")
    assert [f.message for f in named.warnings if f.field == "extra_directives.0"] == [
        f"--partition=compute: trillium asks GPU jobs not to name the compute partition: the scheduler picks it; leave it out {SOURCE}"]
    debug = resolved("trillium", kind="gpu", partition="--partition=debug", gpus="h100:1", time="1h")
    assert debug.errors == () and [f for f in debug.warnings if f.field.startswith("extra_directives")] == []


def test_trillium_cpu_jobs_may_name_the_compute_partition():
    """The CPU table's compute partition has no such footnote: the page only says it is the default."""
    named = resolved("trillium", partition="--partition=compute")
    assert named.errors == () and [f for f in named.warnings if f.field.startswith("extra_directives")] == []


@pytest.mark.parametrize("cluster", ["local", "generic", "niagara"])
def test_a_profile_without_the_sites_word_for_it_does_not_warn(cluster):
    """The local and generic profiles cite no page for their partition rule; Niagara's is not the base's."""
    assert partition_warnings(cluster) == []


def partition_warnings(cluster):
    data = {"name": "demo", "kind": "mpi", "resources": {"time": "3h"}, "launch": {"command": "./solver"},
            "extra_directives": ["--partition=other"]}
    resolution = resolve(spec_from_mapping(data, source="job.yaml"), profile(cluster))
    return [f for f in resolution.findings if f.field.startswith("extra_directives")]
