"""A failure reported with what explains it, on the real local cluster (Slurm 22.05): a function
job re-raises the user's own exception with the traceback from its node, a function job that
dies without one is JobFailed with its state, `submit --wait` shows what the job printed, and a
spec whose job would stop at once is refused before anything is recorded or queued."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import slurmkit
from slurmkit.slurm.raised import RemoteTraceback
from tests.integration.slurm import CLI, GUARD_S, wait_until

SPEC = {"name": "fn", "profile": "local", "account": "def-test", "resources": {"time": "5m", "mem": "500M"}}


def raises_value_error(text):
    raise ValueError(text)


def waits_after_writing(marker):
    Path(marker).write_text("started")
    import time

    time.sleep(600)   # the job's own payload: it is cancelled long before


def test_a_function_that_raises_value_error_re_raises_it_with_the_traceback_from_the_node(cluster, registry, tmp_path):
    handle = slurmkit.submit_function(raises_value_error, "x", spec=SPEC, folder=tmp_path / "fn")
    with pytest.raises(ValueError) as caught:
        handle.result()
    assert caught.value.args == ("x",)
    cause = caught.value.__cause__
    assert isinstance(cause, RemoteTraceback)
    assert "in raises_value_error" in cause.text and cause.text.rstrip().endswith("ValueError: x")
    if sys.version_info >= (3, 11):
        assert caught.value.__notes__ == [f"raised in slurmkit job {handle.job_id}, on its node; the traceback there is above"]
    assert handle.state == "FAILED"   # the job still failed, for status and watch


def test_a_cancelled_function_job_raises_job_failed_with_its_state(cluster, registry, tmp_path):
    marker = tmp_path / "started"
    handle = slurmkit.submit_function(waits_after_writing, str(marker), spec=SPEC, folder=tmp_path / "fn")
    wait_until(marker.exists, "the function's start")
    subprocess.run(["scancel", handle.job_id], check=True)
    with pytest.raises(slurmkit.JobFailed) as caught:
        handle.result()
    assert caught.value.status.state == "CANCELLED"
    assert str(caught.value).startswith(f"job {handle.job_id}: CANCELLED")
    assert caught.value.stderr_path == str(tmp_path / "fn" / f"{handle.job_id}_0_log.err")


def write_spec(tmp_path: Path, name: str, launch) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "profile": "local", "account": "def-test", "resources": {"time": "5m"},
                                    "launch": launch}))
    return path


def test_submit_wait_of_a_job_that_prints_then_exits_3_shows_what_it_printed(cluster, registry, tmp_path):
    spec = write_spec(tmp_path, "three", {"shell": "echo out-one; echo out-two; echo err-one >&2; exit 3"})
    result = subprocess.run([*CLI, "submit", str(spec), "--wait"], capture_output=True, text=True, timeout=GUARD_S)
    assert result.returncode == 1, result.stderr
    job_id = result.stdout.split()[2].rstrip(";")
    logs = tmp_path / "logs"
    assert (f"job {job_id} FAILED exit 3\n"
            f"--- stderr ({logs}/{job_id}_0_log.err), its last 1 line ---\nerr-one\n"
            f"--- stdout ({logs}/{job_id}_0_log.out), its last 2 lines ---\nout-one\nout-two\n") in result.stdout
    status = subprocess.run([*CLI, "status", job_id], capture_output=True, text=True, timeout=GUARD_S)
    assert f"hint: job {job_id} failed: its error and output: `slurmkit logs {job_id} --err`" in status.stderr


def test_a_spec_whose_job_would_stop_at_once_is_refused_by_submit_and_nothing_is_queued(cluster, registry, tmp_path):
    spec = write_spec(tmp_path, "predicted", "python3 run.py --seed $SLURM_ARRAY_TASK_ID")
    before = subprocess.run(["squeue", "-h", "-n", "predicted", "-o", "%i"], capture_output=True, text=True, check=True).stdout
    result = subprocess.run([*CLI, "submit", str(spec)], capture_output=True, text=True, timeout=GUARD_S)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"error: {spec}:2: launch.command: $SLURM_ARRAY_TASK_ID: SLURM sets it only in array jobs (kind 'array'), so under "
        "set -u the job stops with 'SLURM_ARRAY_TASK_ID: unbound variable'"]
    assert not registry.exists() or registry.read_text() == ""
    after = subprocess.run(["squeue", "-h", "-n", "predicted", "-o", "%i"], capture_output=True, text=True, check=True).stdout
    assert after == before == ""


def test_single_quotes_keep_a_dollar_for_the_programs_own_shell_as_bash_does(cluster, registry, tmp_path):
    """The issue's case: bash -c 'for i in 1 2; ...$i...' ran its loop instead of stopping with
    'i: unbound variable'."""
    spec = write_spec(tmp_path, "loop", "bash -c 'for i in 1 2; do echo item-$i; done'")
    result = subprocess.run([*CLI, "submit", str(spec), "--wait"], capture_output=True, text=True, timeout=GUARD_S)
    assert result.returncode == 0, result.stdout + result.stderr
    job_id = result.stdout.split()[2].rstrip(";")
    assert (tmp_path / "logs" / f"{job_id}_0_log.out").read_text() == "item-1\nitem-2\n"
