"""Horovod that works: the check imports the framework module the wheel was
built for, a source build is rendered only with its modules loaded, and no launch line carries
transport overrides. Unit tier: resolve and render only; these hold for any Slurm version."""

import re
from pathlib import Path

import pytest

from slurmkit.api.job import Job
from slurmkit.build.builds import build_spec
from slurmkit.sites.profiles import list_profiles
from slurmkit.spec.spec import spec_from_mapping

from .test_cli_jobs import assert_bad_input, controlled_environment, run, write_spec  # noqa: F401 (fixture)
from .test_resolve import job, only_error

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
GPU_BUILD = {"venv": {"packages": ["torch"]}, "builds": ["horovod"]}


def _horovod(profile, environment, resources=None, **fields):
    return job(profile, {"gpus": "h100:2", "nodes": 2, **(resources or {})}, kind="horovod", environment=environment, **fields)


def _script(resolution) -> str:
    from slurmkit.render.render import render

    assert resolution.plan is not None, resolution.errors
    return render(resolution.plan)


# ------------------------------------------------------------------- 1. the check loads horovod.torch


def test_a_pytorch_horovod_is_checked_by_importing_horovod_torch_from_wheelhouse_and_cache():
    script = _script(_horovod("nibi", {**GPU_BUILD, "modules": ["cuda/12.2", "nccl/2.18.3"]}))
    # slurmkit_horovod_wheel: the wheelhouse's horovod if `import horovod.torch` passes, else slurmkit_build
    # (the runtime derives the check from --frameworks: test_horovod_wheel_shell.py runs it)
    assert " slurmkit_horovod_wheel --frameworks pytorch --profile nibi \\\n    --cache \"/scratch/${USER}/slurmkit-builds\"\n" in script
    assert "the site's wheel instead if `import horovod.torch` works with it" in script
    assert "'import horovod'" not in script


@pytest.mark.parametrize("fields, check", [
    ({"environment": {"venv": {"packages": ["tensorflow==2.15.1"]}, "builds": ["horovod"]}}, "import horovod.tensorflow"),
    ({"environment": {"venv": {"requirements": "requirements.txt"}, "builds": ["horovod"]},
      "launch": {"command": "python t.py", "framework": "tensorflow"}}, "import horovod.tensorflow"),
    ({"environment": {"venv": {"packages": ["numpy", "torch>=2.3"]}, "builds": ["horovod"]}}, "import horovod.torch"),
    ({"environment": {"venv": {"packages": ["torch", "tensorflow"]}, "builds": ["horovod"]}}, "import horovod.torch, horovod.tensorflow"),
])
def test_the_check_imports_the_framework_module_the_spec_installs(fields, check):
    r = job("local", {"nodes": 2, "tasks_per_node": 2}, kind="horovod", account="def-test", **fields)
    (build,) = r.plan.builds
    assert build.check == check
    variables = dict(build.variables)
    assert ("HOROVOD_WITH_TENSORFLOW" in variables) == ("tensorflow" in check)
    assert ("HOROVOD_WITH_PYTORCH" in variables) == ("torch" in check)


def test_the_build_job_decides_the_same_framework_as_the_job_so_the_cache_key_matches():
    spec = spec_from_mapping({"name": "t", "profile": "local", "account": "def-test", "kind": "horovod",
                              "resources": {"time": "1h", "nodes": 2, "tasks_per_node": 2},
                              "environment": {"venv": {"packages": ["tensorflow"]}, "builds": ["horovod"]},
                              "launch": {"command": "python t.py"}}, "job.yaml")
    built = Job(build_spec([], spec)).resolve().plan.builds[0]
    assert built == Job(spec).resolve().plan.builds[0] and built.check == "import horovod.tensorflow"


# ------------------------------------------------------------ 2. a source build only with its modules


def test_a_gpu_build_without_cuda_and_nccl_is_refused_naming_the_modules_to_add():
    error = only_error(_horovod("nibi", GPU_BUILD))
    assert error.field == "environment.modules"
    assert "compiles against cuda and nccl" in error.message and "add cuda/VERSION, nccl/VERSION to environment.modules" in error.message


def test_a_gpu_build_missing_only_nccl_is_refused_naming_only_nccl():
    error = only_error(_horovod("nibi", {**GPU_BUILD, "modules": ["cuda/12.2"]}))
    assert "compiles against nccl," in error.message and "add nccl/VERSION to" in error.message


