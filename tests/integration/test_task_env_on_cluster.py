"""srun's task prolog gives each task its place, on the real local cluster (Slurm 22.05.8).

ddp and tf-multiworker start their tasks as ``srun --cpu-bind=cores --task-prolog="$SLURMKIT_TASK_ENV"
COMMAND``: slurmstepd runs the runtime library (executed, not sourced) before each task and sets
the ``export`` lines it prints in that task. A 2-node x 2-task job of each kind prints, from inside
each task, what it was given: RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE (ddp), TF_CONFIG
and its own GPU (tf-multiworker), and the CPUs it may run on. The local cluster's task plugin is
task/none (srun binds nothing: "cluster configuration lacks support for cpu binding"), so the
slice is the prolog's: each of the node's 2 CPUs to one task. Both the file written beside the
script (render -o, submit) and render --standalone's copy (sent to the nodes with sbcast) are run.
"""

import json
import re
from pathlib import Path

import pytest

from slurmkit.api.job import Job

from .slurm import sbatch, wait_for_job

SHOW = ["bash", "-c", "echo place host=$$(hostname) procid=$${SLURM_PROCID} localid=$${SLURM_LOCALID} "
        "rank=$${RANK:--} local_rank=$${LOCAL_RANK:--} world=$${WORLD_SIZE:--} local_world=$${LOCAL_WORLD_SIZE:--} "
        "cvd=$${CUDA_VISIBLE_DEVICES-unset} cpus=$$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status) "
        "tf=$${TF_CONFIG:--}"]
PLACE = re.compile(r"^place host=(node\d) procid=(\d) localid=(\d) rank=(\S+) local_rank=(\S+) world=(\S+) "
                   r"local_world=(\S+) cvd=(\S+) cpus=(\S+) tf=(.*)$", re.M)


def _places(tmp_path: Path, kind: str, standalone: bool) -> list:
    script = tmp_path / f"{kind}.sbatch"
    text = Job(name=kind, kind=kind, profile="local", account="def-test",
               resources={"time": "10m", "nodes": 2, "gpus": "p100:2", "mem": "500M", "cpus_per_task": 1},
               launch={"command": SHOW}).render(standalone=standalone)
    launch = next(line for line in text.splitlines() if line.startswith("slurmkit_run "))
    assert '--task-prolog="$SLURMKIT_TASK_ENV"' in launch and "_sk_task" not in launch, launch
    script.write_text(text)
    submission = sbatch(script)
    assert submission.returncode == 0, submission.stderr
    row = wait_for_job(submission.job_id, timeout=300)
    out = (tmp_path / f"{kind}-{submission.job_id}.out").read_text()
    assert row["State"] == "COMPLETED", out
    places = PLACE.findall(out)
    assert len(places) == 4, out
    return places


def _assert_each_task_has_its_own_cpu(places: list) -> None:
    by_node = {}
    for host, _, local, *_, cpus, _ in places:
        by_node.setdefault(host, {})[local] = cpus
    assert by_node == {"node1": {"0": "0", "1": "1"}, "node2": {"0": "0", "1": "1"}}, places


@pytest.mark.parametrize("standalone", [False, True], ids=["file", "standalone"])
def test_each_ddp_task_gets_its_ranks_and_its_cpu_from_the_task_prolog(cluster, tmp_path, standalone):
    """ddp on 2 nodes x 2 tasks: each task's RANK is its SLURM_PROCID, LOCAL_RANK its
    SLURM_LOCALID, WORLD_SIZE 4, LOCAL_WORLD_SIZE 2; each runs on its own CPU of its node."""
    places = _places(tmp_path, "ddp", standalone)
    assert sorted((rank, local_rank, world, local_world) for _, procid, localid, rank, local_rank, world, local_world, *_ in places
                  if (rank, local_rank) == (procid, localid)) == [("0", "0", "4", "2"), ("1", "1", "4", "2"),
                                                                  ("2", "0", "4", "2"), ("3", "1", "4", "2")], places
    _assert_each_task_has_its_own_cpu(places)


def test_each_tf_worker_gets_its_tf_config_gpu_and_cpu_from_the_task_prolog(cluster, tmp_path):
    """tf-multiworker on 2 nodes x 2 tasks: every task's TF_CONFIG lists the 4 workers in host
    order and names its own index (SLURM_PROCID); each keeps the GPU at its place on the node and
    runs on its own CPU."""
    places = _places(tmp_path, "tf-multiworker", False)
    workers = None
    for host, procid, localid, *_, cvd, _cpus, tf in places:
        config = json.loads(tf)
        assert config["task"] == {"type": "worker", "index": int(procid)}, tf
        workers = workers or config["cluster"]["worker"]
        assert config["cluster"]["worker"] == workers and [w.split(":")[0] for w in workers] == ["node1", "node1", "node2", "node2"]
        assert workers[int(procid)].startswith(host + ":") and cvd == localid, places
    _assert_each_task_has_its_own_cpu(places)
