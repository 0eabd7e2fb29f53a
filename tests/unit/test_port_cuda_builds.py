"""A package built for a CUDA older than the ported GPUs need (a CUDA 10.0 index on an H100, a
torch pin of +cu110 on one) installs and then fails at its first GPU call: port names it."""

import copy

import pytest

from slurmkit.port.retarget import port_spec
from slurmkit.port.stackenvs import _cuda_version
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping


def _todos(setup=(), packages=None, gpus="v100l:1", to="fir"):
    data = {"name": "demo", "account": "def-x", "kind": "gpu", "resources": {"time": "1h", "gpus": gpus},
            "environment": {"modules": ["StdEnv/2020", "python/3.8"], "setup": list(setup)}, "launch": {"command": "python t.py"}}
    if packages:
        data["environment"]["venv"] = {"packages": packages}
    spec = spec_from_mapping(copy.deepcopy(data), source="job.yaml")
    return [t for t in port_spec(data, spec, load_profile("cedar"), load_profile(to)).todos if "for CUDA" in t and "no code for" in t]


@pytest.mark.parametrize("word, version", [
    ("https://developer.download.nvidia.com/compute/redist/cuda/10.0", (10, 0)), ("https://download.pytorch.org/whl/cu113", (11, 3)),
    ("torch==1.7.1+cu110", (11, 0)), ("nvidia-dali-cuda110", (11, 0)), ("https://download.pytorch.org/whl/cu92/torch_stable.html", (9, 2)),
    ("cupy-cuda12x", None), ("https://download.pytorch.org/whl/torch_stable.html", None), ("numpy==1.24", None), ("jax[cuda12_pip]", None)])
def test_the_cuda_an_index_a_pin_or_a_package_name_is_built_for(word, version):
    assert _cuda_version(word) == version


def test_a_cuda_10_index_kept_in_setup_is_a_todo_on_an_h100_with_the_release_that_added_it():
    todos = _todos(["pip install --extra-index-url https://developer.download.nvidia.com/compute/redist/cuda/10.0 nvidia-dali"])
    assert len(todos) == 1, todos
    assert "serves builds for CUDA 10.0" in todos[0] and "H100" in todos[0] and "CUDA 11.8 or newer" in todos[0]
    assert "archive/11.8.0/cuda-toolkit-release-notes" in todos[0]


def test_a_pinned_cuda_build_in_the_venv_is_a_todo_and_a_new_enough_one_is_not():
    assert len(_todos(packages=["torch==1.7.1+cu110", "numpy"])) == 1
    assert _todos(packages=["torch==2.5.1+cu124"]) == []


def test_a100_needs_cuda_11_so_a_cuda_11_3_build_passes_on_narval_and_a_10_2_one_does_not():
    assert _todos(["pip install cupy-cuda113"], gpus="v100l:1", to="narval") == []
    assert len(_todos(["pip install cupy-cuda102"], gpus="v100l:1", to="narval")) == 1
