"""Which source says how a job ended, on the real local cluster (Slurm 22.05): a cancel while
accounting is held is never FAILED, an id SLURM never had is said to be so, and an array's logs
are every task's.

The cancel test holds slurmdbd (SIGSTOP), then the controller too, so that the job's exit file
(the TERM trap's 143) is the only source that answers; it waits on events (the payload's start,
the exit file, the watch's line), never on time.
"""

import json
import os
import re
import subprocess

from tests.integration.slurm import CLI, GUARD_S, local_job, read_until, wait_until

from .conftest import paused
from .test_monitor import cli, one_error_line


def status_row(job_id):
    result, _ = cli("status", job_id, "--json", timeout=GUARD_S)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["jobs"][0]


def accounting_says(job_id, state):
    out = subprocess.run(["sacct", "-n", "-X", "-P", "-o", "State", "-j", job_id], capture_output=True, text=True).stdout
    return out.strip().startswith(state)


def test_a_cancel_while_accounting_is_held_is_never_failed_and_ends_cancelled_once_sacct_answers(cluster, registry, tmp_path):
    """sacct silent (slurmdbd held), then the controller held too: the exit file's 143 alone says
    ENDING, never FAILED, in ``status`` and in a ``watch``; the controller back, CANCELLED; sacct
    back, CANCELLED by signal 15 (exit 143) from accounting."""
    marker = tmp_path / "started"
    handle = local_job(tmp_path, "cl", command=["bash", "-c", f"touch {marker}; exec sleep 600"]).submit()
    job = handle.job_id
    wait_until(marker.exists, "the payload's start")
    watcher = None
    try:
        with paused(cluster, "slurmdbd"):
            subprocess.run(["scancel", job], check=True)
            wait_until((handle.paths.folder / f"{job}.exit").exists, "the TERM trap's exit file")
            with paused(cluster, "slurmctld"):
                alone = status_row(job)
                watcher = subprocess.Popen([*CLI, "watch", job, "--interval", "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                out = bytearray()
                assert read_until({watcher.stdout.fileno(): out}, lambda: re.search(rf"^\S+ {job} \w+".encode(), out, re.M))
            assert (alone["state"], alone["exit"], alone["source"]) == ("ENDING", "", "exit-file"), alone
            said_while_held = out.decode()
            assert f" {job} ENDING (its exit file says 143, signal 15: waiting for SLURM to say why)" in said_while_held
            controller = status_row(job)
        wait_until(lambda: accounting_says(job, "CANCELLED"), "accounting's record of the cancel")
        accounting = status_row(job)
        rest, err = watcher.communicate(timeout=GUARD_S)
    finally:
        if watcher is not None and watcher.poll() is None:
            watcher.kill()
        subprocess.run(["scancel", job], check=False)
    assert (controller["state"], controller["exit"], controller["source"]) == ("CANCELLED", "by signal 15 (exit 143)", "squeue")
    assert (accounting["state"], accounting["exit"], accounting["source"]) == ("CANCELLED", "by signal 15 (exit 143)", "sacct")
    assert (accounting["exit_code"], accounting["signal"]) == (143, 15)
    said = said_while_held + rest.decode()
    assert "FAILED" not in said, said
    assert re.search(rf"^\S+ {job} CANCELLED by signal 15 \(exit 143\)$", said, re.M), (said, err)
    assert watcher.returncode == 1


def test_status_and_cancel_of_an_id_slurm_never_had_say_so_and_exit_1(cluster, registry):
    for command in (["status", "99997"], ["status", "99997", "--json"], ["cancel", "99997"]):
        result, _ = cli(*command)
        assert result.returncode == 1, (command, result.stdout)
        assert "cancelled" not in result.stdout and "exit 0" not in result.stdout, result.stdout
        said = one_error_line(result) if "--json" not in command else json.loads(result.stdout)["jobs"][0]["state"]
        assert said in ("error: job 99997: SLURM knows no such job: check the id (`slurmkit status` lists yours)", "UNKNOWN")


def test_logs_of_a_finished_three_task_array_shows_all_three(cluster, registry, tmp_path):
    sweep = local_job(tmp_path, "lg", kind="array", array={"parameters": {"word": ["alpha", "beta", "gamma"]}},
                      launch={"shell": 'echo "task $SLURM_ARRAY_TASK_ID says $word"'}).submit()
    assert [t.wait(1.0).state for t in sweep.tasks] == ["COMPLETED"] * 3
    env = {**os.environ, "NO_COLOR": "1"}
    shown = subprocess.run([*CLI, "logs", sweep.job_id], capture_output=True, text=True, env=env, timeout=120)
    assert shown.returncode == 0 and shown.stderr == "", shown.stderr
    for task, word in enumerate(["alpha", "beta", "gamma"]):
        assert f"==> {sweep.job_id}_{task} <==\ntask {task} says {word}\n" in shown.stdout, shown.stdout
    one = subprocess.run([*CLI, "logs", sweep.job_id, "--task", "1"], capture_output=True, text=True, env=env, timeout=120)
    assert (one.returncode, one.stdout) == (0, "task 1 says beta\n"), one.stderr
