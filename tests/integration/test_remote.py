"""Jobs from a "laptop" over one SSH connection, against an sshd of the tests' own.

The far side is this machine behind ``tests/integration/sshd.py`` (a loopback port, keys made
by the test, SLURM_CONF and $SCRATCH set by sshd as on a login node), in front of the local
SLURM 22.05 cluster. It runs only plain sbatch/squeue/sacct/scancel, sh and rsync: nothing of
slurmkit. The laptop side runs the CLI in a subprocess with SLURM_CONF removed, so every
SLURM answer it shows came over ssh.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import pytest
import yaml

from .sshd import HOST_ALIAS, Sshd, free_port

CLI = [sys.executable, "-c", "from slurmkit.cli.main import main; main()"]


@pytest.fixture
def sshd(cluster, tmp_path):
    daemon = Sshd(tmp_path / "sshd", os.environ["SLURM_CONF"])
    daemon.folder.mkdir()
    daemon.start()
    yield daemon
    daemon.stop()


@pytest.fixture
def laptop(sshd, tmp_path):
    """The environment of the laptop's slurmkit: its own config, runtime folder and registry."""
    config = tmp_path / "config"
    (config / "slurmkit").mkdir(parents=True)
    (config / "slurmkit" / "remote.yaml").write_text(yaml.safe_dump(
        {"ssh_config": str(sshd.folder / "ssh_config"), "clusters": {"local": {"host": HOST_ALIAS}}}))
    env = {k: v for k, v in os.environ.items() if k not in ("SLURM_CONF", "SLURMKIT_REGISTRY")}
    env.update(XDG_CONFIG_HOME=str(config), XDG_RUNTIME_DIR=str(sshd.runtime),
               SLURMKIT_REGISTRY=str(tmp_path / "registry.jsonl"), NO_COLOR="1")
    return env


def slurmkit(env, *args, timeout=180):
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def staged_job(folder: Path, sleep_s: int = 0, until: Optional[Path] = None) -> Path:
    """A job that stages data.txt in, counts its lines into results/, copied back on exit;
    it first sleeps ``sleep_s``, or waits until the test makes the file ``until``."""
    folder.mkdir()
    (folder / "data.txt").write_text("".join(f"{i}\n" for i in range(42)))
    wait = f"until [ -e {until} ]; do sleep 0.2; done" if until else f"sleep {sleep_s}"
    script = (f"{wait}; mkdir -p $SLURM_TMPDIR/results && wc -l < $SLURM_TMPDIR/data.txt "
              "> $SLURM_TMPDIR/results/count.txt && echo hello-from-the-cluster")
    spec = {"name": "remote-staged", "profile": "local", "account": "def-test", "resources": {"time": "5m"},
            "stage": {"inputs": ["data.txt"], "outputs": [{"from": "results", "to": "results"}]},
            "launch": {"command": ["bash", "-c", script]}}
    (folder / "job.yaml").write_text(yaml.safe_dump(spec))
    return folder / "job.yaml"


def job_id_of(stdout: str) -> str:
    return stdout.split("submitted job ", 1)[1].split()[0]


def sessions(sshd: Sshd) -> int:
    """Commands sshd started (one per ssh, rsync or mux client session)."""
    return sum("Starting session:" in line for line in sshd.log.read_text().splitlines())


