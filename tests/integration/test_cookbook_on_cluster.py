"""The cookbook examples that fit the local cluster run there to COMPLETED.

Each runs its own payload from a copy of its folder, with the spec's keys replaced only where
the local cluster differs: profile and account, its modules (python/3.11, the only Python its
module tree has, for the examples' python/3.12), its 2 nodes of 2 CPUs and 4000M, no real GPUs
(PyTorch falls back to gloo on CPUs, TensorFlow runs its CPU build from PyPI), and smaller problem
sizes. The Horovod example is rendered and ported in tests/unit/test_cookbook.py only: Horovod's
source build is the slow tier's (tests/integration/test_horovod_build_slow.py). The sweep's whole 1,000-point array takes about
12 minutes on the 2 x 2 CPUs here, so CI runs 8 of its points and the slow tier
(``bash tests/run -m slow``) all of them.
"""

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from slurmkit import Job

from .slurm import STATE, lasting_venv, near_its_time_limit, sacct_rows, sbatch, wait_for_job, wait_until
from .test_distributed_on_cluster import TORCH

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TENSORFLOW = "tensorflow-cpu==2.21.0"   # the CPU build: the local cluster's GPUs are stand-ins


@pytest.fixture(scope="module")
def torch_venv():
    """A lasting virtualenv with PyTorch (CPU)."""
    return lasting_venv(TORCH)


@pytest.fixture(scope="module")
def tf_venv():
    """A lasting virtualenv with TensorFlow (CPU)."""
    return lasting_venv(TENSORFLOW)


