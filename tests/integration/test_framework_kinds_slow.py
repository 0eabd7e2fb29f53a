"""Kinds lightning and accelerate on the local cluster (Slurm 22.05, CPU nodes): 2 nodes x 2
processes train a tiny model with gloo and every rank ends with the same loss; Lightning's
auto-requeue runs under a true one-minute limit (the signal, the checkpoint, `scontrol requeue`,
the second run resuming from hpc_ckpt_1.ckpt). Slow tier (torch, pytorch-lightning 2.6.6 and
accelerate 1.15.0 in a lasting venv the nodes see): ``bash tests/run -m slow``.

Measured on the 2-core VM, Slurm 22.05 (2026-11-26): the accelerate job ran 23 s; the lightning
test took 198 s: the first run was signalled 28 s into its minute, Lightning saved and requeued,
SLURM made the job eligible again 121 s after the requeue (EligibleTime, 22.05's requeue delay),
and the second run resumed and finished. Both tests with a fresh venv install: 4 min 44 s."""

import re
import subprocess
import time
from pathlib import Path

import pytest

from slurmkit.api.job import Job

from .slurm import lasting_venv, sbatch, wait_for_job

pytestmark = pytest.mark.slow
PAYLOADS = Path(__file__).resolve().parent / "framework_payloads"
REQUIREMENTS = ("torch==2.13.0", "pytorch-lightning==2.6.6", "accelerate==1.15.0")


@pytest.fixture(scope="module")
def framework_venv():
    return lasting_venv(*REQUIREMENTS)


def _submit(tmp_path: Path, job: Job) -> str:
    path = tmp_path / f"{job.spec.name}.sbatch"
    path.write_text(job.render())
    submission = sbatch(path)
    assert submission.returncode == 0, submission.stderr
    return submission.job_id


def _losses(out: str, tag: str):
    return re.findall(tag + r" rank=(\d) world=4 .*final_loss=([0-9.]+)", out)


def test_accelerate_runs_four_cpu_ranks_on_their_own_cores_and_they_agree(cluster, tmp_path, framework_venv):
    job = Job(name="acc", profile="local", account="def-test", kind="accelerate",
              resources={"time": "10m", "nodes": 2, "tasks_per_node": 2, "mem": "1500M"},
              environment={"venv": {"path": str(framework_venv)}},
              launch={"command": ["python", str(PAYLOADS / "accelerate_tiny.py")]})
    job_id = _submit(tmp_path, job)
    row = wait_for_job(job_id, timeout=600)
    out = (tmp_path / f"acc-{job_id}.out").read_text()
    assert row["State"] == "COMPLETED", out[-5000:]
    found = _losses(out, "accelerate")
    assert sorted(rank for rank, _ in found) == ["0", "1", "2", "3"], out[-5000:]
    assert len({loss for _, loss in found}) == 1, found          # one model: every rank ends with the same loss
    assert out.count("type=DistributedType.MULTI_CPU backend=gloo") == 4
    placed = re.findall(r"accelerate rank=\d world=4 .* host=(\S+) cores=(\S+)", out)
    assert len(placed) == 4 and len({host for host, _ in placed}) == 2, placed
    for node in {host for host, _ in placed}:                     # srun --cpu-bind=cores: no two ranks share a core
        cores = [set(c.split(",")) for host, c in placed if host == node]
        assert len(cores) == 2 and not cores[0] & cores[1], placed


def test_lightning_requeues_on_the_signal_of_a_one_minute_job_and_resumes_from_its_checkpoint(cluster, tmp_path, framework_venv,
                                                                                               monkeypatch):
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    monkeypatch.setenv("SLURMKIT_JOB_DIR", str(jobs))      # as `slurmkit submit` sets it: the exit file goes there
    root = tmp_path / "root"
    job = Job(name="lt", profile="local", account="def-test", kind="lightning",
              resources={"time": "1m", "nodes": 2, "tasks_per_node": 2, "mem": "1500M"},
              environment={"venv": {"path": str(framework_venv)}},
              launch={"command": ["python", str(PAYLOADS / "lightning_tiny.py"), str(root), "1"]})
    assert "#SBATCH --signal=B:USR1@30" in job.render()
    started = time.monotonic()
    job_id = _submit(tmp_path, job)
    row = wait_for_job(job_id, timeout=900)
    out = (tmp_path / f"lt-{job_id}.out").read_text()       # --open-mode=append: both runs
    assert row["State"] == "COMPLETED", out[-6000:]
    assert "slurmkit: the time limit is near: SIGUSR1 to the ranks" in out, out[-6000:]
    assert "slurmkit: requeued by Lightning after SIGUSR1" in out
    assert (root / "hpc_ckpt_1.ckpt").exists()
    assert re.search(r"Restoring states from the checkpoint path at \S*hpc_ckpt_1\.ckpt", out), out[-6000:]
    found = _losses(out, "lightning")
    assert sorted(rank for rank, _ in found) == ["0", "1", "2", "3"], out[-6000:]
    assert len({loss for _, loss in found}) == 1, found
    assert "restart=1" in out and "restart=0 final_loss" not in out   # only the requeued run finished
    assert (jobs / f"{job_id}.exit").read_text().split()[0] == "0"    # the requeue wrote none; the end did
    runs = subprocess.run(["sacct", "-n", "-X", "-D", "-P", "-o", "State", "-j", job_id], capture_output=True, text=True).stdout.split()
    assert runs[0] == "REQUEUED" and runs[-1] == "COMPLETED", runs
    print(f"lightning: signal, checkpoint, requeue and resumed run in {time.monotonic() - started:.0f} s")


def test_lightning_requeues_through_a_shell_line_that_execs_the_program(cluster, tmp_path, framework_venv, monkeypatch):
    """Slurm 22.05: kind lightning takes a shell line that execs the program (each rank's output
    to its own file): srun's SIGUSR1 reaches Lightning alone, which saves, and the job requeues and
    resumes. (A pipe to tee is refused by check: tee and bash died of the signal, the save with them.)"""
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    monkeypatch.setenv("SLURMKIT_JOB_DIR", str(jobs))
    root = tmp_path / "root"
    logs = tmp_path / "logs"
    logs.mkdir()
    job = Job(name="lx", profile="local", account="def-test", kind="lightning",
              resources={"time": "1m", "nodes": 2, "tasks_per_node": 2, "mem": "1500M"},
              environment={"venv": {"path": str(framework_venv)}},
              launch={"shell": f"exec python {PAYLOADS / 'lightning_tiny.py'} {root} 1 >> {logs}/rank-$SLURM_PROCID.log 2>&1"})
    job_id = _submit(tmp_path, job)
    row = wait_for_job(job_id, timeout=900)
    out = (tmp_path / f"lx-{job_id}.out").read_text()
    rank0 = (logs / "rank-0.log").read_text()
    assert row["State"] == "COMPLETED", out[-3000:] + rank0[-3000:]
    assert "slurmkit: requeued by Lightning after SIGUSR1" in out, out[-3000:]
    assert (root / "hpc_ckpt_1.ckpt").exists()
    assert re.search(r"Restoring states from the checkpoint path at \S*hpc_ckpt_1\.ckpt", rank0), rank0[-3000:]
    assert "restart=1" in rank0