def test_submit_watch_logs_fetch_of_a_staged_job_end_to_end(sshd, laptop, tmp_path):
    spec = staged_job(tmp_path / "project")
    submitted = slurmkit(laptop, "submit", str(spec), "--remote", "local")
    assert submitted.returncode == 0, submitted.stderr
    job_id = job_id_of(submitted.stdout)
    records = [json.loads(line) for line in Path(laptop["SLURMKIT_REGISTRY"]).read_text().splitlines()]
    assert records[-1]["job_id"] == job_id and records[-1]["remote"] == HOST_ALIAS
    remote_logs = Path(records[-1]["folder"])
    assert remote_logs.is_relative_to(sshd.scratch / "slurmkit")        # the default root: $SCRATCH/slurmkit
    assert (remote_logs.parent / "data.txt").read_text().count("\n") == 42   # synced there

    watched = slurmkit(laptop, "watch", job_id, "--remote", "local", "--interval", "2")
    assert watched.returncode == 0, watched.stdout + watched.stderr
    assert f"{job_id} COMPLETED exit 0" in watched.stdout

    logs = slurmkit(laptop, "logs", job_id, "--remote", "local")
    assert logs.returncode == 0 and logs.stdout.strip().endswith("hello-from-the-cluster"), logs.stdout + logs.stderr
    status = slurmkit(laptop, "status", "--remote", "local", "--json")
    [row] = json.loads(status.stdout)["jobs"]
    assert (row["job"], row["state"], row["outputs"]) == (job_id, "COMPLETED", "outputs saved")

    report = slurmkit(laptop, "report", job_id, "--remote", "local")
    assert report.returncode == 0 and "State: COMPLETED (exit code 0)" in report.stdout, report.stdout + report.stderr
    local = slurmkit(laptop, "status", job_id)   # without --remote: which --remote it needs, not a wrong answer
    assert local.returncode == 2 and f"error: job {job_id} was submitted to local with --remote: add `--remote local`" in local.stderr

    assert not (spec.parent / "results").exists()
    fetched = slurmkit(laptop, "fetch", job_id)
    assert fetched.returncode == 0, fetched.stderr
    assert (spec.parent / "results" / "count.txt").read_text().strip() == "42"
    assert "hello-from-the-cluster" in (spec.parent / "logs" / f"{job_id}_0_log.out").read_text()
    assert (spec.parent / "logs" / f"{job_id}.exit").exists()
    assert sshd.connections() == 1   # every command of this test rode the first master connection


def test_one_tcp_connection_serves_a_whole_submit_wait(sshd, laptop, tmp_path):
    spec = staged_job(tmp_path / "project", sleep_s=6)
    done = slurmkit(laptop, "submit", str(spec), "--remote", "local", "--wait")
    assert done.returncode == 0, done.stdout + done.stderr
    job_id = job_id_of(done.stdout)
    assert f"{job_id} COMPLETED exit 0" in done.stdout
    assert f"Job ID: {job_id}\nState: COMPLETED (exit code 0)" in done.stdout   # the report, from the cluster's sacct
    assert sessions(sshd) >= 8      # probe, mkdir, rsync, script, sbatch, mv and several polls ...
    assert sshd.connections() == 1  # ... all over one TCP connection


def test_a_connection_dropped_during_watch_is_reopened_once_and_the_watch_resumes(sshd, laptop, tmp_path):
    release = tmp_path / "release"
    spec = staged_job(tmp_path / "project", until=release)   # runs until the connection has dropped
    job_id = job_id_of(slurmkit(laptop, "submit", str(spec), "--remote", "local").stdout)
    watch = subprocess.Popen([*CLI, "watch", job_id, "--remote", "local", "--interval", "2"], env=laptop,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        polled = sessions(sshd)
        deadline = time.monotonic() + 300
        while sessions(sshd) < polled + 2 and watch.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)   # until the watch has polled over the master
        assert watch.poll() is None and sessions(sshd) >= polled + 2, "the watch never polled"
        assert sshd.drop_connections() >= 1
        while (any((sshd.runtime / "slurmkit").iterdir()) and sshd.connections() < 2
               and time.monotonic() < deadline):
            time.sleep(0.1)   # until the master has gone with its socket (unless a poll re-opened it
        release.touch()       # first): then the next ssh opens a new master with no error to see
        out, err = watch.communicate(timeout=300)
    finally:
        if watch.poll() is None:
            watch.kill()
    assert watch.returncode == 0, out + err
    assert f"{job_id} COMPLETED exit 0" in out
    assert err.count("dropped; re-opening it") == 1, err
    assert sshd.connections() == 2   # the first master, and the one re-opened


