"""Submission and monitoring against the real cluster, with accounting on and off."""

import json
import os
import re
import signal
import subprocess
import threading

import pytest
import yaml

from slurmkit.slurm.monitor import Watch, poll
from slurmkit.slurm.registry import submissions
from slurmkit.slurm.slurmcli import SchedulerError

from .conftest import CLUSTER_SCRIPT
from .slurm import CLI, GUARD_S, wait_until
from .slurm import local_job as job


@pytest.fixture
def registry(tmp_path, monkeypatch):
    path = tmp_path / "registry.jsonl"
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(path))
    return path




def test_submit_and_wait_reaches_completed_with_exit_code_zero(cluster, registry, tmp_path):
    handle = job(tmp_path, command=["bash", "-c", "echo hello"]).submit()
    status = handle.wait(0.5)
    assert (status.state, status.exit_code) == ("COMPLETED", 0)
    assert handle.stdout() == "hello\n"
    assert handle.nodes in ("node1", "node2")
    assert [s.job_id for s in submissions(registry)] == [handle.job_id]


def test_a_failing_command_ends_failed_with_its_exit_code(cluster, registry, tmp_path):
    status = job(tmp_path, command=["bash", "-c", "exit 7"]).submit().wait(0.5)
    assert (status.state, status.exit_code) == ("FAILED", 7)


def test_cancel_ends_cancelled(cluster, registry, tmp_path):
    """Cancelled once its payload runs, which the payload itself marks (RUNNING comes before the
    batch script has set its traps, and a busy cluster may keep the job pending for minutes):
    the script's TERM trap writes exit 143 to the exit file, and the job still ends CANCELLED.
    The payload never ends by itself, so only the cancel can end it within the guard."""
    started = tmp_path / "started"
    handle = job(tmp_path, command=["bash", "-c", f"touch {started}; exec sleep 3600"]).submit()
    wait_until(started.exists, "the payload's start")
    handle.cancel()
    final = handle.wait(0.5, timeout=GUARD_S)
    assert final.state == "CANCELLED", final


# A job past its true 1-minute limit ends TIMEOUT: test_gpu_sampler.py's
# test_a_job_at_its_time_limit_stops_the_sampler waits for the same `sleep 300` under a 1-minute
# limit through the same handle and asserts TIMEOUT (a second wait of 60-90 s here added nothing);
# tests/faults/test_copy_back.py's one-minute test ends a job without GPUs at its limit.


def test_a_50_point_sweep_is_one_array_and_each_task_gets_its_point(cluster, registry, tmp_path):
    spec = job(tmp_path, name="sweep", kind="array", command=["bash", "-c", "echo $lr:$seed"],
               array={"parameters": {"lr": [f"0.{i}" for i in range(10)], "seed": [1, 2, 3, 4, 5]}})
    handle = spec.submit()
    assert len(submissions(registry)) == 1 and handle.size == 50
    statuses = handle.wait(1.0)
    assert sorted(s.state for s in statuses.values()) == ["COMPLETED"] * 50
    outputs = [task.stdout().strip() for task in handle.tasks]
    assert outputs == [f"0.{i}:{s}" for i in range(10) for s in range(1, 6)]


def test_a_dependency_chain_runs_in_order(cluster, registry, tmp_path):
    marker = tmp_path / "first-done"
    first = job(tmp_path, name="first", command=["bash", "-c", f"sleep 3; touch {marker}"]).submit()
    second = job(tmp_path, name="second", command=["test", "-e", str(marker)]).submit(after=[first.job_id])
    failing = job(tmp_path, name="third", command=["false"]).submit(after=[second.job_id])
    only_if_failed = job(tmp_path, name="fourth", command=["true"]).submit(after=[failing.job_id], after_type="notok")
    assert second.wait(0.5).state == "COMPLETED"   # it ran after the marker existed
    assert failing.wait(0.5).state == "FAILED"
    assert only_if_failed.wait(0.5).state == "COMPLETED"
    assert [s.after for s in submissions(registry)] == [None, first.job_id, second.job_id, failing.job_id]


def test_dry_run_asks_the_controller_and_queues_nothing(cluster, registry, tmp_path):
    answer = job(tmp_path).test_only()
    assert re.match(r"Job \d+ to start at \S+ using 1 processors on nodes node\d in partition compute", answer)
    assert submissions(registry) == []


