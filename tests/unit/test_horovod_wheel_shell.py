"""slurmkit_horovod_wheel: the script names a Horovod build with a few options a user can read
(frameworks, version, cache), and the runtime library turns them into the recipe. The plan
still holds that recipe (BuildPlan.variables, build_requires, check, source): these tests run
the library's function in bash and check it hands slurmkit_build exactly what the plan says."""

import os
import re
import subprocess

import pytest

from slurmkit.api.job import Job
from slurmkit.render.runtime import runtime

ENV = {"EBROOTNCCL": "/modules/nccl", "CUDA_HOME": "/modules/cuda", "SLURM_SUBMIT_DIR": "/submit", "USER": "u", "HOME": "/home/u"}
STUBS = """
slurmkit_build() { printf 'build\\t%s\\n' "$@"; }
slurmkit_on_each_node() { "$@"; }
pip() { [ -n "${SITE_WHEEL:-}" ]; }
python() { printf 'check\\t%s\\n' "$2"; }
"""


def _job(profile="nibi", builds=("horovod",), packages=("torch",), gpus="", **fields):
    gpus = gpus or ("p100:2" if profile == "local" else "a100:2" if profile == "narval" else "h100:2")
    resources = {"time": "1h", "nodes": 2, "tasks_per_node": 2, **({"gpus": gpus} if gpus != "none" else {})}
    return Job(name="hvd", profile=profile, account="def-a", kind="horovod", resources=resources,
               environment={"modules": ["openmpi/4.1.5"] + (["cuda/12.2", "nccl/2.18.3"] if gpus != "none" else []),
                            "venv": {"packages": list(packages)}, "builds": list(builds)},
               launch={"command": "python train.py"}, **fields)


def _call(script: str) -> str:
    """The rendered slurmkit_horovod_wheel call, its continuation lines joined."""
    joined = script.replace("\\\n", " ")
    return next(line for line in joined.splitlines() if "slurmkit_horovod_wheel " in line and not line.startswith("#"))


def _run(call: str, site_wheel: bool = False):
    function = re.search(r"^slurmkit_horovod_wheel\(\) \{.*?^\}\n", runtime().text, re.S | re.M).group(0)
    env = {**os.environ, **ENV, **({"SITE_WHEEL": "1"} if site_wheel else {})}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", function + STUBS + call], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return [line.split("\t", 1) for line in done.stdout.splitlines()], done.stderr


def _expected(plan, build):
    words = [plan.profile, " ".join(build.pip_options), " ".join(build.build_requires), build.name, build.requirement,
             build.source, build.cache, build.check] + [f"{name}={value}" for name, value in build.variables]
    with_env = {**os.environ, **ENV}
    return [re.sub(r"\$\{?(\w+)\}?", lambda m: with_env[m.group(1)], word) for word in words]


@pytest.mark.parametrize("job", [
    _job(),                                                              # a wheelhouse site, the modules' NCCL
    _job(profile="local"),                                               # no wheelhouse: --index
    _job(profile="narval", builds=("horovod==0.28.1",), packages=("torch", "tensorflow")),
    _job(profile="fir", gpus="none"),                                      # CPU only
    _job(profile="narval", builds=("horovod", {"nccl": "nccl_2.21.5-1+cuda12.4_x86_64.txz"})),   # NCCL from a tarball
], ids=["nibi", "local", "pinned-two-frameworks", "cpu-only", "nccl-tarball"])
def test_the_runtime_builds_horovod_with_the_recipe_the_plan_holds(job):
    plan = job.resolve().plan
    assert plan is not None
    (build,) = [b for b in plan.builds if b.name == "horovod"]
    lines, _ = _run(_call(job.render()))
    assert [value for kind, value in lines if kind == "build"] == _expected(plan, build)


def test_the_call_names_what_a_user_changes_and_no_recipe():
    call = _call(_job(profile="fir", builds=("horovod==0.28.1",)).render())
    assert call.split() == ["slurmkit_on_each_node", "slurmkit_horovod_wheel", "--frameworks", "pytorch", "--profile", "fir",
                            "--version", "0.28.1", "--cache", '"${HOME}/scratch/slurmkit-builds"']


def test_the_site_wheel_is_used_when_its_check_passes_and_nothing_is_built():
    lines, stderr = _run(_call(_job().render()), site_wheel=True)
    assert lines == [["check", "import horovod.torch"]]
    assert "horovod from the site's wheelhouse" in stderr


def test_without_a_wheelhouse_the_site_wheel_is_not_tried():
    lines, _ = _run(_call(_job(profile="local").render()), site_wheel=True)
    assert [kind for kind, _ in lines] == ["build"] * len(lines)


def test_an_unknown_option_stops_with_its_name():
    function = re.search(r"^slurmkit_horovod_wheel\(\) \{.*?^\}\n", runtime().text, re.S | re.M).group(0)
    done = subprocess.run(["bash", "-c", function + "slurmkit_horovod_wheel --framework pytorch"], capture_output=True, text=True)
    assert done.returncode == 2 and "unknown option --framework" in done.stderr
