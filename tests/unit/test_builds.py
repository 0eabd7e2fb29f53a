"""``slurmkit build``: the build job made from a job spec or from options, and its errors."""

from slurmkit.api.job import Job
from slurmkit.build.builds import build_spec
from slurmkit.spec.spec import spec_from_mapping

from .test_cli_jobs import assert_bad_input, controlled_environment, run, write_spec  # noqa: F401 (fixture)

DDP_SPEC = """
    name: train
    profile: narval
    account: def-someprof
    kind: horovod
    resources: {nodes: 4, gpus: a100:4, cpus_per_task: 12, mem: 64G, time: 12h}
    environment:
      modules: [cuda/12.2, nccl/2.18.3]
      venv: {packages: [torch==2.3.0]}
      builds: [horovod==0.28.1]
    launch: {command: python train.py, framework: pytorch}
"""


def test_a_build_job_keeps_what_decides_the_cache_key_and_drops_the_rest():
    job = Job.from_yaml(write_spec(DDP_SPEC))
    spec = build_spec([], job.spec)
    assert spec.kind == "gpu" and spec.resources.nodes == 1 and spec.resources.gpus.count == 1
    assert spec.resources.gpus.model == "a100" and spec.resources.cpus_per_task == 4   # a few cores to compile with
    assert spec.environment.modules == ("cuda/12.2", "nccl/2.18.3")
    assert spec.environment.venv.packages == ("torch==2.3.0",)
    assert [(b.name, b.version) for b in spec.environment.builds] == [("horovod", "0.28.1")]
    build_plan, job_plan = Job(spec).resolve().plan.builds[0], job.resolve().plan.builds[0]
    assert build_plan == job_plan          # same requirement, variables and cache: the same key in the job


def test_a_build_job_from_options_installs_the_framework_and_fits_the_site():
    spec = build_spec(["horovod"], profile="local", account="def-test")
    assert spec.environment.venv.packages == ("torch",)
    assert spec.resources.cpus_per_task == 2           # the local nodes have 2 cores
    script = Job(spec).render()
    assert "slurmkit_horovod_wheel --frameworks pytorch --profile local --cpu-only --index " in script
    assert "module load StdEnv/2023 python/3.11 openmpi/4.1.5" in script


def test_build_print_shows_the_script_and_submits_nothing():
    result = run("build", "mpi4py", "--profile", "local", "--account", "def-test", "--print")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("#!/bin/bash\n") and "slurmkit_build " in result.output and " mpi4py mpi4py " in result.output


def test_build_with_nothing_to_build_is_one_line_of_bad_input():
    result = run("build", "--profile", "local")
    assert_bad_input(result)
    assert result.output == "error: slurmkit build: environment.builds: nothing to build: name one of horovod, mpi4py\n"


def test_build_where_environments_are_built_on_the_login_node_points_to_env_build():
    result = run("build", "mpi4py", "--profile", "trillium", "--account", "def-someprof", "--print")
    assert_bad_input(result)
    assert result.output == ("error: slurmkit build: environment.builds: trillium builds Python environments on its login nodes, "
                             "and the builds with them: run 'slurmkit env build SPEC' there (the job's spec, with its builds) "
                             "instead of a build job\n")


def test_build_of_an_unknown_package_suggests_one():
    result = run("build", "horovd", "--profile", "local")
    assert result.exit_code == 2 and "'horovd' is not one of 'horovod', 'mpi4py'" in result.output


def test_new_scaffolds_every_distributed_kind_with_its_gpus_and_nodes():
    # several nodes: each node's 4 GPUs (narval's whole node); one node: 2 (test_new_every_kind.py)
    for kind, nodes, gpus in (("multigpu", 1, 2), ("ddp", 2, 4), ("tf-multiworker", 2, 4), ("horovod", 2, 4)):
        result = run("new", kind, "--profile", "narval", "--kind", kind, "--account", "def-x", "--yes")
        assert result.exit_code == 0, result.output
        spec = spec_from_mapping(__import__("yaml").safe_load(open(f"{kind}/job.yaml")))
        assert spec.resources.gpus.count == gpus and spec.resources.nodes == nodes


def test_a_build_job_on_a_whole_node_site_asks_for_the_whole_node():
    spec = build_spec(["mpi4py"], profile="trillium", account="def-someprof")
    assert spec.resources.cpus_per_task == 192
    assert Job(spec).resolve().plan is not None


def test_a_gpu_horovod_build_job_without_cuda_and_nccl_is_refused_and_with_them_checks_horovod_torch():
    result = run("build", "horovod", "--profile", "nibi", "--account", "def-x", "--gpus", "h100:1", "--print")
    assert_bad_input(result)
    assert result.stdout == "" and result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: slurmkit build: environment.modules: the horovod build compiles against cuda and nccl")
    result = run("build", "horovod", "--profile", "nibi", "--account", "def-x", "--gpus", "h100:1", "--module", "cuda/12.2",
                 "--module", "nccl/2.18.3", "--framework", "tensorflow", "--print")
    assert result.exit_code == 0, result.output
    assert "slurmkit_horovod_wheel --frameworks tensorflow --profile nibi " in result.stdout
    assert "if `import horovod.tensorflow` works with it" in result.stdout
