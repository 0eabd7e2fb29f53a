"""Staging to $SLURM_TMPDIR and back, on the real cluster: every node, every way a job ends."""

import os
import re
import shutil
import subprocess
import tarfile
import time

import pytest
import yaml

from slurmkit import Job
from tests.integration.slurm import near_its_time_limit


@pytest.fixture
def registry(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "registry.jsonl"))


def _job(tmp_path, **fields):
    spec = {"name": "stage", "profile": "local", "account": "def-test", "resources": {"time": "5m"}, **fields}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec))
    return Job.from_yaml(path)


def _inputs(tmp_path):
    (tmp_path / "dataset").mkdir()
    for i in range(5):
        (tmp_path / "dataset" / f"part{i}.txt").write_text(f"part {i}\n")
    (tmp_path / "config.json").write_text("{}\n")
    packed = tmp_path / "packed"
    packed.mkdir()
    (packed / "a.bin").write_bytes(b"x" * 1000)
    with tarfile.open(tmp_path / "archive.tar.gz", "w:gz") as archive:
        archive.add(packed / "a.bin", arcname="from-archive/a.bin")


def test_a_two_node_job_stages_its_inputs_onto_both_nodes(cluster, registry, tmp_path):
    _inputs(tmp_path)
    from slurmkit.resolve.staging import pack

    (tmp_path / "many").mkdir()
    for i in range(6):
        (tmp_path / "many" / f"m{i}").write_text(str(i))
    pack(tmp_path / "many", tmp_path / "many.pack", shards=3, compression="none")
    pack(tmp_path / "many", tmp_path / "many.sqfs", compression="none")
    listing = "echo $$(hostname): $$(cd $$SLURM_TMPDIR && find . -type f | sort | tr '\\n' ' ')"
    handle = _job(tmp_path, kind="mpi", resources={"time": "5m", "nodes": 2, "tasks_per_node": 1},
                  stage={"inputs": ["archive.tar.gz", {"from": "dataset", "to": "data"}, "config.json", "many.pack",
                                    {"from": "many.sqfs", "to": "image"}]},
                  launch={"command": ["bash", "-c", listing]}).submit()
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    # On two nodes the image is extracted on each (a mount would end with the step that made it).
    expected = ("./config.json ./data/part0.txt ./data/part1.txt ./data/part2.txt ./data/part3.txt ./data/part4.txt "
                "./from-archive/a.bin ./image/m0 ./image/m1 ./image/m2 ./image/m3 ./image/m4 ./image/m5 "
                "./m0 ./m1 ./m2 ./m3 ./m4 ./m5")
    lines = sorted(line.strip() for line in handle.stdout().splitlines())
    assert lines == [f"node1: {expected}", f"node2: {expected}"]


@pytest.mark.parametrize("kind", ["ddp", "tf-multiworker", "horovod"])
def test_every_task_of_a_two_node_distributed_job_reads_the_input_staged_on_its_own_node(cluster, registry, tmp_path,
                                                                                         monkeypatch, kind):
    """2 nodes x 2 tasks (one per stand-in GPU): the input is extracted into each node's own
    $SLURM_TMPDIR by one srun task per node, and that task has the node's 2 cores: a `tar` first
    on PATH records the cores the step counts (what the extractors' threads read). On Slurm
    22.05 a step does not get --cpus-per-task from the job, so without the flag it counted 1."""
    token = f"staged-for-{kind}"
    (tmp_path / "token").write_text(token + "\n")
    with tarfile.open(tmp_path / "data.tar", "w") as archive:
        archive.add(tmp_path / "token", arcname="token")
    probe_bin = tmp_path / "bin"
    probe_bin.mkdir()
    (probe_bin / "tar").write_text(f'#!/bin/bash\necho "$(hostname) $((${{SLURM_CPUS_PER_TASK:-1}} * ${{SLURM_NTASKS_PER_NODE:-1}}))" '
                                   f'>> {tmp_path}/tar-calls\nexec {shutil.which("tar")} "$@"\n')
    (probe_bin / "tar").chmod(0o755)
    monkeypatch.setenv("PATH", f"{probe_bin}:{os.environ['PATH']}")   # sbatch passes it on to the job
    probe = "echo task=$$SLURM_PROCID host=$$(hostname) token=$$(cat $$SLURM_TMPDIR/data/token)"
    job = _job(tmp_path, kind=kind, resources={"time": "5m", "nodes": 2, "gpus": "p100:2"},
               stage={"inputs": [{"from": "data.tar", "to": "data"}]}, launch={"command": ["bash", "-c", probe]})
    assert [f for f in job.check() if f.field.startswith(("launch", "stage"))] == []
    handle = job.submit()
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    tasks = sorted(re.findall(r"task=(\d) host=(node\d) token=(\S*)", handle.stdout()))
    assert tasks == [("0", "node1", token), ("1", "node1", token), ("2", "node2", token), ("3", "node2", token)], handle.stdout()
    assert sorted((tmp_path / "tar-calls").read_text().splitlines()) == ["node1 2", "node2 2"]


