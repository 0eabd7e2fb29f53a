"""A job at a glance and scripted, on the real local cluster (Slurm 22.05): a pending job says why
it waits (Dependency, then JobHeldUser once held) in ``status`` and ``status --json``;
``submit --json`` and ``--parsable`` print an id the controller knows; ``watch --json`` prints
a line per change and ends in COMPLETED. Every wait is on a state SLURM reports, never a sleep.
"""

import json
import subprocess

from tests.integration.slurm import CLI, GUARD_S, local_job, wait_until


def cli(*args):
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=GUARD_S)


def squeue_reason(job_id: str) -> str:
    return subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%r"], capture_output=True, text=True).stdout.strip()


def test_a_pending_job_says_why_it_waits_in_status_and_status_json(cluster, registry, tmp_path):
    blocker = subprocess.run(["sbatch", "--parsable", "--hold", "-A", "def-test", "-t", "5", "--wrap", "true"],
                             capture_output=True, text=True, check=True).stdout.strip().split(";")[0]
    job = None
    try:
        local_job(tmp_path, "waits", time_limit="90m")
        submitted = cli("submit", str(tmp_path / "waits.yaml"), "--after", blocker, "--json")
        assert submitted.returncode == 0, submitted.stderr
        doc = json.loads(submitted.stdout)
        job = doc["job"]
        assert (doc["array_size"], doc["chain"], doc["profile"], doc["recorded"]) == (None, [], "local", True)
        assert doc["logs"][0]["stdout"].startswith(doc["log_folder"])
        wait_until(lambda: squeue_reason(job) == "Dependency", "the controller's Dependency reason")
        table = cli("status", job)
        header, row = table.stdout.splitlines()
        cells = dict(zip(header.split("\t"), row.split("\t")))
        assert (cells["state"], cells["limit"], cells["reason"]) == (
            "PENDING", "1:30:00", "Dependency: waiting for the jobs it depends on (--after) to end"), table.stdout
        subprocess.run(["scontrol", "uhold", job], check=True)   # hold, as run by an operator, is JobHeldAdmin
        wait_until(lambda: squeue_reason(job) == "JobHeldUser", "the controller's JobHeldUser reason")
        row = json.loads(cli("status", job, "--json").stdout)["jobs"][0]
        assert (row["state"], row["reason"], row["reason_text"], row["time_left"]) == (
            "PENDING", "JobHeldUser", "held by its owner: `scontrol release ID` lets it start", "1:30:00"), row
    finally:
        subprocess.run(["scancel", blocker, *([job] if job else [])], check=False)


def test_submit_parsable_prints_an_id_the_controller_knows_and_watch_json_ends_in_completed(cluster, registry, tmp_path):
    local_job(tmp_path, "short", command=["true"])
    submitted = cli("submit", str(tmp_path / "short.yaml"), "--parsable")
    assert submitted.returncode == 0, submitted.stderr
    job = submitted.stdout.strip()
    assert submitted.stdout == f"{job}\n" and job.isdigit()
    known = subprocess.run(["squeue", "-h", "-t", "all", "-j", job, "-o", "%i"], capture_output=True, text=True).stdout.strip()
    assert known == job
    watched = cli("watch", job, "--json", "--interval", "5")
    assert watched.returncode == 0, watched.stderr
    lines = [json.loads(line) for line in watched.stdout.splitlines()]
    changes = [(line["state"], line["reason"]) for line in lines if line["event"] == "state"]
    assert all(a != b for a, b in zip(changes, changes[1:])), changes   # a line per change, none repeated
    assert changes[-1][0] == "COMPLETED" and lines[-1]["event"] == "end" and lines[-1]["ok"] is True, lines
    assert [row["state"] for row in lines[-1]["jobs"]] == ["COMPLETED"]
