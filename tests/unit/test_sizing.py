"""Memory and cores that can serve the job: memory per GPU process
against a floor per framework, the site's per-GPU bundle as the default and as advice, whole
nodes with all their memory (--mem=0), and cores a whole-GPU share charges but the job leaves idle."""

import pytest

from slurmkit.core.errors import SpecError
from slurmkit.port.porting import import_script
from slurmkit.spec.spec import spec_from_mapping

from .test_resolve import directives, job, only_error, warnings_of


def memory_warnings(resolution):
    return warnings_of(resolution, "resources.mem") + warnings_of(resolution, "resources.mem_per_cpu")


# ------------------------------------------------------------------- memory per GPU process


def test_ddp_with_2g_for_4_pytorch_processes_a_node_warns_with_the_figure_per_process_and_the_bundle():
    resolution = job("fir", kind="ddp", resources={"nodes": 2, "gpus": "h100:4", "mem": "2G"})
    assert memory_warnings(resolution) == [
        "2G per node gives each of its 4 PyTorch processes 512M, below the 4G of host memory one holds on a GPU "
        "(its CUDA, cuDNN and NCCL libraries and data-loader workers); ask at least 16G per node, and up to "
        "fir's bundle of 280G per h100 (the site's recommendation), which the GPU's charge already covers"]


def test_torchrun_multigpu_and_horovod_count_one_process_per_gpu():
    for kind in ("multigpu", "horovod"):
        resolution = job("nibi", kind=kind, resources={"gpus": "h100:2", "mem": "6G"})
        assert memory_warnings(resolution)[0].startswith("6G per node gives each of its 2 PyTorch processes 3G, below the 4G")


def test_tensorflow_workers_have_the_tensorflow_floor():
    resolution = job("narval", kind="tf-multiworker", resources={"nodes": 2, "gpus": "a100:4", "mem": "8G"})
    assert memory_warnings(resolution)[0].startswith("8G per node gives each of its 4 TensorFlow processes 2G, below the 4G")


def test_one_tensorflow_process_that_drives_every_gpu_is_one_process():
    resolution = job("narval", kind="multigpu", resources={"gpus": "a100:4", "mem": "3G"},
                     launch={"command": "python train.py", "framework": "tensorflow"})
    assert memory_warnings(resolution)[0].startswith("3G per node gives its TensorFlow process 3G, below the 4G")


def test_memory_per_cpu_is_counted_over_the_cores_of_the_node():
    resolution = job("rorqual", kind="ddp", resources={"gpus": "h100:4", "mem_per_cpu": "128M"})
    assert warnings_of(resolution, "resources.mem_per_cpu")[0].startswith(
        "128M per CPU (8G per node) gives each of its 4 PyTorch processes 2G, below the 4G")


def test_a_python_payload_on_a_gpu_has_the_floor_even_without_a_named_framework():
    resolution = job("nibi", kind="gpu", resources={"gpus": "h100:1", "mem": "2G"})
    assert memory_warnings(resolution)[0].startswith("2G per node gives its Python process 2G, below the 4G")


def test_a_venv_with_torch_names_the_framework_of_a_gpu_job():
    resolution = job("nibi", kind="gpu", resources={"gpus": "h100:1", "mem": "2G"},
                     environment={"venv": {"packages": ["torch==2.6.0"]}})
    assert memory_warnings(resolution)[0].startswith("2G per node gives its PyTorch process 2G, below the 4G")


@pytest.mark.parametrize("resources, fields", [
    ({"gpus": "h100:4", "mem": "16G"}, {"kind": "ddp"}),                               # 4G each: at the floor
    ({"gpus": "h100:1", "mem": "1G"}, {"kind": "gpu", "launch": "./cuda_app --steps 10"}),   # no framework: no floor
    ({"gpus": "h100:4", "mem": "node"}, {"kind": "ddp"}),                              # all the node's memory
    ({"gpus": "h100:4"}, {"kind": "ddp"}),                                             # the bundle, by default
])
def test_enough_memory_or_no_known_framework_is_not_a_warning(resources, fields):
    assert memory_warnings(job("nibi", resources=resources, **fields)) == []


def test_the_floor_says_so_where_the_nodes_cannot_give_it():
    resolution = job("local", kind="ddp", resources={"gpus": "p100:2", "mem": "1G"})
    assert memory_warnings(resolution) == [
        "1G per node gives each of its 2 PyTorch processes 512M, below the 4G of host memory one holds on a GPU "
        "(its CUDA, cuDNN and NCCL libraries and data-loader workers); local's GPU nodes have only 2000M per p100 "
        "(a node's memory over its GPUs), less than one process needs"]