def test_a_failed_step_of_a_two_node_stage_in_fails_the_job_before_the_payload(cluster, registry, tmp_path):
    """The per-node stage-in runs under `bash -euo pipefail`: a corrupt archive (not the last
    step) ends the job; the payload never starts on half its inputs (Slurm 22.05)."""
    _inputs(tmp_path)
    (tmp_path / "broken.tar").write_bytes(b"not a tar archive" * 100)
    handle = _job(tmp_path, kind="mpi", resources={"time": "5m", "nodes": 2, "tasks_per_node": 1},
                  stage={"inputs": [{"from": "broken.tar", "to": "broken"}, {"from": "dataset", "to": "data"}]},
                  launch={"command": ["bash", "-c", "echo payload-ran"]}).submit()
    assert handle.wait(0.5).state == "FAILED"
    assert "payload-ran" not in handle.stdout()


def _scratch_of(cluster, handle, node="node1"):
    return cluster.base / "nodes" / node / "localscratch" / f"root.{handle.job_id}.0"


def test_a_squashfs_image_is_mounted_read_only_and_unmounted_when_the_job_ends(cluster, registry, tmp_path):
    from slurmkit.resolve.staging import pack

    (tmp_path / "shots").mkdir()
    for i in range(50):
        (tmp_path / "shots" / f"s{i:02d}.txt").write_text(f"shot {i}\n")
    pack(tmp_path / "shots", tmp_path / "shots.sqfs", compression="none")
    probe = ("d=$$SLURM_TMPDIR/shots; mountpoint -q $$d && echo mounted; cat $$d/s07.txt; ls $$d | wc -l; "
             "touch $$d/new 2>/dev/null || echo read-only; mkdir -p $$SLURM_TMPDIR/out && echo done > $$SLURM_TMPDIR/out/r")
    handle = _job(tmp_path, stage={"inputs": [{"from": "shots.sqfs", "to": "shots"}], "outputs": [{"from": "out", "to": "out"}]},
                  launch={"command": ["bash", "-c", probe]}).submit()
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    assert handle.stdout().split("\n")[:4] == ["mounted", "shot 7", "50", "read-only"]
    assert (tmp_path / "out" / "r").read_text() == "done\n"
    # The epilog's rm -rf --one-file-system cannot remove a folder with a mount still on it.
    scratch = _scratch_of(cluster, handle, handle.nodes)
    deadline = time.monotonic() + 30
    while scratch.exists() and time.monotonic() < deadline:
        time.sleep(0.3)
    assert not scratch.exists(), f"{scratch} is still there: the image was not unmounted"


PRODUCER = ("mkdir -p $$SLURM_TMPDIR/results; for i in $$(seq 1 100); do echo $$i > $$SLURM_TMPDIR/results/r$$i; done; "
            "echo produced; sleep 600")


def _wait_for_output(handle, text, timeout=60):
    deadline = time.monotonic() + timeout
    while text not in (handle.stdout() or "") and time.monotonic() < deadline:
        time.sleep(0.3)
    assert text in (handle.stdout() or ""), handle.stderr()


def test_usr1_before_the_time_limit_stops_the_payload_and_saves_every_output(cluster, registry, tmp_path):
    handle = _job(tmp_path, stage={"outputs": [{"from": "results", "to": "saved/results"}]},
                  launch={"command": ["bash", "-c", PRODUCER]}).submit()
    _wait_for_output(handle, "produced")
    subprocess.run(["scancel", "--batch", "--signal=USR1", handle.job_id], check=True)
    status = handle.wait(0.5)
    # sacct says FAILED 124; the exit file's `timeout` line makes it what it is (Slurm 22.05).
    assert (status.state, status.exit_code, status.saved) == ("TIMEOUT", 124, (str(tmp_path / "saved" / "results"),))
    assert status.unsaved == ()
    assert sorted(p.name for p in (tmp_path / "saved" / "results").iterdir()) == sorted(f"r{i}" for i in range(1, 101))
    assert "the time limit is near" in handle.stderr()


