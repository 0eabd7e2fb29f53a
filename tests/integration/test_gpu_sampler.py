"""The GPU sampler every GPU job runs for ``slurmkit report``, on the real local cluster (Slurm 22.05).

The local nodes have stand-in P100s (gres.conf File= character devices) and no nvidia-smi; the
tests put tests/stand_ins/nvidia-smi first on the PATH the job inherits from sbatch (it prints
the real tool's CSV layout every -l seconds), which is acceptable here only because the real one
runs in bench/gpu_sampler.py on the device. What is proved: the sampler starts before the
payload, writes <key>.gpu.<host>.csv beside the exit file, and on every way a job ends (success,
failure, scancel, the time limit) writes its .state line ("stopped <epoch> interval=N") before
the exit file; without nvidia-smi it writes "unavailable ..." and the job still succeeds; on two
nodes one runs per node (an srun --overlap step) without holding the payload's step back.
"""

import os
import re
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from slurmkit import Job

STAND_INS = Path(__file__).resolve().parents[1] / "stand_ins"
LINE = re.compile(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{3}, (\d+), GPU-[0-9a-f-]+, [^,]+, \d+, \d+, \d+, \[N/A\]$")


@pytest.fixture
def registry(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "registry.jsonl"))


@pytest.fixture
def stand_in(monkeypatch):
    """The nvidia-smi stand-in first on the PATH that sbatch hands the job."""
    monkeypatch.setenv("PATH", f"{STAND_INS}{os.pathsep}{os.environ['PATH']}")


def _job(tmp_path, command, time_limit="10m", gpus="p100:1", **fields):
    spec = {"name": "sampled", "profile": "local", "account": "def-test", "kind": "gpu",
            "resources": {"time": time_limit, "gpus": gpus, "mem": "300M"}, "launch": {"command": command}, **fields}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec))
    return Job.from_yaml(path)


def _files(handle):
    """{host: (csv lines, state line)} and the exit file of a job."""
    folder = Path(handle.paths.folder)
    found = {}
    for state in sorted(folder.glob(f"{handle.job_id}.gpu.*.state")):
        host = state.name[len(f"{handle.job_id}.gpu."):-len(".state")]
        csv = folder / f"{handle.job_id}.gpu.{host}.csv"
        found[host] = (csv.read_text().splitlines() if csv.exists() else [], state.read_text())
    return found, folder / f"{handle.job_id}.exit"


def _assert_stopped_before_exit_file(handle, interval: int, gpus=1, hosts=1):
    found, exit_file = _files(handle)
    deadline = time.monotonic() + 40        # scancel: sacct says CANCELLED while the exit trap still runs
    while not exit_file.exists() and time.monotonic() < deadline:
        time.sleep(0.3)
    assert exit_file.exists(), handle.stderr()
    found, _ = _files(handle)
    assert len(found) == hosts, (found, handle.stderr())
    for lines, state in found.values():
        assert re.fullmatch(rf"stopped (\d+) interval={interval}\n", state), state
        assert lines and all(LINE.match(line) for line in lines), lines
        assert len({LINE.match(line).group(1) for line in lines}) == gpus, lines   # the job's GPUs (which: SLURM's pick)
        stopped = int(state.split()[1])
        assert stopped <= exit_file.stat().st_mtime + 1, "the sampler stopped after the exit file was written"
    return found


def _running_with_samples(handle, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = list(Path(handle.paths.folder).glob(f"{handle.job_id}.gpu.*.csv"))
        if found and found[0].read_text():
            return
        time.sleep(0.3)
    raise AssertionError(f"no samples within {timeout}s: {handle.stderr()}")


def test_a_job_that_succeeds_leaves_samples_and_a_stopped_line(cluster, registry, stand_in, tmp_path):
    handle = _job(tmp_path, ["sleep", "4"]).submit()          # 10 min: a sample every 2 s
    status = handle.wait(0.5)
    assert (status.state, status.exit_code) == ("COMPLETED", 0), handle.stderr()
    (lines, _), = _assert_stopped_before_exit_file(handle, 2).values()
    assert len(lines) >= 2                                     # started before the payload, sampled while it ran


def test_a_job_that_fails_still_stops_the_sampler(cluster, registry, stand_in, tmp_path):
    handle = _job(tmp_path, ["bash", "-c", "sleep 2; exit 3"], time_limit="5m").submit()   # every 1 s
    status = handle.wait(0.5)
    assert (status.state, status.exit_code) == ("FAILED", 3), handle.stderr()
    _assert_stopped_before_exit_file(handle, 1)


def test_a_cancelled_job_stops_the_sampler(cluster, registry, stand_in, tmp_path):
    handle = _job(tmp_path, ["sleep", "300"], time_limit="5m").submit()
    _running_with_samples(handle)
    subprocess.run(["scancel", handle.job_id], check=True)
    assert handle.wait(0.5).state == "CANCELLED"
    _assert_stopped_before_exit_file(handle, 1)


def test_a_job_at_its_time_limit_stops_the_sampler(cluster, registry, stand_in, tmp_path):
    """A true 1-minute limit (SLURM's TERM at the limit, then KillWait): the trap stops the sampler."""
    handle = _job(tmp_path, ["sleep", "300"], time_limit="1m").submit()
    status = handle.wait(1.0)
    assert status.state == "TIMEOUT", handle.stderr()
    (lines, _), = _assert_stopped_before_exit_file(handle, 1).values()
    assert len(lines) >= 30                                    # a minute of 1 s samples


def test_without_nvidia_smi_the_sampler_says_unavailable_and_the_job_runs(cluster, registry, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert subprocess.run(["bash", "-c", "command -v nvidia-smi"], capture_output=True).returncode != 0
    handle = _job(tmp_path, ["true"]).submit()
    status = handle.wait(0.5)
    assert (status.state, status.exit_code) == ("COMPLETED", 0), handle.stderr()
    found, _ = _files(handle)
    (lines, state), = found.values()
    assert lines == [] and re.fullmatch(r"unavailable nvidia-smi is not on PATH on node\d\n", state), state


def test_monitor_gpu_false_runs_no_sampler(cluster, registry, stand_in, tmp_path):
    handle = _job(tmp_path, ["true"], monitor={"gpu": False}).submit()
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    assert list(Path(handle.paths.folder).glob(f"{handle.job_id}.gpu.*")) == []


def test_a_two_node_job_runs_one_sampler_per_node_beside_a_payload_that_fills_the_nodes(cluster, registry, stand_in,
                                                                                      tmp_path):
    """ddp on 2 nodes x 2 GPUs, one task per GPU on every core of the nodes: the sampler's
    srun --overlap step (1 core, --mem=0) holds neither cores nor memory back from the payload's
    step, and sees both GPUs of its node (a step keeps the job's GRES unless it asks otherwise)."""
    handle = _job(tmp_path, ["bash", "-c", "echo rank $$RANK on $$(hostname); sleep 3"], kind="ddp", gpus="p100:2",
                  resources={"time": "10m", "nodes": 2, "gpus": "p100:2", "mem": "300M"}).submit()
    status = handle.wait(0.5)
    assert status.state == "COMPLETED", handle.stderr()
    assert len(re.findall(r"rank \d on node\d", handle.stdout())) == 4
    found = _assert_stopped_before_exit_file(handle, 2, gpus=2, hosts=2)
    assert sorted(found) == ["node1", "node2"]
    assert "srun: error" not in handle.stderr() and "forcing job termination" not in handle.stderr(), handle.stderr()