def test_logs_follow_and_cancel_over_the_connection(sshd, laptop, tmp_path):
    quick = job_id_of(slurmkit(laptop, "submit", str(staged_job(tmp_path / "quick", sleep_s=3)), "--remote", "local").stdout)
    followed = slurmkit(laptop, "logs", quick, "--remote", "local", "-f", timeout=120)
    assert followed.returncode == 0 and followed.stdout.strip() == "hello-from-the-cluster", followed.stdout + followed.stderr

    slow = job_id_of(slurmkit(laptop, "submit", str(staged_job(tmp_path / "slow", sleep_s=300)), "--remote", "local").stdout)
    cancelled = slurmkit(laptop, "cancel", slow, "--remote", "local")
    assert cancelled.returncode == 0 and cancelled.stdout.startswith(f"cancelled {slow} on {HOST_ALIAS}"), cancelled.stderr
    watched = slurmkit(laptop, "watch", slow, "--remote", "local", "--interval", "1")
    assert watched.returncode == 1 and f"{slow} CANCELLED" in watched.stdout
    assert sshd.connections() == 1


def test_status_remote_adopts_a_job_whose_submit_was_interrupted_by_its_token(sshd, laptop, tmp_path):
    """The laptop recorded the intent, sbatch ran on the cluster, the id never came back: the
    token, looked up on the cluster, gives the job to the registry."""
    from datetime import datetime, timedelta, timezone

    from slurmkit.slurm.registry import intent, record

    token = "remoteadopt" + os.urandom(4).hex()
    job_id = subprocess.run(["sbatch", "--parsable", "--hold", "-A", "def-test", "-t", "1", "-o", "/dev/null",
                             f"--comment=slurmkit:{token}", "--wrap", "true"], check=True, capture_output=True,
                            text=True).stdout.strip()
    try:
        then = (datetime.now(timezone.utc) - timedelta(minutes=20)).isoformat(timespec="seconds")
        record(intent("lost", str(sshd.scratch / "x" / "logs"), "local", token, remote=HOST_ALIAS)._replace(
            host="a-laptop", pid=None, submitted=then), Path(laptop["SLURMKIT_REGISTRY"]))
        status = slurmkit(laptop, "status", "--remote", "local")
        assert f"adopted job {job_id}" in status.stderr, status.stdout + status.stderr
        assert status.stdout.splitlines()[1].startswith(f"{job_id}\tlost\tPENDING")
    finally:
        subprocess.run(["scancel", job_id], check=False)


def _error_line(result) -> str:
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_an_unreachable_host_gives_one_line(sshd, laptop, tmp_path):
    closed = sshd.folder / "ssh_config_closed"
    closed.write_text(f"Host {HOST_ALIAS}\n  HostName 127.0.0.1\n  Port {free_port()}\n  BatchMode yes\n")
    config = Path(laptop["XDG_CONFIG_HOME"]) / "slurmkit" / "remote.yaml"
    config.write_text(yaml.safe_dump({"ssh_config": str(closed), "clusters": {"local": {"host": HOST_ALIAS}}}))
    line = _error_line(slurmkit(laptop, "status", "--remote", "local"))
    assert line.startswith(f"error: cannot reach {HOST_ALIAS} (") and "Connection refused" in line


def test_a_refused_key_gives_one_line(sshd, laptop, tmp_path):
    stranger = sshd.write_client_config("stranger_key", "ssh_config_stranger")
    config = Path(laptop["XDG_CONFIG_HOME"]) / "slurmkit" / "remote.yaml"
    config.write_text(yaml.safe_dump({"ssh_config": str(stranger), "clusters": {"local": {"host": HOST_ALIAS}}}))
    spec = staged_job(tmp_path / "project")
    line = _error_line(slurmkit(laptop, "submit", str(spec), "--remote", "local"))
    assert line.startswith(f"error: {HOST_ALIAS} refused authentication for {HOST_ALIAS} (")
    assert "Permission denied (publickey)" in line
    assert not Path(laptop["SLURMKIT_REGISTRY"]).exists()   # nothing was submitted, nothing recorded