def test_a_true_time_limit_still_brings_every_output_back(cluster, registry, tmp_path):
    handle = _job(tmp_path, resources={"time": "10m"}, stage={"outputs": [{"from": "results", "to": "saved"}], "lead": "30s"},
                  launch={"command": ["bash", "-c", PRODUCER]}).submit()
    assert "--signal=B:USR1@30" in (tmp_path / "logs" / f"{handle.job_id}_submission.sh").read_text()
    _wait_for_output(handle, "produced")
    near_its_time_limit(handle.job_id)      # (the signal of a one-minute limit can come before the payload began)
    status = handle.wait(1.0)
    assert (status.state, status.saved, status.unsaved) == ("TIMEOUT", (str(tmp_path / "saved"),), ())
    assert len(list((tmp_path / "saved").iterdir())) == 100


def test_a_failing_payload_still_copies_back_and_ends_failed(cluster, registry, tmp_path):
    failing = "mkdir -p $$SLURM_TMPDIR/results && echo partial > $$SLURM_TMPDIR/results/log.txt && exit 3"
    status = _job(tmp_path, stage={"outputs": [{"from": "results", "to": "out"}]},
                  launch={"command": ["bash", "-c", failing]}).submit().wait(0.5)
    assert (status.state, status.exit_code, status.saved) == ("FAILED", 3, (str(tmp_path / "out"),))
    assert (tmp_path / "out" / "log.txt").read_text() == "partial\n"


def test_the_job_starts_in_the_specs_folder(cluster, registry, tmp_path):
    handle = _job(tmp_path, launch={"command": ["pwd"]}).submit()
    handle.wait(0.5)
    assert handle.stdout().strip() == str(tmp_path)


COUNTER = ("step=$$(cat $$SLURM_TMPDIR/ckpt/step 2>/dev/null || echo 0); step=$$((step + 1)); "
           "echo $$step > $$SLURM_TMPDIR/ckpt/step; echo ran step $$step; [ $$step -ge 3 ] || exit 99")


def test_a_chain_resumes_from_its_checkpoint_and_ends_completed(cluster, registry, tmp_path):
    chain = _job(tmp_path, resources={"time": "2m"}, resubmit={"max_links": 4},
                 stage={"checkpoint": {"from": "ckpt", "to": "saved", "every": "1m"}, "lead": "30s"},
                 launch={"command": ["bash", "-c", COUNTER]}).submit()
    assert len(chain.links) == 4
    final = chain.wait(0.5)
    states = [(link.status().state, link.status().exit_code) for link in chain.links]
    assert states == [("FAILED", 99), ("FAILED", 99), ("COMPLETED", 0), ("COMPLETED", 0)]
    assert final.state == "COMPLETED"
    assert (tmp_path / "saved" / "step").read_text() == "3\n"
    assert [link.stdout().strip() for link in chain.links] == ["ran step 1", "ran step 2", "ran step 3", ""]
    assert "an earlier link of the chain finished the work" in chain.links[3].stderr()
    # slurmkit status shows the chain as one entry with its links
    import json
    import sys

    shown = json.loads(subprocess.run([sys.executable, "-m", "slurmkit.cli", "status", chain.job_id, "--json"],
                                      capture_output=True, text=True, check=True).stdout)["jobs"]
    assert len(shown) == 1 and shown[0]["job"] == chain.job_id and shown[0]["state"] == "COMPLETED"
    assert [link["state"] for link in shown[0]["links"]] == ["FAILED", "FAILED", "COMPLETED", "COMPLETED"]


def test_checks_packing_advice_followed_as_written_gives_the_job_its_folder(cluster, registry, tmp_path, monkeypatch):
    """`check` advises packing a folder of small files; the pack command and the stage
    line it names, taken as written, give the job $SLURM_TMPDIR/dataset with every file."""
    from click.testing import CliRunner

    from slurmkit.cli.main import main

    (tmp_path / "dataset").mkdir()
    for i in range(1200):
        (tmp_path / "dataset" / f"f{i}.txt").write_text(f"row {i}\n")
    command = ["bash", "-c", "find $$SLURM_TMPDIR/dataset -type f | wc -l"]
    job = _job(tmp_path, stage={"inputs": ["dataset"]}, launch={"command": command})
    [advice] = [f.message for f in job.check() if f.field == "stage.inputs.0" and "pack it once" in f.message]
    pack_args = re.search(r"\(slurmkit (pack [^)]*)\)", advice).group(1).split()
    stage_from, stage_to = re.search(r"\{from: (\S+), to: (\S+)\}", advice).groups()
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(main, pack_args).exit_code == 0
    handle = _job(tmp_path, stage={"inputs": [{"from": stage_from, "to": stage_to}]}, launch={"command": command}).submit()
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    assert handle.stdout().split() == ["1200"]
