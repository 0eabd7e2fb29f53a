"""One process per GPU gets its own GPU (tf-multiworker by default, the others with
launch.gpu_view: own), on the real local cluster (Slurm 22.05).

The local nodes have two p100 stand-ins each (gres.conf with File=); SLURM sets
CUDA_VISIBLE_DEVICES=0,1 for the batch step and for every task of a plain ``srun`` step
(measured here), so without a binding every task sees both GPUs. A 2-node x 2-task job of each
kind that starts one process per GPU prints, from inside each task, its SLURM_LOCALID and the
CUDA_VISIBLE_DEVICES it was left with: each must see exactly one GPU, a different one from its
neighbour on the node. The payload is a shell line, not TensorFlow or PyTorch: what is tested is
the view the process starts with, which is all a framework can use.
"""

import re
from pathlib import Path

import pytest

from slurmkit.api.job import Job

from .slurm import lasting_venv, sbatch, wait_for_job

VIEW = ["bash", "-c", "echo view host=$$(hostname) procid=$${SLURM_PROCID} localid=$${SLURM_LOCALID} "
        "mpi_local=$${OMPI_COMM_WORLD_LOCAL_RANK:--} local_rank=$${LOCAL_RANK:--} cvd=$${CUDA_VISIBLE_DEVICES-unset}"]


def _views(tmp_path: Path, kind: str, launcher: str = "", modules: tuple = (), nodes: int = 2, venv: str = "",
           view: str = "own") -> list:
    """Run ``kind`` on ``nodes`` nodes with 2 GPUs each (a process per GPU); what each process
    printed: host, SLURM_PROCID, SLURM_LOCALID, Open MPI's local rank, LOCAL_RANK, its GPUs."""
    script = tmp_path / f"{kind}.sbatch"
    script.write_text(Job(name=kind, kind=kind, profile="local", account="def-test",
                          resources={"time": "10m", "nodes": nodes, "gpus": "p100:2", "mem": "500M"},
                          environment={"modules": list(modules), **({"venv": {"path": venv}} if venv else {})},
                          launch={"command": VIEW, **({"launcher": launcher} if launcher else {}),
                                  **({"gpu_view": view} if view else {})}).render())
    submission = sbatch(script)
    assert submission.returncode == 0, submission.stderr
    row = wait_for_job(submission.job_id, timeout=300)
    out = (tmp_path / f"{kind}-{submission.job_id}.out").read_text()
    assert row["State"] == "COMPLETED", out
    views = re.findall(r"view host=(node\d) procid=(\d) localid=(\d) mpi_local=(\S+) local_rank=(\S+) cvd=(\S+)", out)
    assert len(views) == 2 * nodes, out
    return views


def _assert_one_distinct_gpu_per_task(views: list) -> None:
    by_node = {}
    for host, *_, gpus in views:
        assert gpus != "unset" and "," not in gpus, views      # exactly one GPU in view
        by_node.setdefault(host, []).append(gpus)
    assert len(by_node) == len(views) // 2, views
    for gpus in by_node.values():
        assert sorted(gpus) == ["0", "1"], views                 # distinct on each node, none left idle


@pytest.mark.parametrize("kind, view", [("ddp", "own"), ("tf-multiworker", None)])
def test_each_srun_task_sees_exactly_its_own_gpu(cluster, tmp_path, kind, view):
    """ddp (with gpu_view: own) and tf-multiworker (by default) start one task per GPU with srun:
    task i on a node keeps GPU i."""
    views = _views(tmp_path, kind, view=view)
    _assert_one_distinct_gpu_per_task(views)
    assert {(local, gpus) for _, _, local, _, _, gpus in views} == {("0", "0"), ("1", "1")}


def test_by_default_each_ddp_rank_sees_its_nodes_gpus_and_picks_one_by_its_local_rank(cluster, tmp_path):
    """PyTorch code picks cuda:LOCAL_RANK among the node's GPUs (the Alliance DDP example's
    set_device(local_rank)), so ddp keeps both GPUs in view and gives each rank its LOCAL_RANK."""
    views = _views(tmp_path, "ddp", view=None)
    assert {gpus for *_, gpus in views} == {"0,1"}
    by_node = {}
    for host, _, _, _, local_rank, _ in views:
        by_node.setdefault(host, []).append(local_rank)
    assert sorted(by_node) == ["node1", "node2"] and all(sorted(ranks) == ["0", "1"] for ranks in by_node.values()), views


def test_each_horovod_srun_rank_sees_exactly_its_own_gpu(cluster, tmp_path):
    """Horovod through srun: each rank keeps the GPU at its SLURM_LOCALID."""
    _assert_one_distinct_gpu_per_task(_views(tmp_path, "horovod", launcher="srun", modules=("openmpi/4.1.5",)))


def test_each_horovod_mpirun_rank_sees_exactly_its_own_gpu(cluster, tmp_path):
    """Horovod through mpirun (Open MPI): SLURM_LOCALID is the batch step's there, so each rank
    keeps the GPU at its OMPI_COMM_WORLD_LOCAL_RANK instead."""
    views = _views(tmp_path, "horovod", launcher="mpirun", modules=("openmpi/4.1.5",))
    _assert_one_distinct_gpu_per_task(views)
    assert {(mpi_local, gpus) for _, _, _, mpi_local, _, gpus in views} == {("0", "0"), ("1", "1")}


