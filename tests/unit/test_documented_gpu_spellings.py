"""GPU names a site documents besides the one slurmkit writes (Nibi's and Rorqual's "GPU
instances" tables: by memory, without unit, NVIDIA's full name): each is read, written in the
site's short spelling, and said so in a warning; a name no page gives is still refused."""

import functools

import pytest

from slurmkit.resolve.resolve import resolve
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

#: The "GPU instances" table of https://docs.alliancecan.ca/wiki/Nibi/en and .../Rorqual/en:
#: each documented name, and the short name slurmkit writes for it.
DOCUMENTED = [
    ("h100_80gb", "h100"),
    ("nvidia_h100_80gb_hbm3", "h100"),
    ("h100_1.10", "h100_1g.10gb"),
    ("h100_10gb", "h100_1g.10gb"),
    ("nvidia_h100_80gb_hbm3_1g.10gb", "h100_1g.10gb"),
    ("h100_2.20", "h100_2g.20gb"),
    ("h100_20gb", "h100_2g.20gb"),
    ("nvidia_h100_80gb_hbm3_2g.20gb", "h100_2g.20gb"),
    ("h100_3.40", "h100_3g.40gb"),
    ("h100_40gb", "h100_3g.40gb"),
    ("nvidia_h100_80gb_hbm3_3g.40gb", "h100_3g.40gb"),
]


@functools.lru_cache(maxsize=None)
def profile(name: str):
    return load_profile(name)


def resolved(cluster: str, gpus: str):
    data = {"name": "demo", "account": "def-someprof", "kind": "gpu", "resources": {"time": "3h", "gpus": gpus},
            "launch": {"command": "python main.py"}}
    return resolve(spec_from_mapping(data, source="job.yaml"), profile(cluster))


@pytest.mark.parametrize("cluster, page", [("nibi", "Nibi"), ("rorqual", "Rorqual")])
@pytest.mark.parametrize("written, spelling", DOCUMENTED)
def test_nibi_and_rorqual_read_each_documented_gpu_name_and_write_its_short_name(cluster, page, written, spelling):
    resolution = resolved(cluster, f"{written}:1")
    assert resolution.plan is not None, resolution.errors
    assert dict(resolution.plan.directives)["--gpus-per-node"] == f"{spelling}:1"
    notes = [f.message for f in resolution.warnings if f.field == "resources.gpus"]
    assert notes == [f"{written!r} is {cluster}'s documented name for {spelling}; slurmkit writes {spelling} "
                     f"(source: https://docs.alliancecan.ca/wiki/{page}/en)"]


@pytest.mark.parametrize("cluster", ["nibi", "rorqual"])
def test_the_short_name_itself_gets_no_note(cluster):
    resolution = resolved(cluster, "h100_1g.10gb:1")
    assert resolution.plan is not None
    assert [f for f in resolution.warnings if f.field == "resources.gpus"] == []


@pytest.mark.parametrize("cluster", ["nibi", "rorqual"])
def test_an_undocumented_spelling_is_still_refused_with_did_you_mean(cluster):
    resolution = resolved(cluster, "h100_1.20:1")
    assert resolution.plan is None
    assert [f.message for f in resolution.errors] == [
        f"{cluster} has no GPU called 'h100_1.20'; did you mean 'h100_2g.20gb'? it has: h100, h100_1g.10gb, h100_2g.20gb, "
        "h100_3g.40gb" + (", mi300a" if cluster == "nibi" else "")]


def test_a_documented_mig_alias_is_one_instance_only():
    resolution = resolved("rorqual", "h100_10gb:2")
    assert [f.message for f in resolution.errors] == [
        "a job may use one MIG instance; ask for h100_1g.10gb:1 or for whole h100 GPUs"]


def test_fir_documents_no_such_names_and_refuses_them():
    """The Fir page gives only h100 and the nvidia_h100_80gb_hbm3_* MIG names."""
    assert resolved("fir", "h100_80gb:1").plan is None
    assert resolved("fir", "h100_10gb:1").plan is None
