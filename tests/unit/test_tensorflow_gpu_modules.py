"""TensorFlow on GPUs loads the site's CUDA and tells XLA where CUDA is: the Alliance TensorFlow
page (https://docs.alliancecan.ca/wiki/TensorFlow/en) loads ``cuda`` and sets
``XLA_FLAGS=--xla_gpu_cuda_data_dir=$CUDA_HOME``; without it an XLA-compiled step cannot find
libdevice and fails."""

import subprocess

import pytest

from slurmkit.render.render import render

from .test_resolve import job

XLA_LINE = 'export XLA_FLAGS="--xla_gpu_cuda_data_dir=${CUDA_HOME}"'

TF_JOBS = {
    "tf-multiworker": dict(kind="tf-multiworker", launch="python train.py"),
    "multigpu tensorflow": dict(kind="multigpu", launch={"command": "python train.py", "framework": "tensorflow"}),
    "gpu with a tensorflow venv": dict(kind="gpu", launch="python train.py", environment={"venv": {"packages": ["tensorflow"]}}),
    "horovod tensorflow": dict(kind="horovod", launch={"command": "python train.py", "framework": "tensorflow"}),
}


def tf_job(profile, case, nodes=1):
    return job(profile, {"nodes": nodes, "gpus": 2 if case != "gpu with a tensorflow venv" else 1}, **TF_JOBS[case])


@pytest.mark.parametrize("case", sorted(TF_JOBS))
def test_tensorflow_on_gpus_loads_cuda_after_python_and_sets_xla_flags(case):
    resolution = tf_job("local", case)
    assert resolution.plan is not None, resolution.errors
    assert "cuda/12.2" in resolution.plan.modules
    script = render(resolution.plan)
    assert XLA_LINE in script
    # XLA_FLAGS reads what the cuda module sets, so it comes after `module load`.
    assert script.index(XLA_LINE) > script.index("module load")
    subprocess.run(["bash", "-n"], input=script, text=True, check=True)


def test_tensorflow_loads_the_cuda_version_the_sites_profile_documents_and_says_nothing():
    resolution = job("trillium", {"nodes": 2, "gpus": "h100:4"}, kind="tf-multiworker", launch="python train.py")
    assert resolution.plan is not None, resolution.errors
    assert [m for m in resolution.plan.modules if m.split("/")[0] == "cuda"] == ["cuda/12.6"]   # Trillium_Quickstart
    assert not [f for f in resolution.findings if "cuda" in f.message]


@pytest.mark.parametrize("case", sorted(TF_JOBS))
def test_a_site_whose_profile_names_no_cuda_version_warns_to_pin_one(case):
    """Lmod's default cuda is stated nowhere and moves with the stack: the script would not say
    which CUDA the job ran with. The warning names the versions documented for StdEnv/2023."""
    resolution = tf_job("fir", case)
    assert resolution.plan is not None, resolution.errors
    assert "cuda" in resolution.plan.modules
    warnings = [f for f in resolution.warnings if f.field == "environment.modules" and "cuda" in f.message]
    assert [w.message for w in warnings] == [
        "TensorFlow on GPUs needs the cuda module, and fir's profile names no version: the script loads Lmod's default "
        "cuda, which no page states and which a change to the stack may move; add cuda/VERSION to environment.modules "
        "(StdEnv/2023 pages load cuda/12.2, cuda/12.6, cuda/12.9)"]


def test_a_pinned_cuda_is_loaded_as_pinned_with_no_warning():
    resolution = job("fir", {"gpus": "h100:2"}, kind="tf-multiworker", launch="python t.py", environment={"modules": ["cuda/12.6"]})
    assert [m for m in resolution.plan.modules if m.split("/")[0] == "cuda"] == ["cuda/12.6"]
    assert not [f for f in resolution.findings if "cuda" in f.message]


def test_the_users_cuda_module_is_kept():
    plan = job("local", {"gpus": 2}, kind="tf-multiworker", launch="python t.py", environment={"modules": ["cuda/12.6"]}).plan
    assert [m for m in plan.modules if m.split("/")[0] == "cuda"] == ["cuda/12.6"]


def test_the_users_own_xla_flags_win():
    plan = job("local", {"gpus": 2}, kind="tf-multiworker", launch="python t.py",
               environment={"variables": {"XLA_FLAGS": "--xla_gpu_autotune_level=0"}}).plan
    script = render(plan)
    assert "xla_gpu_cuda_data_dir" not in script and "--xla_gpu_autotune_level=0" in script


@pytest.mark.parametrize("fields", [
    dict(kind="ddp", launch="python train.py"),                                             # PyTorch brings its own CUDA
    dict(kind="tf-multiworker", launch="python train.py", resources={"time": "1h"}),       # TensorFlow on CPUs
])
def test_pytorch_and_cpu_tensorflow_get_neither(fields):
    resources = fields.pop("resources", None)
    resolution = job("local", resources if resources else {"gpus": 2}, **fields)
    plan = resolution.plan
    assert plan is not None, resolution.errors
    assert not any(m.split("/")[0] == "cuda" for m in plan.modules)
    assert "XLA_FLAGS" not in render(plan)


def test_cuda_loads_before_the_modules_built_under_it():
    """In the Alliance's Lmod hierarchy nccl and cudnn live under cuda: loaded before it, they
    are not found. The resolver puts cuda (and compilers) first, the rest in the user's order."""
    plan = job("trillium", {"nodes": 2, "gpus": 4}, kind="horovod", launch="python t.py",
               environment={"modules": ["nccl/2.18.3"], "venv": {"packages": ["torch"]}, "builds": ["horovod"]}).plan
    assert plan.modules.index("cuda/12.6") < plan.modules.index("nccl/2.18.3")