def test_sites_that_ignore_memory_requests_have_no_memory_warnings():
    resolution = job("trillium", kind="ddp", resources={"gpus": "h100:4"})
    assert memory_warnings(resolution) == [] and "--mem" not in directives(resolution)


# ------------------------------------------------------------ a GPU job with nothing said


@pytest.mark.parametrize("cluster, gpus, cores, memory", [
    ("nibi", "h100:1", "14", "250G"),
    ("fir", "h100:1", "12", "280G"),   # recommended per H100, below 1125G over 4
    ("rorqual", "h100:2", "32", "248G"),   # the page's 124 GB recommended per GPU
    ("narval", "a100:1", "12", "124G"),
    ("nibi", "h100_1g.10gb", "2", "31G"),      # a MIG slice on Nibi: the page's own recommendation (the eighth would be 1 core)
    ("narval", "a100_3g.20gb", "6", "62G"),
    ("local", "p100:1", "1", "2000M"),
])
def test_a_gpu_job_with_no_cores_or_memory_gets_the_sites_bundle_per_gpu(cluster, gpus, cores, memory):
    d = directives(job(cluster, kind="gpu", resources={"gpus": gpus}))
    assert (d["--cpus-per-task"], d["--mem"]) == (cores, memory)


def test_an_array_of_gpu_tasks_gets_the_bundle_per_task():
    d = directives(job("nibi", kind="array", resources={"gpus": "h100:1"}, array={"parameters": {"lr": ["0.1", "0.01"]}}))
    assert (d["--cpus-per-task"], d["--mem"]) == ("14", "250G")


def test_a_distributed_job_gets_the_bundle_times_its_gpus_per_node():
    assert directives(job("nibi", kind="ddp", resources={"nodes": 2, "gpus": "h100:4"}))["--mem"] == "1000G"


def test_what_the_user_asked_is_kept():
    d = directives(job("nibi", kind="gpu", resources={"gpus": "h100:1", "cpus_per_task": 6, "mem": "64G"}))
    assert (d["--cpus-per-task"], d["--mem"]) == ("6", "64G")
    assert "--mem" not in directives(job("nibi", kind="gpu", resources={"gpus": "h100:1", "mem_per_cpu": "8G"}))