def test_the_resolver_loads_mpi_cuda_and_nccl_from_the_profile_before_the_build_reads_them():
    script = _script(job("local", {"gpus": "p100:2", "nodes": 2}, kind="horovod", account="def-test", environment=GPU_BUILD))
    modules = re.search(r"^set \+u; module load (.*); set -u ", script, re.M).group(1).split()
    assert {"openmpi/4.1.5", "cuda/12.2", "nccl/2.18.3"} <= set(modules)
    assert script.index("module load") < script.index("slurmkit_horovod_wheel ")   # it reads $EBROOTNCCL


def test_a_cpu_build_needs_only_the_mpi_module():
    r = job("local", {"nodes": 2, "tasks_per_node": 2}, kind="horovod", account="def-test", environment=GPU_BUILD)
    assert "openmpi/4.1.5" in r.plan.modules and not any(m.startswith(("cuda", "nccl")) for m in r.plan.modules)
    assert dict(r.plan.builds[0].variables)["HOROVOD_CPU_OPERATIONS"] == "MPI"


def test_render_and_submit_refuse_a_build_without_its_modules_in_one_located_line(controlled_environment):
    spec = write_spec("""
        name: hvd
        profile: nibi
        account: def-someprof
        kind: horovod
        resources: {time: 1h, nodes: 2, gpus: h100:2}
        environment:
          venv: {packages: [torch]}
          builds: [horovod]
        launch: python train.py
    """)
    line = ("error: job.yaml:6: environment.modules: the horovod build compiles against cuda and nccl, and nibi's profile names "
            "no version: add cuda/VERSION, nccl/VERSION to environment.modules (`module spider NAME` lists the versions)\n")
    for command in ("render", "submit"):
        result = run(command, spec)
        assert_bad_input(result)
        assert result.stderr == line and result.stdout == ""


# ---------------------------------------------------------------- 3. no transport overrides; srun


def test_no_golden_script_overrides_the_mpi_transport():
    scripts = sorted(GOLDEN.glob("*/*.sbatch"))
    assert len(scripts) > 50
    for script in scripts:
        text = script.read_text()
        assert not re.search(r"-{1,2}mca\b|\bpml\b|\bbtl\b|openib", text), script


@pytest.mark.parametrize("site", list_profiles()[0], ids=lambda site: site.name)
def test_horovod_with_mpirun_on_any_profile_has_binding_and_no_transport_flags(site):
    whole = site.scheduling.whole_node
    shape = {"nodes": 2, "tasks_per_node": whole.cores if whole and whole.cores else 2}
    r = job(site.name, shape, kind="horovod", launch={"command": "python t.py", "launcher": "mpirun"})
    assert r.plan is not None, r.errors
    mpi = job(site.name, shape, kind="mpi", launch={"command": "python t.py", "launcher": "mpirun"})
    assert r.plan.launcher == mpi.plan.launcher                 # the site's binding, the same as an MPI program's
    assert not {"-mca", "--mca", "-x"} & set(r.plan.launcher)


def test_horovod_with_mpirun_binds_ranks_to_their_cores_and_prints_the_binding():
    r = job("narval", {"gpus": "a100:4", "nodes": 2, "cpus_per_task": 12}, kind="horovod",
            launch={"command": "python hvd.py", "launcher": "mpirun"})
    assert tuple(map(str, r.plan.launcher)) == ("mpirun", "-np", '"${SLURM_NTASKS:-$SLURM_NNODES}"', "--bind-to", "core", "--map-by",
                                                'slot:PE="${SLURM_CPUS_PER_TASK:-1}"', "--report-bindings")


def test_horovod_defaults_to_srun_on_alliance_sites_and_uses_the_profiles_mpi_plugin_where_named():
    alliance = _horovod("narval", {**GPU_BUILD, "modules": ["cuda/12.2", "nccl/2.18.3"]}, {"gpus": "a100:4", "cpus_per_task": 12})
    # the openmpi module sets SLURM_MPI_TYPE
    assert tuple(map(str, alliance.plan.launcher)) == ("srun", '--cpus-per-task="${SLURM_CPUS_PER_TASK:-1}"')
    local = job("local", {"nodes": 2, "tasks_per_node": 2}, kind="horovod", account="def-test")
    assert tuple(map(str, local.plan.launcher)) == ("srun", "--mpi=pmix", '--cpus-per-task="${SLURM_CPUS_PER_TASK:-1}"')
