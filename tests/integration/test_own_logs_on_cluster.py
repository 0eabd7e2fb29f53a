"""A spec's own log names (logs.output, logs.error) on the real cluster: sbatch writes there,
slurmkit makes the folder first, and `slurmkit logs`, `status` and the handles find them.

Measured on Debian's Slurm 22.05.8 (tests/cluster): with a log folder that is not there, the
job ends FAILED (exit 0:53) and writes no log anywhere, which is why submit makes it.
"""

import json
import re
import subprocess

import pytest
import yaml

from slurmkit.slurm.registry import submissions

from .slurm import CLI, local_job, wait_until


@pytest.fixture
def registry(tmp_path, monkeypatch):
    path = tmp_path / "registry.jsonl"
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(path))
    return path


def _submit(spec_path, *more):
    done = subprocess.run([*CLI, "submit", str(spec_path), "--wait", *more], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return re.search(r"submitted job (\d+)", done.stdout).group(1)


def _cli(*args):
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


def test_submit_writes_the_specs_logs_in_a_folder_it_makes_and_logs_shows_them(cluster, registry, tmp_path):
    spec = tmp_path / "mine.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "mine", "profile": "local", "account": "def-test", "resources": {"time": "5m"},
        "launch": {"command": ["bash", "-c", "echo out-line; echo err-line >&2"]},
        "logs": {"output": "logs/%x-%j.out", "error": "logs/%x-%j.err"}}))
    assert not (tmp_path / "logs").exists()
    job_id = _submit(spec, "--folder", str(tmp_path / "sk"))
    assert (tmp_path / "logs" / f"mine-{job_id}.out").read_text() == "out-line\n"
    assert (tmp_path / "logs" / f"mine-{job_id}.err").read_text() == "err-line\n"
    assert not list((tmp_path / "sk").glob("*_log.*"))           # slurmkit's own names are not used ...
    assert (tmp_path / "sk" / f"{job_id}.exit").exists()            # ... its exit file stays its own
    assert _cli("logs", job_id).stdout == "out-line\n"
    assert _cli("logs", job_id, "--err").stdout == "err-line\n"
    rows = json.loads(_cli("status", job_id, "--json").stdout)["jobs"]
    assert [(row["state"], row["exit_code"], row["log"]) for row in rows] == [
        ("COMPLETED", 0, str(tmp_path / "logs" / f"mine-{job_id}.out"))]


def test_an_array_with_task_ids_in_its_log_name_shows_each_tasks_log(cluster, registry, tmp_path):
    spec = tmp_path / "sweep.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "sweep", "profile": "local", "account": "def-test", "kind": "array", "resources": {"time": "5m"},
        "array": {"parameters": {"word": ["alpha", "beta"]}}, "launch": {"shell": 'echo "task $word"'},
        "logs": {"output": "out/%x.o%A-%a", "error": "out/%x.e%A-%a"}}))
    job_id = _submit(spec)
    for task, word in enumerate(("alpha", "beta")):
        assert (tmp_path / "out" / f"sweep.o{job_id}-{task}").read_text() == f"task {word}\n"
        assert _cli("logs", f"{job_id}_{task}").stdout == f"task {word}\n"


def test_the_python_handle_reads_the_specs_logs(cluster, registry, tmp_path):
    handle = local_job(tmp_path, name="py", command=["bash", "-c", "echo from-python; exit 3"],
                       logs={"output": "plain/%x-%j.txt"}).submit()
    status = handle.wait(0.5)
    assert (status.state, status.exit_code) == ("FAILED", 3)
    path = tmp_path / "plain" / f"py-{handle.job_id}.txt"
    wait_until(path.exists, "the job's log")
    assert handle.stdout() == "from-python\n" == path.read_text()
    assert handle.stderr() is None                      # no logs.error: stderr is in the output log
    assert [r.logs for r in submissions(registry)] == [[str(tmp_path / "plain" / "py-%j.txt")]]


def test_plain_sbatch_into_a_missing_log_folder_fails_and_writes_no_log(cluster, tmp_path):
    """Why submit makes the folder: sbatch itself accepts the job, which then fails at its start
    (Slurm 22.05: FAILED, exit 0:53) and leaves no log anywhere."""
    done = subprocess.run(["sbatch", "--parsable", "-A", "def-test", "--output=missing/%j.out", "--wrap", "echo hi"],
                          cwd=tmp_path, capture_output=True, text=True, check=True)
    job_id = done.stdout.strip().split(";")[0]

    def ended():
        line = subprocess.run(["sacct", "-X", "-n", "-P", "-j", job_id, "-o", "State,ExitCode"], capture_output=True,
                              text=True).stdout.strip()
        return line if line and not line.startswith(("PENDING", "RUNNING")) else None
    assert wait_until(ended, "the job's end") == "FAILED|0:53"
    assert list(tmp_path.rglob("*")) == []