def test_a_far_side_without_slurm_gives_one_line(sshd, laptop, tmp_path):
    """A host whose login shell finds no sbatch (here: sshd's second port, PATH=/nonexistent)."""
    bare = sshd.write_client_config("user_key", "ssh_config_bare", bare=True)
    config = Path(laptop["XDG_CONFIG_HOME"]) / "slurmkit" / "remote.yaml"
    config.write_text(yaml.safe_dump({"ssh_config": str(bare), "clusters": {"local": {"host": HOST_ALIAS}}}))
    line = _error_line(slurmkit(laptop, "status", "--remote", "local"))
    assert line.startswith(f"error: no SLURM on {HOST_ALIAS}: `sbatch` is not on the PATH of a login shell there")


def test_a_full_filesystem_on_the_far_side_gives_one_line(sshd, laptop, tmp_path):
    """The root on a 256 KiB tmpfs (ENOSPC, as a full scratch gives; a quota's EDQUOT takes the
    same path, tests/unit/test_remote.py): the copy fails with one line, nothing is submitted."""
    full = tmp_path / "full"
    full.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(full)], check=True)
    try:
        config = Path(laptop["XDG_CONFIG_HOME"]) / "slurmkit" / "remote.yaml"
        settings = yaml.safe_load(config.read_text())
        config.write_text(yaml.safe_dump({**settings, "root": str(full)}))
        spec = staged_job(tmp_path / "project")
        (spec.parent / "data.bin").write_bytes(os.urandom(1024 * 1024))
        line = _error_line(slurmkit(laptop, "submit", str(spec), "--remote", "local"))
        assert line.startswith(f"error: no space left on {HOST_ALIAS} (") and "No space left on device" in line
        assert f"free space under {full}" in line
        assert not Path(laptop["SLURMKIT_REGISTRY"]).exists()
    finally:
        subprocess.run(["umount", str(full)], check=True)


def test_a_sweep_that_must_be_split_is_refused_in_one_line_before_the_cluster_is_asked(sshd, laptop, tmp_path):
    """Local's largest array is 1001 tasks: 1002 points would need linked arrays, which only a
    submit on the cluster makes. No warning that "submit splits it" goes before the refusal."""
    folder = tmp_path / "project"
    folder.mkdir()
    spec = {"name": "wide", "profile": "local", "account": "def-test", "kind": "array", "resources": {"time": "5m"},
            "launch": {"shell": "echo $x"}, "array": {"parameters": {"x": list(range(1002))}}}
    (folder / "job.yaml").write_text(yaml.safe_dump(spec))
    refused = slurmkit(laptop, "submit", str(folder / "job.yaml"), "--remote", "local")
    assert refused.returncode != 0 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1, refused.stderr   # the one line, no "submit splits the sweep" warning
    assert refused.stderr.startswith("error: 1002 tasks are more than one array holds on local (1001), and --remote does not split")
    assert "run `slurmkit submit` on the cluster itself" in refused.stderr
    assert sshd.connections() == 0 and not Path(laptop["SLURMKIT_REGISTRY"]).exists()   # nothing asked, nothing recorded


def test_a_job_folder_over_the_size_limit_is_refused_with_advice(sshd, laptop, tmp_path):
    config = Path(laptop["XDG_CONFIG_HOME"]) / "slurmkit" / "remote.yaml"
    settings = yaml.safe_load(config.read_text())
    config.write_text(yaml.safe_dump({**settings, "max_sync_mb": 1}))
    spec = staged_job(tmp_path / "project")
    (spec.parent / "big.bin").write_bytes(os.urandom(2 * 1024 * 1024))
    result = slurmkit(laptop, "submit", str(spec), "--remote", "local")
    assert result.returncode == 2, result.stderr
    assert "over the 1 MiB limit (largest: big.bin (2 MiB)" in result.stderr
    assert "put big data on the cluster once" in result.stderr
    assert not any(sshd.scratch.rglob("big.bin"))


