"""One process per GPU gets its own GPU: which variable picks it for each kind and launcher, and
what the per-task wrapper does with it, run here in bash with the variables SLURM, mpirun or
torchrun would set (no cluster: tests/integration/test_gpu_binding_on_cluster.py runs it there)."""

import re
import subprocess

import pytest

from slurmkit.api.job import Job
from slurmkit.render.runtime import runtime

from .test_resolve import job, warnings_of


def _script(kind, launcher="", profile="narval", nodes=2, modules=(), view="own"):
    fields = {**({"launcher": launcher} if launcher else {}), **({"gpu_view": view} if view else {})}
    return Job(name="b", kind=kind, profile=profile, account="def-test", environment={"modules": list(modules)},
               resources={"time": "1h", "nodes": nodes, "gpus": "a100:4" if profile == "narval" else "p100:2", "mem": "16G"},
               launch={"command": "python train.py", **fields}).render()


def _wrapper(script: str) -> str:
    """The runtime, placed as the script's slurmkit_place_tasks (or slurmkit_task_env) line says, as bash source."""
    match = re.search(r"^slurmkit_(place_tasks|task_env).*\n", script, re.M)
    assert match, script
    # (slurmkit_task_env places them as slurmkit_place_tasks does, then finds the file srun runs)
    return runtime().text + match.group(0).replace("slurmkit_task_env", "slurmkit_place_tasks")