def test_new_gpu_job_on_nibi_asks_the_bundle_and_check_finds_nothing(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from slurmkit.cli.main import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("SLURMKIT_PROFILE", "CC_CLUSTER", "SLURM_CLUSTER_NAME", "SBATCH_ACCOUNT", "SLURM_ACCOUNT"):
        monkeypatch.delenv(name, raising=False)
    made = CliRunner().invoke(main, ["new", "myjob", "--profile", "nibi", "--kind", "gpu", "--account", "def-someprof", "--yes"])
    assert made.exit_code == 0, made.output
    script = (tmp_path / "myjob" / "job.sbatch").read_text()
    directives = [line for line in script.splitlines() if line.startswith("#SBATCH")]   # (the site's rules are comment lines between)
    assert ["#SBATCH --cpus-per-task=14", "#SBATCH --mem=250G", "#SBATCH --gpus-per-node=h100:1"] == directives[5:8]
    checked = CliRunner().invoke(main, ["check", "myjob/job.yaml"])
    assert (checked.exit_code, checked.stdout) == (0, "myjob/job.yaml: no problems found\n")


# ------------------------------------------------------------------------ whole nodes


@pytest.mark.parametrize("cluster, resources", [
    ("fir", {"nodes": 2, "tasks_per_node": 192}),
    ("fir", {"tasks_per_node": 32, "cpus_per_task": 6}),
    ("narval", {"tasks_per_node": 64}),
    ("nibi", {"tasks_per_node": 192}),
    ("rorqual", {"tasks_per_node": 24, "cpus_per_task": 8}),
    ("cedar", {"tasks_per_node": 48}),
    ("local", {"tasks_per_node": 2}),
])
def test_a_job_that_takes_every_core_of_its_nodes_takes_all_their_memory(cluster, resources):
    assert directives(job(cluster, kind="mpi", resources=resources))["--mem"] == "0"


def test_a_gpu_job_that_takes_every_core_of_its_gpu_nodes_takes_all_their_memory():
    assert directives(job("fir", kind="ddp", resources={"nodes": 2, "gpus": "h100:4"}))["--mem"] == "0"


@pytest.mark.parametrize("cluster, resources", [
    ("fir", {"tasks_per_node": 4}),
    ("cedar", {"tasks_per_node": 32}),        # fills a Broadwell node, but may land on a 48-core one
])
def test_a_job_that_leaves_cores_of_a_node_free_asks_no_memory_it_did_not_say(cluster, resources):
    assert not {"--mem", "--mem-per-cpu"} & set(directives(job(cluster, kind="mpi", resources=resources)))


def test_memory_the_user_asked_for_a_whole_node_job_is_kept():
    assert directives(job("fir", kind="mpi", resources={"tasks_per_node": 192, "mem": "700G"}))["--mem"] == "700G"
    assert "--mem" not in directives(job("fir", kind="mpi", resources={"tasks_per_node": 192, "mem_per_cpu": "2G"}))


def test_whole_node_sites_still_get_no_memory_directive():
    d = directives(job("trillium", kind="mpi", resources={"nodes": 2}))
    assert not {"--mem", "--mem-per-cpu"} & set(d)


@pytest.mark.parametrize("value", ["node", "Node"])  # 0 is refused with this spelling (test_hostile_reader)
def test_mem_node_asks_all_the_memory_of_each_node(value):
    assert directives(job("nibi", kind="threaded", resources={"cpus_per_task": 8, "mem": value}))["--mem"] == "0"


@pytest.mark.parametrize("value, hint", [
    ("nodes", "did you mean 'node'? "),
    ("all", ""),
    ("whole", ""),
])
def test_a_word_for_mem_other_than_node_is_one_line_of_error(value, hint):
    data = {"name": "x", "resources": {"time": "1h", "mem": value}, "launch": "python a.py"}
    with pytest.raises(SpecError) as caught:
        spec_from_mapping(data, source="job.yaml")
    assert str(caught.value) == (f"job.yaml: resources.mem: {value!r} is not a size: {hint}use a number with K, M, G or T "
                                 "(binary units: 4G, 4000M, 4GiB, 7T, 512K); a bare number means MiB; or 'node' for all "
                                 "the memory of each node (--mem=0)")


def test_mem_node_on_a_site_that_ignores_memory_requests_is_an_error():
    error = only_error(job("trillium", kind="mpi", resources={"mem": "node"}))
    assert error.field == "resources.mem"


def test_import_keeps_mem_0_as_all_the_nodes_memory():
    spec = import_script("#!/bin/bash\n#SBATCH --nodes=2 --ntasks-per-node=192 --mem=0 -t 1:00:00\nsrun ./app\n").spec
    assert spec["resources"]["mem"] == "node"


# ------------------------------------------------------------ cores a GPU share charges


def test_a_one_gpu_trillium_job_with_4_of_its_24_cores_warns():
    resolution = job("trillium", kind="gpu", resources={"gpus": "h100:1", "cpus_per_task": 4})
    assert warnings_of(resolution, "resources.cpus_per_task") == [
        "4 cores of the 24 trillium gives a job with 1 h100 (a share of 24 cores per GPU): the other 20 are charged "
        "and sit idle; ask cpus_per_task: 24 (or leave it out)"]


def test_a_whole_trillium_gpu_node_with_fewer_cores_per_task_warns_with_the_value_per_task():
    resolution = job("trillium", kind="ddp", resources={"gpus": "h100:4", "cpus_per_task": 8})
    assert warnings_of(resolution, "resources.cpus_per_task") == [
        "32 cores of the 96 trillium gives a job with 4 h100 (a share of 24 cores per GPU): the other 64 are charged "
        "and sit idle; ask cpus_per_task: 24 (or leave it out)"]


def test_a_trillium_gpu_job_left_to_the_defaults_takes_its_whole_share():
    resolution = job("trillium", kind="gpu", resources={"gpus": "h100:1"})
    assert directives(resolution)["--cpus-per-task"] == "24"
    assert warnings_of(resolution, "resources.cpus_per_task") == []


def test_fewer_cores_on_a_site_that_shares_gpu_nodes_is_not_a_warning():
    resolution = job("nibi", kind="gpu", resources={"gpus": "h100:1", "cpus_per_task": 4, "mem": "64G"})
    assert warnings_of(resolution, "resources.cpus_per_task") == []