def _local_copy(tmp_path: Path, name: str, **replaced) -> Path:
    """A copy of the example's folder whose job.yaml is the example's, with ``replaced`` keys."""
    folder = tmp_path / name
    shutil.copytree(EXAMPLES / name, folder, ignore=shutil.ignore_patterns("results", "checkpoints", "*.out"))
    spec = yaml.safe_load((folder / "job.yaml").read_text())
    spec.update(profile="local", account="def-test", **replaced)
    environment = spec.get("environment") or {}
    if environment.get("modules"):   # the local module tree's one Python
        environment["modules"] = ["python/3.11" if m.startswith("python/") else m for m in environment["modules"]]
    (folder / "job.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return folder / "job.yaml"


def _run(spec_path: Path, timeout: float = 600) -> str:
    """Render the spec, submit it from its folder, wait; the job must end COMPLETED."""
    script = spec_path.with_name("job.sbatch")
    script.write_text(Job.from_yaml(spec_path).render())
    submission = sbatch(script)
    assert submission.returncode == 0, submission.stderr
    row = wait_for_job(submission.job_id, timeout=timeout)
    logs = sorted(spec_path.parent.glob(f"*-{submission.job_id}*.out"))
    out = "\n".join(log.read_text() for log in logs)
    assert row["State"] == "COMPLETED", out[-4000:]
    return out


def test_ddp_multinode_trains_on_two_nodes_with_every_rank_in_step(cluster, tmp_path, torch_venv):
    spec = _local_copy(tmp_path, "ddp-multinode",
                       resources={"nodes": 2, "tasks_per_node": 2, "mem": "1500M", "time": "10m"},
                       environment={"venv": {"path": str(torch_venv)}},
                       launch={"command": "python train_ddp.py --epochs 2 --samples 1024 --batch-size 64", "batch_size": 64})
    out = _run(spec)
    ranks = re.findall(r"rank=(\d+) world=(\d+)", out)
    assert sorted(r for r, _ in ranks) == ["0", "1", "2", "3"] and {w for _, w in ranks} == {"4"}, out[-3000:]
    assert (spec.parent / "checkpoints" / "ddp.pt").is_file()          # rank 0 saved it, in the submit folder


def test_kmeans_mpi4py_finds_the_clusters_with_four_ranks(cluster, tmp_path):
    spec = _local_copy(tmp_path, "kmeans-mpi4py",
                       resources={"nodes": 2, "tasks_per_node": 2, "mem": "1500M", "time": "15m"},
                       environment={"modules": ["openmpi/4.1.5"], "venv": {"packages": ["numpy"]}, "builds": ["mpi4py"],
                                    "build_cache": str(STATE / "builds")},
                       launch={"command": "python kmeans.py --points-per-rank 20000 --k 4 --dim 2 --iterations 50 --seed 1",
                               "launcher": "mpirun"})
    out = _run(spec, timeout=900)
    assert re.search(r"ranks=4 points=80000 k=4 iterations=\d+ converged=True", out), out[-3000:]


def _run_sweep(spec: Path, points: int, timeout: float) -> str:
    """Submit the array, wait for every task; the tasks must all end COMPLETED. Returns collect.py's output."""
    script = spec.with_name("job.sbatch")
    script.write_text(Job.from_yaml(spec).render())
    submission = sbatch(script)
    assert submission.returncode == 0, submission.stderr
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = [r for r in sacct_rows(submission.job_id) if re.fullmatch(rf"{submission.job_id}_\d+", r["JobID"])]
        if len(rows) == points and all(r["State"].split()[0] in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT") for r in rows):
            break
        time.sleep(1)
    assert sorted({r["State"] for r in rows}) == ["COMPLETED"] and len(rows) == points, rows[:5]
    collected = subprocess.run([sys.executable, "collect.py", "results", "--expect", str(points)], cwd=spec.parent,
                               capture_output=True, text=True)
    assert collected.returncode == 0, collected.stdout + collected.stderr
    return collected.stdout


def test_the_sweep_is_one_array_of_1000_and_a_part_of_its_grid_runs_and_collects(cluster, tmp_path):
    full = _local_copy(tmp_path / "full", "sweep-1000", resources={"mem": "100M", "time": "5m"})
    assert "#SBATCH --array=0-999%100" in Job.from_yaml(full).render()
    grid = yaml.safe_load((EXAMPLES / "sweep-1000" / "job.yaml").read_text())["array"]
    part = {name: values[:2] for name, values in grid["parameters"].items()}          # 2 x 2 x 2 of the grid's points
    spec = _local_copy(tmp_path, "sweep-1000", resources={"mem": "100M", "time": "5m"}, array={**grid, "parameters": part})
    assert _run_sweep(spec, 8, timeout=300).startswith("8 of 8 points in results/")


@pytest.mark.slow
def test_all_1000_points_of_the_sweep_run_to_completed(cluster, tmp_path):
    spec = _local_copy(tmp_path, "sweep-1000", resources={"mem": "100M", "time": "5m"})
    assert _run_sweep(spec, 1000, timeout=3600).startswith("1000 of 1000 points in results/")


def test_imagenet_tarball_is_packed_staged_read_on_the_node_and_results_come_back(cluster, tmp_path):
    spec = _local_copy(tmp_path, "imagenet-tarball-staging",
                       resources={"gpus": "p100:1", "cpus_per_task": 1, "mem": "500M", "time": "10m"})
    folder = spec.parent
    subprocess.run([sys.executable, "make_dataset.py", "imagenet-mini", "--classes", "5", "--per-class", "200", "--bytes", "4096"],
                   cwd=folder, check=True)
    subprocess.run([sys.executable, "-m", "slurmkit.cli", "pack", "imagenet-mini", "-o", "imagenet-mini.tar"], cwd=folder, check=True)
    shutil.rmtree(folder / "imagenet-mini")                        # only the archive goes to the node
    _run(spec)
    summary = json.loads((folder / "results" / "summary.json").read_text())
    assert summary["files"] == 1000 and summary["bytes"] == 1000 * 4096, summary


def test_the_long_run_chain_resumes_in_a_second_link_and_ends_completed(cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "registry.jsonl"))
    spec = _local_copy(tmp_path, "long-run-chain",
                       resources={"cpus_per_task": 1, "mem": "200M", "time": "10m"}, resubmit={"max_links": 3},
                       stage={"checkpoint": {"from": "ckpt", "to": "checkpoints", "every": "1m"}, "lead": "30s"},
                       launch="python train_resumable.py --total-steps 110 --seconds-per-step 1")
    chain = Job.from_yaml(spec).submit()
    # The first link's limit is brought near once it has made progress: 1-2 minutes, in which it
    # reaches at most step 100 before SLURM's signal (a one-minute limit could signal it at its start).
    wait_until(lambda: "step 10/110" in (chain.links[0].stdout() or ""), "the first link's step 10", job_id=chain.links[0].job_id)
    near_its_time_limit(chain.links[0].job_id)
    final = chain.wait(0.5)
    states = [link.status().state for link in chain.links]
    assert final.state == "COMPLETED", states
    assert states[0] == "TIMEOUT" and "COMPLETED" in states[1:], states     # the first link ran out of time
    state = json.loads((spec.parent / "checkpoints" / "state.json").read_text())
    assert state["step"] == 110 and len(state["starts"]) >= 2, state


def test_tf_cpu_threads_sets_its_thread_pools_from_the_spec(cluster, tmp_path, tf_venv):
    spec = _local_copy(tmp_path, "tf-cpu-threads", resources={"cpus_per_task": 2, "mem": "3000M", "time": "10m"},
                       environment={"venv": {"path": str(tf_venv)},
                                    "variables": {"TF_NUM_INTRAOP_THREADS": "2", "TF_NUM_INTEROP_THREADS": "1",
                                                  "KMP_BLOCKTIME": "0", "KMP_AFFINITY": "granularity=fine,compact,1,0"}},
                       launch="python tf_cpu.py --samples 4000 --epochs 1")
    out = _run(spec)
    assert "tf intra_op=2 " in out and re.search(r"\d+ samples/s", out), out[-3000:]


def test_tf_multiworker_trains_with_a_worker_on_each_node(cluster, tmp_path, tf_venv):
    spec = _local_copy(tmp_path, "tf-multiworker", resources={"nodes": 2, "cpus_per_task": 2, "mem": "3000M", "time": "10m"},
                       environment={"venv": {"path": str(tf_venv)}},
                       launch={"command": "python train_multiworker.py --batch-per-worker 64 --epochs 1 --steps-per-epoch 20",
                               "batch_size": 64})
    out = _run(spec)
    workers = re.findall(r"worker=(\d) final_loss=([\d.]+)", out)
    assert sorted(w for w, _ in workers) == ["0", "1"], out[-3000:]
    assert len({loss for _, loss in workers}) == 1          # the workers stay in step


def test_mnist_keras_reads_its_staged_data_with_one_mirrored_process(cluster, tmp_path, tf_venv):
    spec = _local_copy(tmp_path, "mnist-keras-multigpu", resources={"gpus": "p100:2", "cpus_per_task": 2, "mem": "3000M", "time": "10m"},
                       environment={"venv": {"path": str(tf_venv)}},
                       launch={"command": "python mnist_keras.py --data $SLURM_TMPDIR/mnist.npz --batch-per-replica 128 --epochs 1",
                               "framework": "tensorflow", "batch_size": 128})
    # MNIST's shapes and types (the real file is not shipped), made with the venv's numpy
    make = ("import numpy as n; r = n.random.default_rng(0); u = lambda *s: r.integers(0, 256, s, dtype=n.uint8); "
            "n.savez('data/mnist.npz', x_train=u(2000, 28, 28), y_train=u(2000) % 10, x_test=u(500, 28, 28), y_test=u(500) % 10)")
    subprocess.run([str(tf_venv / "bin" / "python"), "-c", make], cwd=spec.parent, check=True)
    out = _run(spec)
    assert "(2000 training images)" in out and "replicas=1 " in out, out[-3000:]   # the stand-in GPUs are no CUDA devices


def test_the_serial_farm_runs_every_line_of_its_task_file_on_two_nodes(cluster, tmp_path):
    # All 400 runs, on both nodes (2 x 2 at a time): each line's result file, written once.
    spec = _local_copy(tmp_path, "serial-farm", resources={"nodes": 2, "tasks_per_node": 2, "mem_per_cpu": "200M", "time": "10m"})
    out = _run(spec)
    assert "slurmkit: 400 of 400 tasks succeeded, 0 failed, 0 not run" in out, out[-3000:]
    lines = (spec.parent / "params.tsv").read_text().split("\n")[:-1]
    expected = sorted(f"{float(a):g}-{float(b):g}.txt" for a, b in (line.split("\t") for line in lines))
    assert sorted(p.name for p in (spec.parent / "results").iterdir()) == expected
