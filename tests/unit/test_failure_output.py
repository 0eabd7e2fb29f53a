"""A failure shown with what explains it, without a cluster: the ends of a job's stderr and
stdout (labelled, with their files, at the spec's own log names), JobFailed's attributes, the
watch's and status's lines, and a function job's exception carried back from the node as itself
(the node side run for real in a subprocess that cannot import slurmkit). The cluster tests:
tests/faults/test_failure_output.py."""

import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import cloudpickle
import pytest

from slurmkit.cli import views
from slurmkit.slurm.jobfiles import TAIL_BYTES, LogTail, log_tails, read_tail, tail_lines
from slurmkit.slurm.monitor import JobStatus
from slurmkit.slurm.outcomes import JobFailed, script_result
from slurmkit.slurm.raised import RemoteTraceback, carrying, raised_path, read_raised
from slurmkit.slurm.submit import function_result


def write_logs(folder: Path, job_id: str, out: str = "", err: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{job_id}_0_log.out").write_text(out)
    (folder / f"{job_id}_0_log.err").write_text(err)


def test_job_failed_shows_the_last_lines_of_stderr_and_stdout_with_their_files(tmp_path):
    write_logs(tmp_path, "5", out="".join(f"o{i}\n" for i in range(30)), err="boom\n")
    failure = JobFailed(JobStatus("5", "FAILED", 3), tails=log_tails(tmp_path, "5"))
    text = str(failure)
    assert text.startswith("job 5: FAILED exit 3\n")
    assert f"--- stderr ({tmp_path}/5_0_log.err), its last 1 line ---\nboom\n" in text
    assert f"--- stdout ({tmp_path}/5_0_log.out), its last 20 lines ---\no10\n" in text and text.endswith("o29")
    assert "o9\n" not in text
    assert (failure.stderr_tail, failure.stdout_tail.splitlines()[0]) == ("boom", "o10")
    assert (failure.stderr_path, failure.stdout_path) == (f"{tmp_path}/5_0_log.err", f"{tmp_path}/5_0_log.out")
    assert failure.log_tail == "boom" and failure.exit_status == 3


def test_a_script_jobs_failure_reads_its_logs_where_the_spec_named_them(tmp_path):
    (tmp_path / "mine-7.txt").write_text("printed\nthen failed\n")
    handle = SimpleNamespace(job_id="7", paths=SimpleNamespace(folder=tmp_path), logs=(str(tmp_path / "mine-%j.txt"),),
                             stdout=lambda: None, stderr=lambda: None)
    with pytest.raises(JobFailed) as caught:
        script_result(handle, JobStatus("7", "FAILED", 3))
    (tail,) = caught.value.tails   # no logs.error: sbatch joins stderr to the output
    assert tail == LogTail("output", str(tmp_path / "mine-7.txt"), "printed\nthen failed")
    assert caught.value.stderr_tail == caught.value.stdout_tail == "printed\nthen failed"


def test_missing_and_empty_logs_are_said_so_not_left_out(tmp_path):
    (tmp_path / "9_0_log.err").write_text("")
    assert tail_lines(log_tails(tmp_path, "9")) == [f"--- stderr: {tmp_path}/9_0_log.err is empty ---",
                                                    f"--- stdout: no log at {tmp_path}/9_0_log.out ---"]


def test_a_huge_log_is_read_from_its_end_only(tmp_path):
    log = tmp_path / "big.out"
    log.write_bytes(b"x" * (TAIL_BYTES * 8) + b"\nlast\n")
    assert read_tail(log, 1) == "last"
    os.mkfifo(tmp_path / "pipe.out")
    reader = threading.Thread(target=lambda: read_tail(tmp_path / "pipe.out", 5), daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "a pipe put in a log's place is not waited on"


def test_the_watch_shows_each_failed_jobs_logs_and_names_the_rest(tmp_path):
    record = SimpleNamespace(folder=str(tmp_path), logs=())
    statuses = {str(i): JobStatus(str(i), "FAILED", 1) for i in range(1, 6)}
    statuses["6"] = JobStatus("6", "COMPLETED", 0)
    statuses["7"] = JobStatus("7", "CANCELLED")
    write_logs(tmp_path, "1", out="hello\n", err="Traceback: bad\n")
    lines = views.failure_lines(statuses, {job_id: record for job_id in statuses})
    assert lines[:4] == ["job 1 FAILED exit 1", f"--- stderr ({tmp_path}/1_0_log.err), its last 1 line ---", "Traceback: bad",
                         f"--- stdout ({tmp_path}/1_0_log.out), its last 1 line ---"]
    assert sum(line.startswith("job ") for line in lines) == views.SHOWN_FAILURES
    assert lines[-1].startswith("2 more failed (4 5): `slurmkit logs ID`")
    assert views.failure_lines({"6": statuses["6"], "7": statuses["7"]}, {}) == []


def test_status_of_one_failed_job_points_at_its_logs():
    failed = {"4": JobStatus("4", "OUT_OF_MEMORY")}
    assert views.failure_hint(["4"], failed) == "hint: job 4 failed: its error and output: `slurmkit logs 4 --err`, `slurmkit logs 4`"
    assert views.failure_hint([], failed) is None
    assert views.failure_hint(["4"], {"4": JobStatus("4", "COMPLETED", 0)}) is None
    # status of a job that completed says nothing of another failed job polled beside it
    assert views.failure_hint(["3"], {"3": JobStatus("3", "COMPLETED", 0), **failed}) is None


# ------------------------------------------------------------------ a function's exception


class Unpicklable(Exception):
    def __init__(self, text):
        super().__init__(text)
        self.lock = threading.Lock()


def raises_value_error(value):
    raise ValueError(value, 42)


def run_on_a_node(fn, folder: Path, job_id: str = "77") -> subprocess.CompletedProcess:
    """``fn`` wrapped and pickled as submit_function does, run where slurmkit cannot be imported
    (this module's functions pickled by value, as a notebook's are), with the variables
    submitit's job environment reads."""
    env = {**os.environ, "SUBMITIT_EXECUTOR": "slurm", "SLURM_JOB_ID": job_id, "SUBMITIT_FOLDER": str(folder), "SLURM_PROCID": "0"}
    env.pop("PYTHONPATH", None)
    code = "import pickle, sys; sys.modules['slurmkit'] = None; pickle.loads(sys.stdin.buffer.read())()"
    call = carrying(fn)
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        pickled = cloudpickle.dumps(lambda: call("x"))
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    return subprocess.run([sys.executable, "-c", code], input=pickled, capture_output=True, env=env, cwd=folder)


def test_what_a_function_raises_on_the_node_comes_back_as_itself_with_its_traceback(tmp_path):
    result = run_on_a_node(raises_value_error, tmp_path)
    assert result.returncode == 1 and b"ValueError: ('x', 42)" in result.stderr   # the job still fails
    raised = read_raised(tmp_path / "77_0_result.pkl")
    assert type(raised.error) is ValueError and raised.error.args == ("x", 42)
    assert "in raises_value_error" in raised.traceback and "carrying" not in raised.traceback


def test_an_exception_that_cannot_be_pickled_still_sends_its_traceback(tmp_path):
    def fails(value):
        raise Unpicklable(value)

    run_on_a_node(fails, tmp_path)
    raised = read_raised(tmp_path / "77_0_result.pkl")
    assert raised.error is None and "Unpicklable: x" in raised.traceback
    assert raised.why.endswith("Unpicklable it raised could not be pickled on the node")


def function_handle(tmp_path, job_id="77"):
    return SimpleNamespace(job_id=job_id, paths=SimpleNamespace(folder=tmp_path, result_pickle=tmp_path / f"{job_id}_0_result.pkl"),
                           logs=())


def test_result_raises_the_users_exception_with_the_remote_traceback_as_its_cause(tmp_path):
    run_on_a_node(raises_value_error, tmp_path)
    with pytest.raises(ValueError) as caught:
        function_result(function_handle(tmp_path), JobStatus("77", "FAILED", 1), lambda: pytest.fail("nothing to return"))
    cause = caught.value.__cause__
    assert isinstance(cause, RemoteTraceback) and "in raises_value_error\nValueError: ('x', 42)" in cause.text
    if sys.version_info >= (3, 11):
        assert caught.value.__notes__ == ["raised in slurmkit job 77, on its node; the traceback there is above"]


def test_an_exception_that_cannot_be_rebuilt_here_is_job_failed_with_the_traceback(tmp_path):
    write_logs(tmp_path, "77", out="started\n", err="")
    path = raised_path(tmp_path / "77_0_result.pkl")
    path.write_bytes(pickle.dumps((b"not a pickle", "Traceback ...\nmymod.Odd: x\n", "mymod.Odd")))
    with pytest.raises(JobFailed) as caught:
        function_result(function_handle(tmp_path), JobStatus("77", "FAILED", 1), lambda: None)
    text = str(caught.value)
    assert text.startswith("job 77: FAILED exit 1; the mymod.Odd it raised cannot be rebuilt here")
    assert "--- the traceback on the node ---\nTraceback ...\nmymod.Odd: x" in text and caught.value.stdout_tail == "started"


@pytest.mark.parametrize("state", ["OUT_OF_MEMORY", "CANCELLED", "TIMEOUT"])
def test_a_function_job_that_died_without_an_exception_is_job_failed_with_its_state(tmp_path, state):
    write_logs(tmp_path, "77", out="", err="slurmstepd: error: Detected 1 oom_kill event\n")
    with pytest.raises(JobFailed) as caught:
        function_result(function_handle(tmp_path), JobStatus("77", state), lambda: pytest.fail("no result to read"))
    assert caught.value.status.state == state and "oom_kill" in caught.value.stderr_tail
    assert str(caught.value).startswith(f"job 77: {state}")


def test_over_remote_the_logs_ends_are_read_on_the_cluster_and_the_hint_says_remote():
    record = SimpleNamespace(folder="/scratch/u/logs", logs=())
    asked = []

    def read(path, lines):
        asked.append((path, lines))
        return "far away" if path.endswith(".err") else None

    statuses = {str(i): JobStatus(str(i), "FAILED", 2) for i in range(1, 5)}
    lines = views.failure_lines(statuses, {"1": record, "2": record, "3": record, "4": record}, read=read,
                                logs="slurmkit logs --remote fir")
    assert lines[:4] == ["job 1 FAILED exit 2", "--- stderr (/scratch/u/logs/1_0_log.err), its last 1 line ---", "far away",
                         "--- stdout: no log at /scratch/u/logs/1_0_log.out ---"]
    assert asked[0] == ("/scratch/u/logs/1_0_log.err", 20)
    assert lines[-1] == "1 more failed (4): `slurmkit logs --remote fir ID` and `slurmkit logs --remote fir ID --err` show each one's"


def test_a_function_jobs_batch_shell_stopped_by_term_leaves_143_not_0(tmp_path):
    """scancel sends TERM to the batch shell: its exit file must say the signal (143), as a
    script job's does, never the 0 of the last command before it (read as COMPLETED)."""
    import signal
    import subprocess
    import time

    from slurmkit.api.functions import exit_file_lines

    ready = tmp_path / "ready"
    body = "\n".join(exit_file_lines(tmp_path) + ["export SLURM_JOB_ID=77", "true", f": > {ready}", "while :; do :; done"])
    shell = subprocess.Popen(["bash", "-c", body])
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert time.monotonic() < deadline and shell.poll() is None, "the shell never got to its loop"
        time.sleep(0.01)
    shell.send_signal(signal.SIGTERM)
    assert shell.wait(timeout=60) == 143
    assert (tmp_path / "77.exit").read_text() == "143\n"
