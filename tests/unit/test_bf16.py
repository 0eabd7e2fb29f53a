"""launch.mixed_precision: bf16 where the job may land on a GPU without bf16 arithmetic
(compute capability below 8.0: P100, V100, T4) is a warning; from the GPU table, not a list in resolve."""

import pytest

from slurmkit.core.gpu_names import COMPUTE_CAPABILITY, has_bf16
from slurmkit.sites.profiles import load_profile

from .test_resolve import job, warnings_of

KIND = "accelerate"


def precision(profile: str, gpus: str, value: str):
    return job(profile, {"gpus": gpus}, kind=KIND, launch={"command": "python t.py", "mixed_precision": value})


@pytest.mark.parametrize("profile, gpus", [("beluga", "v100:4"), ("cedar", "v100l:4"),
                                           ("graham", "t4:4"), ("graham", "v100:2"), ("graham", "4")])
def test_bf16_on_a_gpu_without_it_is_a_warning_that_offers_fp16(profile, gpus):
    r = precision(profile, gpus, "bf16")
    assert r.plan is not None, r.errors
    said = warnings_of(r, "launch.mixed_precision")
    assert len(said) == 1 and "compute capability" in said[0] and "fp16" in said[0], said


@pytest.mark.parametrize("profile, gpus", [("narval", "a100:4"), ("nibi", "h100:4"), ("graham", "a100:4"), ("graham", "a5000:4")])
def test_bf16_on_ampere_or_later_says_nothing(profile, gpus):
    assert warnings_of(precision(profile, gpus, "bf16"), "launch.mixed_precision") == []


def test_fp16_on_a_v100_says_nothing():
    assert warnings_of(precision("beluga", "v100:4", "fp16"), "launch.mixed_precision") == []


def test_every_nvidia_gpu_of_the_bundled_profiles_has_a_compute_capability():
    for name in ("beluga", "cedar", "fir", "graham", "local", "narval", "nibi", "rorqual", "trillium"):
        for node_type in load_profile(name).node_types:
            if node_type.gpus and node_type.gpus.vendor == "nvidia":
                assert node_type.gpus.model in COMPUTE_CAPABILITY, (name, node_type.gpus.model)
    assert not has_bf16(load_profile("beluga").node_types[-1].gpus)