def test_a_refused_submission_is_one_line_exit_1_and_not_recorded(cluster, registry, tmp_path):
    spec = tmp_path / "bad.yaml"
    spec.write_text(yaml.safe_dump({"name": "bad", "profile": "local", "account": "def-nobody",
                                    "resources": {"time": "5m"}, "launch": {"command": "true"}}))
    result = subprocess.run([*CLI, "submit", str(spec)], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.startswith("error: sbatch refused the job: ") and "Invalid account" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert submissions(registry) == []


def test_eight_concurrent_submits_are_each_recorded_once(cluster, registry, tmp_path):
    spec = tmp_path / "c.yaml"
    spec.write_text(yaml.safe_dump({"name": "c", "profile": "local", "account": "def-test",
                                    "resources": {"time": "5m"}, "launch": {"command": "true"}}))
    procs = [subprocess.Popen([*CLI, "submit", str(spec)], stdout=subprocess.PIPE, text=True)
             for _ in range(8)]
    printed = [re.search(r"submitted job (\d+)", p.communicate()[0]).group(1) for p in procs]
    recorded = [s.job_id for s in submissions(registry)]
    assert sorted(recorded) == sorted(printed) and len(set(recorded)) == 8
    assert len(registry.read_text().splitlines()) == 16   # each an intent (before sbatch) and its job record


# ------------------------------------------------------------------------- without accounting

def _daemon_pid(cluster, name):
    return int((cluster.base / "run" / f"{name}.pid").read_text())


def restart_cluster() -> None:
    """``cluster.sh up`` starts whatever daemon is not running (it is idempotent)."""
    subprocess.run(["bash", str(CLUSTER_SCRIPT), "up"], check=True, capture_output=True, timeout=GUARD_S)


@pytest.fixture
def accounting_down(cluster):
    """slurmdbd stopped for the test (sacct fails) and brought back afterwards, even on failure."""
    os.kill(_daemon_pid(cluster, "slurmdbd"), signal.SIGTERM)
    try:
        wait_until(lambda: subprocess.run(["sacct", "-n", "-j", "1"], capture_output=True).returncode != 0, "sacct's failure")
        yield
    finally:
        restart_cluster()


def test_without_accounting_jobs_still_reach_their_terminal_states_and_codes(cluster, registry, tmp_path, accounting_down):
    """The cancelled job is cancelled before it can start (held): one cancelled while it runs is
    the next test's."""
    ok = job(tmp_path, name="ok", command=["true"]).submit()
    bad = job(tmp_path, name="bad", command=["bash", "-c", "exit 5"]).submit()
    held = job(tmp_path, name="held", command=["true"], extra_directives=["--hold"]).submit()
    held.cancel()
    final = {}
    for final in Watch([ok.job_id, bad.job_id, held.job_id], interval=1.0,
                       folders={h.job_id: str(h.paths.folder) for h in (ok, bad, held)}):
        pass
    assert (final[ok.job_id].state, final[ok.job_id].exit_code) == ("COMPLETED", 0)
    assert (final[bad.job_id].state, final[bad.job_id].exit_code) == ("FAILED", 5)
    assert final[held.job_id].state == "CANCELLED"
    assert {s.source for s in final.values()} <= {"squeue", "exit-file"}


def test_without_accounting_a_job_cancelled_while_it_runs_ends_cancelled(cluster, registry, tmp_path, accounting_down):
    """Its batch script's TERM trap writes exit 143 at once; the controller says COMPLETING until
    the job's processes are gone, which takes KillWait (30 s) here: the payload ignores SIGTERM,
    so that every poll of the watch comes while the job completes, not only an unlucky one."""
    started = tmp_path / "started"
    running = job(tmp_path, name="running", command=["bash", "-c", f"trap '' TERM; touch {started}; exec sleep 3600"]).submit()
    wait_until(started.exists, "the payload's start")
    running.cancel()
    final = {}
    for final in Watch([running.job_id], interval=1.0, folders={running.job_id: str(running.paths.folder)}):
        pass
    assert final[running.job_id].state == "CANCELLED", final


def test_the_exit_file_answers_when_neither_accounting_nor_the_controller_remembers(cluster, registry, tmp_path):
    handle = job(tmp_path, name="f", command=["bash", "-c", "exit 9"]).submit()
    handle.wait(0.5)
    def unreachable(argv):
        raise SchedulerError("down")

    status = poll([handle.job_id], {handle.job_id: str(handle.paths.folder)}, run=unreachable)[handle.job_id]
    assert (status.state, status.exit_code, status.source) == ("FAILED", 9, "exit-file")


def test_a_controller_restart_during_a_watch_loses_no_job(cluster, registry, tmp_path):
    """The job runs from before the controller stops until after it is back (it ends when the
    test says so), and the watch polls it while the controller is away."""
    started, finish = tmp_path / "started", tmp_path / "finish"
    handle = job(tmp_path, name="r", command=["bash", "-c", f"touch {started}; until [ -e {finish} ]; do sleep 0.2; done"]).submit()
    watch = Watch([handle.job_id], interval=2.0, folders={handle.job_id: str(handle.paths.folder)})
    results = []
    watcher = threading.Thread(target=lambda: results.extend(watch), daemon=True)
    wait_until(started.exists, "the job's start")
    watcher.start()
    controller = _daemon_pid(cluster, "slurmctld")
    try:
        wait_until(lambda: results, "the watch's first poll")
        os.kill(controller, signal.SIGTERM)
        wait_until(lambda: not os.path.exists(f"/proc/{controller}"), "the controller's end")
        polls = watch.polls
        wait_until(lambda: watch.polls > polls + 1, "a poll with the controller away")
    finally:
        restart_cluster()
    finish.write_text("")
    watcher.join(timeout=GUARD_S)
    assert not watcher.is_alive()
    final = results[-1][handle.job_id]
    assert (final.state, final.exit_code) == ("COMPLETED", 0)


def test_submit_function_runs_a_callable_in_the_specs_environment(cluster, registry, tmp_path):
    from slurmkit.api.functions import submit_function

    spec = {"name": "fn", "profile": "local", "account": "def-test", "resources": {"time": "5m", "mem": "500M"},
            "environment": {"modules": ["python/3.11"], "variables": {"SK_VALUE": "it's $here"}}, "launch": "unused"}
    value = submit_function(os.getenv, "SK_VALUE", spec=spec, folder=tmp_path / "fn")
    python = submit_function(os.getenv, "EBVERSIONPYTHON", spec=spec, folder=tmp_path / "fn")
    assert value.result() == "it's $here"           # the spec's variables, quoted literally
    assert python.result() == "3.11.5"              # the spec's modules were loaded
    assert python.state == "COMPLETED"


def test_cli_submit_wait_status_and_logs_from_another_process(cluster, registry, tmp_path):
    spec = tmp_path / "cli.yaml"
    spec.write_text(yaml.safe_dump({"name": "cli", "profile": "local", "account": "def-test", "resources": {"time": "5m"},
                                    "launch": {"command": ["bash", "-c", "echo out-line; echo err-line >&2"]}}))
    cli = CLI
    waited = subprocess.run([*cli, "submit", str(spec), "--wait"], capture_output=True, text=True, timeout=180)
    assert waited.returncode == 0, waited.stderr
    job_id = re.search(r"submitted job (\d+)", waited.stdout).group(1)
    assert re.search(rf"^\S+ {job_id} COMPLETED exit 0$", waited.stdout, re.M)
    assert f"Job ID: {job_id}\nState: COMPLETED (exit code 0)\n" in waited.stdout   # the efficiency report
    status = json.loads(subprocess.run([*cli, "status", job_id, "--json"], capture_output=True, text=True, check=True).stdout)["jobs"]
    assert [(row["job"], row["name"], row["state"], row["exit_code"]) for row in status] == [(job_id, "cli", "COMPLETED", 0)]
    assert subprocess.run([*cli, "logs", job_id], capture_output=True, text=True).stdout == "out-line\n"
    assert subprocess.run([*cli, "logs", job_id, "--err"], capture_output=True, text=True).stdout == "err-line\n"
    failing = subprocess.run([*cli, "watch", job_id, "--interval", "1"], capture_output=True, text=True, timeout=60)
    assert failing.returncode == 0   # watching a finished, completed job returns at once with its verdict