#: the job's payload writes what the sampler would on a node with nvidia-smi (the local nodes have
#: none): GPU 0 busy, GPU 1 idle, into the job's folder on the far side
FAKE_SAMPLES = r"""h=$(hostname -s); f="$SLURMKIT_JOB_DIR/$SLURM_JOB_ID.gpu.$h.csv"
for i in 1 2 3 4 5 6; do
  echo "2026/11/26 20:00:0$i.123, 0, GPU-8f1c0000-aaaa-bbbb-cccc-0123456789ab, Tesla P100-PCIE-16GB, 97, 4000, 16384, 200.50" >> "$f"
  echo "2026/11/26 20:00:0$i.123, 1, GPU-8f1c0001-aaaa-bbbb-cccc-0123456789ab, Tesla P100-PCIE-16GB, 0, 2, 16384, [N/A]" >> "$f"
done"""


def test_report_over_the_connection_reads_the_gpu_samples_on_the_cluster(sshd, laptop, tmp_path):
    folder = tmp_path / "gpu-project"
    folder.mkdir()
    (folder / "payload.sh").write_text(FAKE_SAMPLES + "\n")      # synced with the folder
    spec = {"name": "remote-gpu", "profile": "local", "account": "def-test", "resources": {"time": "1h", "gpus": "p100:2", "mem": "1G"},
            "launch": {"command": ["bash", "payload.sh"]}}
    (folder / "job.yaml").write_text(yaml.safe_dump(spec))
    done = slurmkit(laptop, "submit", str(folder / "job.yaml"), "--remote", "local", "--wait")
    assert done.returncode == 0, done.stdout + done.stderr
    job_id = job_id_of(done.stdout)
    assert "GPU use (2 GPUs, idle under" in done.stdout, done.stdout     # the report at the end of --wait
    report = slurmkit(laptop, "report", job_id, "--remote", "local")
    assert report.returncode == 0, report.stdout + report.stderr
    assert "GPU use (2 GPUs, idle under" in report.stdout and "IDLE" in report.stdout, report.stdout
    data = json.loads(slurmkit(laptop, "report", job_id, "--remote", "local", "--json").stdout)
    assert [g["index"] for g in data["gpu_use"][job_id]["gpus"]] == [0, 1], data.get("gpu_use")


def test_watch_over_remote_of_a_failed_job_shows_the_end_of_its_logs_read_on_the_cluster(sshd, laptop, tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    spec = {"name": "remote-fails", "profile": "local", "account": "def-test", "resources": {"time": "5m"},
            "launch": {"shell": "echo printed-there; echo broke-there >&2; exit 3"}}
    (folder / "job.yaml").write_text(yaml.safe_dump(spec))
    submitted = slurmkit(laptop, "submit", str(folder / "job.yaml"), "--remote", "local")
    assert submitted.returncode == 0, submitted.stderr
    job_id = job_id_of(submitted.stdout)
    watched = slurmkit(laptop, "watch", job_id, "--remote", "local", "--interval", "5")
    assert watched.returncode == 1, watched.stdout + watched.stderr
    remote_logs = json.loads(Path(laptop["SLURMKIT_REGISTRY"]).read_text().splitlines()[-1])["folder"]
    assert (f"job {job_id} FAILED exit 3\n--- stderr ({remote_logs}/{job_id}_0_log.err), its last 1 line ---\nbroke-there\n"
            f"--- stdout ({remote_logs}/{job_id}_0_log.out), its last 1 line ---\nprinted-there\n") in watched.stdout