def _run_task(script: str, **variables) -> subprocess.CompletedProcess:
    """Run the task's set-up from ``script`` in a clean bash with ``variables`` (_sk_task, or the
    exports srun's task prolog would set); it prints the GPUs it leaves."""
    env = {"PATH": "/usr/bin:/bin", "LOCAL_WORLD_SIZE": "1", **variables}
    show = 'bash -c \'echo "gpus=${CUDA_VISIBLE_DEVICES-unset}"\''
    if "\nslurmkit_task_env" in script:   # (the exports, as slurmstepd sets them: each line NAME=value)
        show = ('out=$(_sk_task_exports) || exit 1; '
                'while IFS= read -r line; do [ -z "$line" ] || export "${line?}"; done <<< "$out"; ') + show
    else:
        show = "_sk_task " + show
    return subprocess.run(["bash", "-c", _wrapper(script) + show],
                          env=env, capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("kind, launcher, variable", [
    ("ddp", "", "SLURM_LOCALID"),
    ("tf-multiworker", "", "SLURM_LOCALID"),
    ("horovod", "srun", "SLURM_LOCALID"),
    ("horovod", "mpirun", "OMPI_COMM_WORLD_LOCAL_RANK"),   # SLURM_LOCALID is the batch step's under mpirun
    ("multigpu", "torchrun", "LOCAL_RANK"),
])
def test_each_kind_that_starts_one_process_per_gpu_binds_by_its_launchers_local_rank(kind, launcher, variable):
    nodes = 1 if kind == "multigpu" else 2
    launch = {"command": "python t.py", "gpu_view": "own", **({"launcher": launcher} if launcher else {})}
    resolution = job("narval", {"gpus": "a100:4", "nodes": nodes}, kind=kind, launch=launch)
    assert resolution.plan.distributed.gpu_rank == variable
    script = _script(kind, launcher, nodes=nodes)
    launch = next(line for line in script.splitlines() if line.startswith("slurmkit_run "))
    if launch.startswith("slurmkit_run srun "):   # srun runs the runtime as each task's prolog
        assert re.search(rf"^slurmkit_task_env .*gpu={variable}( |$)", script, re.M)
        assert launch.endswith(' --cpu-bind=cores --task-prolog="$SLURMKIT_TASK_ENV" python train.py')
    else:   # torchrun's and mpirun's ranks: every process goes through the wrapper
        assert re.search(rf"^slurmkit_place_tasks .*gpu={variable}( |$)", script, re.M)
        assert launch.endswith(" bash -c '_sk_task \"$@\"' _sk_task python train.py")


@pytest.mark.parametrize("kind, launcher", [("tf-multiworker", ""), ("ddp", ""), ("multigpu", "torchrun"), ("horovod", "srun"),
                                             ("horovod", "mpirun")])
def test_tf_workers_see_their_own_gpu_and_pytorch_and_horovod_ranks_the_nodes_by_default(kind, launcher):
    """TensorFlow takes every GPU it sees; PyTorch and Horovod code picks device local_rank among
    the node's GPUs (set_device(local_rank), hvd.local_rank()), which one GPU in view would break."""
    nodes = 1 if kind == "multigpu" else 2
    resolution = job("narval", {"gpus": "a100:4", "nodes": nodes}, kind=kind,
                     launch={"command": "python t.py", **({"launcher": launcher} if launcher else {})})
    distributed = resolution.plan.distributed
    assert (distributed.gpu_rank if distributed else "") == ("SLURM_LOCALID" if kind == "tf-multiworker" else "")
    assert (" gpu=SLURM_LOCALID" in _script(kind, launcher, nodes=nodes, view=None,
                                               modules=("openmpi/4.1.5",) if launcher == "mpirun" else ())) == (kind == "tf-multiworker")


def test_gpu_view_node_keeps_every_gpu_in_view_of_tf_workers_too():
    resolution = job("narval", {"gpus": "a100:4", "nodes": 2}, kind="tf-multiworker", launch={"command": "python t.py", "gpu_view": "node"})
    assert resolution.plan.distributed.gpu_rank == ""


@pytest.mark.parametrize("kind, resources, launch", [
    ("ddp", {"nodes": 2, "tasks_per_node": 2}, {}),                                          # no GPUs: nothing to bind
    ("multigpu", {"gpus": "a100:4"}, {"framework": "tensorflow"}),                          # one process drives all four
    ("gpu", {"gpus": "a100:1"}, {}),                                                         # one process, one GPU
    ("horovod", {"nodes": 2, "tasks_per_node": 2}, {"launcher": "mpirun"}),
])
def test_no_gpu_binding_where_no_process_is_one_of_several_on_the_gpus(kind, resources, launch):
    resolution = job("narval", resources, kind=kind, launch={"command": "python t.py", **launch})
    assert resolution.plan is not None, resolution.errors
    assert not (resolution.plan.distributed and resolution.plan.distributed.gpu_rank)


def test_the_wrapper_keeps_the_entry_of_the_nodes_gpu_list_at_the_local_rank():
    script = _script("ddp")
    assert _run_task(script, SLURM_LOCALID="2", CUDA_VISIBLE_DEVICES="0,1,2,3").stdout == "gpus=2\n"
    # The entry, not the number: a node whose list is 4,6 gives local rank 1 GPU 6.
    assert _run_task(script, SLURM_LOCALID="1", CUDA_VISIBLE_DEVICES="4,6").stdout == "gpus=6\n"


def test_under_mpirun_the_rank_on_the_node_comes_from_open_mpi_not_from_the_batch_step():
    script = _script("horovod", "mpirun", modules=("openmpi/4.1.5",))
    done = _run_task(script, SLURM_LOCALID="0", OMPI_COMM_WORLD_LOCAL_RANK="3", CUDA_VISIBLE_DEVICES="0,1,2,3")
    assert done.stdout == "gpus=3\n", done.stderr


def test_torchrun_ranks_get_their_gpu_before_their_share_of_the_cpus():
    script = _script("multigpu", "torchrun", nodes=1)
    done = _run_task(script, LOCAL_RANK="1", LOCAL_WORLD_SIZE="4", CUDA_VISIBLE_DEVICES="0,1,2,3")
    assert done.stdout == "gpus=1\n", done.stderr
    body = re.search(r"^_sk_task\(\) \{.*?^\}\n", runtime().text, re.S | re.M).group(0)
    assert body.index("_sk_task_exports") < body.index("_sk_bind_share")   # its GPU (in the exports), then its CPUs
    assert re.search(r"^slurmkit_place_tasks .*gpu=LOCAL_RANK bind$", script, re.M)


def test_one_gpu_per_node_stays_with_the_nodes_only_task():
    assert _run_task(_script("ddp"), SLURM_LOCALID="0", CUDA_VISIBLE_DEVICES="3").stdout == "gpus=3\n"


@pytest.mark.parametrize("variables", [
    {"SLURM_LOCALID": "2", "CUDA_VISIBLE_DEVICES": "0,1"},      # a hand edit: 3 tasks per node on 2 GPUs
    {"SLURM_LOCALID": "1", "CUDA_VISIBLE_DEVICES": "0"},        # a hand edit: 2 tasks on 1 GPU never share it silently
    {"SLURM_LOCALID": "0"},                                      # no GPU in view at all
    {"CUDA_VISIBLE_DEVICES": "0,1"},                             # no local rank
])
def test_a_process_without_a_gpu_of_its_own_stops_with_one_line_that_says_so(variables):
    done = _run_task(_script("ddp"), **variables)
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("slurmkit: process SLURM_LOCALID=") and "has no GPU of its own" in line
    assert line.endswith("ask one task per GPU on each node")


def test_mpirun_without_a_documented_local_rank_warns_and_binds_nothing(tmp_path, monkeypatch):
    folder = tmp_path / "site_profiles"
    folder.mkdir()
    (folder / "mylab.yaml").write_text("name: mylab\nextends: local\nlaunch:\n  mpi:\n    flavour: intelmpi\n    bind_flags: null\n")
    monkeypatch.chdir(tmp_path)
    resolution = Job(name="h", kind="horovod", profile="mylab", account="def-test", resources={"time": "1h", "nodes": 2, "gpus": "p100:2"},
                     launch={"command": "python t.py", "launcher": "mpirun", "gpu_view": "own"}).resolve()
    assert resolution.plan.distributed is None
    (warning,) = warnings_of(resolution, "launch.launcher")
    assert "every rank sees every GPU" in warning and "launcher: srun" in warning


@pytest.mark.parametrize("kind, launcher", [("ddp", ""), ("tf-multiworker", ""), ("horovod", "srun"), ("horovod", "mpirun"),
                                            ("multigpu", "torchrun")])
def test_scripts_with_gpu_binding_pass_bash_n_and_shellcheck(tmp_path, kind, launcher):
    path = tmp_path / "job.sbatch"
    path.write_text(_script(kind, launcher, nodes=1 if kind == "multigpu" else 2,
                            modules=("openmpi/4.1.5",) if launcher == "mpirun" else ()))
    assert subprocess.run(["bash", "-n", str(path)]).returncode == 0
    check = subprocess.run(["shellcheck", str(path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout


def test_a_misspelled_gpu_view_is_one_line_with_a_did_you_mean(tmp_path):
    from click.testing import CliRunner

    from slurmkit.cli.main import main

    spec = tmp_path / "job.yaml"
    spec.write_text("name: t\nprofile: narval\naccount: def-x\nkind: ddp\nresources: {nodes: 2, gpus: a100:4, time: 1h}\n"
                    "launch: {command: python t.py, gpu_view: owned}\n")
    result = CliRunner().invoke(main, ["render", str(spec), "-o", str(tmp_path / "out.sbatch")])
    assert result.exit_code == 2 and not (tmp_path / "out.sbatch").exists()
    assert result.output.strip() == f"error: {spec}:6: launch.gpu_view: 'owned' is not one of them; did you mean 'own'? allowed: own, node"