def test_each_multigpu_srun_task_has_its_rank_and_by_default_the_nodes_gpus(cluster, tmp_path):
    """multigpu on one node, by default: srun starts one task per GPU and the task prolog gives
    each its LOCAL_RANK (as ddp's); both keep the node's GPUs in view and pick one by LOCAL_RANK;
    with gpu_view: own each keeps the GPU at its SLURM_LOCALID."""
    views = _views(tmp_path, "multigpu", nodes=1, view=None)
    assert sorted((local, local_rank, gpus) for _, _, local, _, local_rank, gpus in views) == [("0", "0", "0,1"), ("1", "1", "0,1")]
    own = _views(tmp_path, "multigpu", nodes=1)
    _assert_one_distinct_gpu_per_task(own)
    assert {(local, gpus) for _, _, local, _, _, gpus in own} == {("0", "0"), ("1", "1")}


def test_each_torchrun_rank_sees_exactly_its_own_gpu(cluster, tmp_path):
    """multigpu through torchrun on one node: torchrun starts the ranks itself, all in the batch
    step (SLURM_LOCALID is 0 for both), so each keeps the GPU at its LOCAL_RANK."""
    venv = cluster.base / "venvs" / "torch-2.13.0"   # the one test_distributed_on_cluster keeps
    if not (venv / "ready").exists():
        venv = lasting_venv("torch==2.13.0")
    views = _views(tmp_path, "multigpu", launcher="torchrun", nodes=1, venv=str(venv))
    _assert_one_distinct_gpu_per_task(views)
    assert {(local_rank, gpus) for *_, local_rank, gpus in views} == {("0", "0"), ("1", "1")}



def test_a_hand_edited_gpu_count_below_the_tasks_fails_the_job_with_one_line(cluster, tmp_path):
    """--gpus-per-node edited from p100:2 to p100:1 by hand, two tasks per node left: the second
    task on each node has no GPU of its own; the job fails (never two tasks on one GPU unseen)
    and says which process and why."""
    script = tmp_path / "edited.sbatch"
    text = Job(name="edited", kind="ddp", profile="local", account="def-test",
               resources={"time": "10m", "nodes": 2, "gpus": "p100:2", "mem": "500M"},
               launch={"command": VIEW, "gpu_view": "own"}).render()
    assert "#SBATCH --gpus-per-node=p100:2\n" in text and "#SBATCH --ntasks-per-node=2\n" in text
    script.write_text(text.replace("#SBATCH --gpus-per-node=p100:2\n", "#SBATCH --gpus-per-node=p100:1\n"))
    submission = sbatch(script)
    assert submission.returncode == 0, submission.stderr
    row = wait_for_job(submission.job_id, timeout=120)
    out = (tmp_path / f"edited-{submission.job_id}.out").read_text()
    assert row["State"] == "FAILED", out
    lines = re.findall(r"^slurmkit: process SLURM_LOCALID=1 on (node\d) has no GPU of its own in CUDA_VISIBLE_DEVICES=0: "
                       r"ask one task per GPU on each node$", out, re.M)
    assert sorted(lines) == ["node1", "node2"], out


@pytest.mark.parametrize("step_gres, runs", [("--gres=gpu:1", False), (None, True)])
def test_a_jobs_own_gpu_steps_run_under_its_typed_header_once_port_names_their_type(cluster, tmp_path, step_gres, runs):
    """Two ``srun --gres=gpu:1 ... &`` steps, kept as written, under ``--gpus-per-node=p100:2``:
    Slurm 22.05 refuses each ("with and without type identification") and the job still ends 0;
    typed as the port writes them (typed_step_gres), each runs on a GPU of its own. check warns
    of the untyped form."""
    from slurmkit.core.gpu_names import typed_step_gres

    steps = "".join(f"srun --ntasks=1 --gres=gpu:1 --exclusive bash -c 'echo step{i} cvd=$CUDA_VISIBLE_DEVICES' &\n"
                    for i in (0, 1)) + "wait"
    shell = steps if step_gres else typed_step_gres(steps, "p100")
    job = Job(name="steps", kind="mpi", profile="local", account="def-test", resources={"time": "10m", "tasks_per_node": 2,
              "gpus": "p100:2", "mem_per_cpu": "250M"}, launch={"shell": shell, "launcher": "direct"})
    assert any("names no GPU type" in str(w) for w in job.resolve().warnings) is not runs
    script = tmp_path / "steps.sbatch"
    script.write_text(job.render(warn=False))
    submission = sbatch(script)
    assert submission.returncode == 0, submission.stderr
    row = wait_for_job(submission.job_id, timeout=300)
    out = (tmp_path / f"steps-{submission.job_id}.out").read_text()
    assert row["State"] == "COMPLETED", out
    seen = sorted(re.findall(r"step\d cvd=(\S+)", out))
    assert (seen == ["0", "1"]) is runs, out
    assert ("with and without type identification" in out) is not runs, out
