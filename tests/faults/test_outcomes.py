"""What a job's end is said to be, on the real local cluster (Slurm 22.05): the verdict waits for
the exit file of a job that stages outputs, a batch shell killed before its EXIT trap is said to
have lost them, a job no source knows ends a watch, and a command that cannot tell the truth
ends non-zero.

Where a test needs the started file (``<id>.started``: the run and the outputs the EXIT trap
will save, written just before the payload starts), the payload writes it, as the script does.
"""

import json
import re
import shutil
import subprocess

from tests.integration.slurm import CLI, GUARD_S, local_job, wait_until

from .test_monitor import cli, one_error_line

MAKE_OUT = "mkdir -p $$SLURM_TMPDIR/out && for i in 1 2 3; do head -c 40000 /dev/urandom > $$SLURM_TMPDIR/out/f$$i; done"


def started_file(destination) -> str:
    """The payload's words that write the started file (``$$`` is a literal ``$`` in a spec)."""
    return (f"printf 'run\\t1\\noutput\\t%s\\n' {destination} > "
            "$$SLURMKIT_JOB_DIR/$$SLURM_JOB_ID.started.partial && "
            "mv $$SLURMKIT_JOB_DIR/$$SLURM_JOB_ID.started.partial $$SLURMKIT_JOB_DIR/$$SLURM_JOB_ID.started")


def test_watch_of_a_cancelled_job_that_stages_outputs_ends_on_its_exit_file_never_cancelled_exit_0(cluster, registry, tmp_path):
    """SLURM says CANCELLED (0:0) as soon as the cancel comes, while the EXIT trap still saves:
    the watch says so, and its verdict is the exit file's code and what was saved."""
    marker, destination = tmp_path / "ready", tmp_path / "results"
    handle = local_job(tmp_path, "cx", command=["bash", "-c", f"{MAKE_OUT}; {started_file(destination)}; touch {marker}; exec sleep 600"],
                       stage={"outputs": [{"from": "out", "to": str(destination)}]}).submit()
    watcher = subprocess.Popen([*CLI, "watch", handle.job_id, "--interval", "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_until(marker.exists, "the payload's start")
        subprocess.run(["scancel", handle.job_id], check=True)
        out, err = watcher.communicate(timeout=GUARD_S)
    finally:
        if watcher.poll() is None:
            watcher.kill()
    text = out.decode()
    assert re.search(rf"^\S+ {handle.job_id} CANCELLED by signal 15 \(exit 143\); outputs saved$", text, re.M), (text, err)
    assert not re.search(rf"^\S+ {handle.job_id} CANCELLED( exit 0)?$", text, re.M), text
    assert watcher.returncode == 1                      # cancelled: not a completed job
    assert sorted(path.name for path in destination.iterdir()) == ["f1", "f2", "f3"]


def test_a_batch_shell_killed_before_its_exit_trap_says_the_outputs_were_not_saved(cluster, registry, tmp_path):
    """SIGKILL of the batch shell (as the OOM killer or a node's cleanup does): no EXIT trap, no
    exit file. ``status`` and ``report`` say that the outputs its started file lists were not saved."""
    destination = tmp_path / "results"
    handle = local_job(tmp_path, "kx", command=["bash", "-c", f"{MAKE_OUT}; {started_file(destination)}; kill -9 $$PPID"],
                       stage={"outputs": [{"from": "out", "to": str(destination)}]}).submit()
    final = handle.wait(1.0)
    said = f"outputs NOT saved: the batch shell was killed before it could save (run 1): {destination}"
    assert (final.state, final.signal, final.ok) == ("FAILED", 9, False), final
    result, _ = cli("status", handle.job_id, "--json")
    row = json.loads(result.stdout)["jobs"][0]
    assert (row["outputs"], row["exit"]) == (said, "KILLED by signal 9"), row
    assert said in cli("status", handle.job_id)[0].stdout
    wait_until(lambda: "FAILED" in subprocess.run(["sacct", "-n", "-X", "-j", handle.job_id], capture_output=True, text=True).stdout)
    report, _ = cli("report", handle.job_id)
    assert f"Outputs: NOT saved: the batch shell was killed before it could save (run 1): {destination}\n" in report.stdout, report.stdout
    assert not destination.exists()


def test_watch_and_status_of_a_job_no_source_knows_end_unknown_with_exit_1(cluster, registry):
    """An id neither accounting nor the controller knows (purged, another cluster's): ``status``
    says so (exit 1); ``watch`` gives it up after a bounded time, UNKNOWN, exit 1."""
    status, _ = cli("status", "99998")
    assert status.returncode == 1 and "99998\t\tUNKNOWN" in status.stdout
    assert one_error_line(status) == "error: job 99998: SLURM knows no such job: check the id (`slurmkit status` lists yours)"
    watched, took = cli("watch", "99998", timeout=GUARD_S)
    assert watched.returncode == 1 and re.fullmatch(r"\S+ 99998 UNKNOWN\n", watched.stdout), watched.stdout
    assert one_error_line(watched).startswith("error: job 99998: neither accounting nor the controller knows it")


def test_logs_follow_of_a_job_whose_folder_is_removed_ends_with_exit_1(cluster, registry, tmp_path):
    started = tmp_path / "started"
    handle = local_job(tmp_path, "lf", command=["bash", "-c", f"touch {started}; echo line; exec sleep 600"]).submit()
    try:
        wait_until(started.exists, "the payload's start")
        follower = subprocess.Popen([*CLI, "logs", handle.job_id, "-f"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        folder = handle.paths.folder
        wait_until(lambda: (folder / f"{handle.job_id}_0_log.out").exists(), "the job's log")
        shutil.rmtree(folder)
        out, err = follower.communicate(timeout=GUARD_S)
    finally:
        subprocess.run(["scancel", handle.job_id], check=False)
    assert follower.returncode == 1
    assert err.decode() == (f"error: the log folder of job {handle.job_id}, {folder}, is gone (moved or deleted): "
                            "its logs and exit file were there\n")


def test_status_with_its_output_closed_is_exit_1_not_a_silent_success(cluster, registry, tmp_path):
    handle = local_job(tmp_path, "so").submit()
    handle.wait(1.0)
    closed = subprocess.run(["bash", "-c", " ".join([*(f"'{word}'" for word in CLI), "status", handle.job_id, ">&-"])],
                            capture_output=True, text=True)
    assert closed.returncode == 1
    assert closed.stderr == "error: slurmkit could not write its output: the stream is closed\n"
