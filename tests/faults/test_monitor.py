"""Monitoring under faults, on the real local cluster (Debian's Slurm 22.05): SLURM unreachable
is an error in bounded time, a lost controller is reported and survived, accounting down costs
one short sacct attempt now and then, and ended jobs show how they really ended.

Each test undoes its fault (the harness in conftest.py restarts or continues the daemon).
"""

import json
import os
import pty
import re
import signal
import subprocess
import time

from slurmkit.slurm import monitor
from slurmkit.slurm.monitor import Watch
from slurmkit.slurm.slurmcli import SchedulerError
from tests.integration.slurm import CLI, GUARD_S, ctrl_c_as_at_a_terminal, local_job, read_until, wait_until

from .conftest import paused, stopped


def job(tmp_path, name="m", **fields):
    return local_job(tmp_path, name, **fields)


def cli(*args, env=None, timeout=120):
    started = time.monotonic()
    result = subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, timeout=timeout)
    return result, time.monotonic() - started


def one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


# ------------------------------------------------------------------------- SLURM unreachable

def test_status_without_slurm_conf_is_one_line_exit_1_within_seconds(cluster, registry):
    env = {k: v for k, v in os.environ.items() if k != "SLURM_CONF"}
    result, took = cli("status", "12345", env=env)
    line = one_error_line(result)
    assert result.returncode == 1 and took < 5
    assert line.startswith("error: SLURM's commands found no configuration (SLURM_CONF is unset")
    assert line.endswith("set SLURM_CONF or run on a login node")
    watched, took = cli("watch", "12345", env=env, timeout=30)    # not UNKNOWN forever
    assert watched.returncode == 1 and took < 5 and one_error_line(watched) == line


def test_status_with_controller_and_accounting_stopped_names_both_within_seconds(cluster, registry):
    with stopped(cluster, "slurmdbd"), stopped(cluster, "slurmctld"):
        result, took = cli("status", "12345")
    line = one_error_line(result)
    assert result.returncode == 1 and took < 15, (took, line)
    assert line.startswith("error: SLURM is not answering (") and "sacct failed" in line and "squeue failed" in line


def test_status_with_the_controller_paused_errors_in_bounded_time_unless_accounting_answers(cluster, registry, tmp_path):
    """A controller stuck under load makes squeue wait 20 s; status gives up after its query
    timeout. A job that accounting knows is still answered, from sacct."""
    done = job(tmp_path, command=["true"]).submit()
    done.wait(1.0)
    wait_until(lambda: "COMPLETED" in subprocess.run(["sacct", "-n", "-X", "-j", done.job_id], capture_output=True, text=True).stdout)
    with paused(cluster, "slurmctld"):
        unknown, took = cli("status", "99990")
        known, _ = cli("status", done.job_id, "--json")
    assert unknown.returncode == 1 and took < monitor.SACCT_TIMEOUT_S + monitor.SQUEUE_TIMEOUT_S + 4, took
    assert "squeue failed: Socket timed out" in one_error_line(unknown)
    assert known.returncode == 0 and json.loads(known.stdout)["jobs"][0]["state"] == "COMPLETED"


def test_watch_through_a_controller_outage_reports_the_loss_and_resumes_to_the_real_end(cluster, registry, tmp_path):
    """Accounting down (so only the controller can answer), then the controller paused until the
    watch says it lost it (a poll fails after squeue's query timeout rather than wait it out).
    The job runs from before the outage until after it: it ends when the test says so."""
    started, finish = tmp_path / "started", tmp_path / "finish"
    with stopped(cluster, "slurmdbd"):
        handle = job(tmp_path, command=["bash", "-c", f"touch {started}; until [ -e {finish} ]; do sleep 0.2; done"]).submit()
        watcher = subprocess.Popen([*CLI, "watch", handle.job_id, "--interval", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        shown = bytearray()
        streams = {watcher.stdout.fileno(): shown}
        assert read_until(streams, lambda: f" {handle.job_id} RUNNING\n".encode() in shown), shown
        with paused(cluster, "slurmctld"):
            assert read_until(streams, lambda: b" lost the controller, " in shown), shown
        assert read_until(streams, lambda: b" the controller answers again\n" in shown), shown
        finish.write_text("")
        rest, err = watcher.communicate(timeout=GUARD_S)
    out = (shown + rest).decode()
    err = err.decode()
    assert re.search(r"^\S+ lost the controller, retrying: SLURM is not answering \(.*squeue failed", out, re.M), out
    assert re.search(r"^\S+ the controller answers again$", out, re.M), out
    assert re.search(rf"^\S+ {handle.job_id} COMPLETED exit 0$", out, re.M), out
    assert watcher.returncode == 0, err


# ------------------------------------------------------------------------ accounting down

def test_with_accounting_stopped_each_poll_costs_at_most_one_short_sacct_attempt(cluster, registry, tmp_path):
    """Short: sacct is refused at once, never waited out to its query timeout (what the time it
    took would show on a quiet machine, and not on a busy one)."""
    calls = []

    def counting(argv):
        said = ""
        try:
            return monitor._run(argv)
        except SchedulerError as error:
            said = error.message
            raise
        finally:
            calls.append((watch.polls, argv[0], said))

    with stopped(cluster, "slurmdbd"):
        ok = job(tmp_path, name="ok", command=["bash", "-c", "sleep 6"]).submit()
        bad = job(tmp_path, name="bad", command=["bash", "-c", "sleep 6; exit 5"]).submit()
        ids = [ok.job_id, bad.job_id]
        watch = Watch(ids, interval=1.0, folders={i: str(h.paths.folder) for i, h in zip(ids, (ok, bad))}, run=counting)
        for final in watch:
            pass
    sacct = [(poll, said) for poll, name, said in calls if name == "sacct"]
    assert all(n <= 1 for n in (sum(1 for p, _ in sacct if p == poll) for poll in range(1, watch.polls + 1)))
    assert len(sacct) < watch.polls, (sacct, watch.polls)
    assert all(said and "no answer within" not in said for _, said in sacct), sacct   # failed, and not by the timeout
    assert (final[ok.job_id].state, final[ok.job_id].exit_code) == ("COMPLETED", 0)
    assert (final[bad.job_id].state, final[bad.job_id].exit_code) == ("FAILED", 5)
    assert {s.source for s in final.values()} <= {"squeue", "exit-file"}


# --------------------------------------------------------------------------- true states

def test_a_sigkilled_job_shows_killed_by_signal_9_in_status_and_json(cluster, registry, tmp_path):
    """The payload SIGKILLs its parent, the job's batch shell (``$$`` is a literal ``$`` in a
    spec), so no EXIT trap runs and only SLURM knows the signal."""
    handle = job(tmp_path, name="killed", command=["bash", "-c", "kill -9 $$PPID"]).submit()
    final = handle.wait(1.0)
    assert (final.exit_code, final.signal) == (None, 9)
    row = json.loads(cli("status", handle.job_id, "--json")[0].stdout)["jobs"][0]
    assert (row["signal"], row["exit_code"], row["exit"]) == (9, None, "KILLED by signal 9")
    plain = cli("status", handle.job_id)[0].stdout
    assert "KILLED by signal 9" in plain and "\t0\t" not in plain.split("KILLED")[0]


def test_cancel_of_an_unknown_and_a_finished_job_is_exit_1_and_the_live_one_is_still_cancelled(cluster, registry, tmp_path):
    finished = job(tmp_path, name="fin", command=["true"]).submit()
    finished.wait(1.0)
    live = job(tmp_path, name="live", command=["sleep", "120"]).submit()
    result, _ = cli("cancel", "99999", finished.job_id, live.job_id)
    assert result.returncode == 1
    assert result.stdout == f"cancelled {live.job_id}\n"
    assert result.stderr.splitlines() == [
        "error: job 99999: SLURM knows no such job: check the id (`slurmkit status` lists yours)",
        f"error: job {finished.job_id} had already ended (COMPLETED exit 0): nothing to cancel"]
    assert live.wait(1.0).state == "CANCELLED"
    alone, _ = cli("cancel", "99999")
    assert alone.returncode == 1 and "no such job" in one_error_line(alone) and alone.stdout == ""


def squeue_state(job_id: str) -> str:
    """The controller's word for the job (``COMPLETING`` while its processes are being killed)."""
    return subprocess.run(["squeue", "-h", "-t", "all", "-j", job_id, "-o", "%T"], capture_output=True, text=True).stdout.strip()


def test_a_job_cancelled_while_accounting_lags_is_never_failed_143(cluster, registry, tmp_path):
    """The moment after a cancel on a loaded machine, held still: slurmdbd has not recorded the
    end yet (sacct answers RUNNING, as it does until then), the controller says COMPLETING (the
    payload ignores SIGTERM, so the job completes until KillWait's SIGKILL, 30 s later), and the
    batch script's TERM trap has already written exit 143. A poll then may say the job still runs
    or that it was cancelled, never that it failed: a watch or a wait keeps what it says."""
    started = tmp_path / "started"
    handle = job(tmp_path, name="lag", command=["bash", "-c", f"trap '' TERM; touch {started}; exec sleep 3600"]).submit()
    wait_until(started.exists, "the payload's start")
    subprocess.run(["scancel", handle.job_id], check=True)
    exit_file = handle.paths.folder / f"{handle.job_id}.exit"
    wait_until(lambda: exit_file.exists() and squeue_state(handle.job_id) == "COMPLETING", "the exit file of a completing job")

    def accounting_behind(argv):
        return f"{handle.job_id}|RUNNING|0:0|5|node1\n" if argv[0] == "sacct" else monitor._run(argv)

    status = monitor.poll([handle.job_id], {handle.job_id: str(handle.paths.folder)}, run=accounting_behind)[handle.job_id]
    assert status.state == "CANCELLED" or not status.done, status


# ------------------------------------------------------------------------------ large arrays

def test_watch_of_a_1000_task_array_is_a_summary_and_asks_about_the_array_not_each_task(cluster, registry, tmp_path):
    """Held, so that the tasks stay pending. Each poll is at most one sacct and one squeue, naming
    the array by its id. Piped, the watch prints one counts line, however many polls it makes; on
    a terminal (a pty: rich Live) it shows the array's bar and counts, no row per pending task. What such
    a watch costs in CPU is measured by bench/watch.py, on a quiet machine: a share of a core
    measured here would measure whatever else runs beside the test."""
    sweep = job(tmp_path, name="big", kind="array", command=["true"], extra_directives=["--hold"],
                array={"parameters": {"point": list(range(1000))}}).submit()
    piped = terminal = leader = None
    try:
        calls = []

        def counting(argv):
            calls.append((watch.polls, [word for word in argv if sweep.job_id in word]))
            return monitor._run(argv)

        watch = Watch([sweep.job_id], interval=5.0, folders={sweep.job_id: str(sweep.tasks[0].paths.folder)},
                      array_sizes={sweep.job_id: 1000}, run=counting, sleep=lambda seconds: None)   # polls back to back
        answered = 0
        for statuses in watch:
            answered += watch.lost is None
            assert watch.polls < 30, f"SLURM answered {answered} of {watch.polls} polls: {watch.lost}"
            if answered == 3:
                break
        assert {s.state for s in statuses.values()} == {"PENDING"} and len(statuses) == 1000
        assert all(sum(1 for poll, _ in calls if poll == n) <= 2 for n in range(1, watch.polls + 1)), calls
        assert all(ids in ([sweep.job_id], [f"--jobs={sweep.job_id}"]) for _, ids in calls), calls

        argv = ["watch", sweep.job_id, "--interval", "5"]
        piped = subprocess.Popen([*CLI, "-v", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 preexec_fn=ctrl_c_as_at_a_terminal)
        leader, follower = pty.openpty()
        terminal = subprocess.Popen([*CLI, *argv], stdin=follower, stdout=follower, stderr=follower,
                                    env={**os.environ, "COLUMNS": "120"}, preexec_fn=ctrl_c_as_at_a_terminal)
        os.close(follower)
        out, err, screen = bytearray(), bytearray(), bytearray()
        summary = re.compile(rf"^\S+ array {sweep.job_id}: \[\.+\] 0/1000 ended: 1000 PENDING; ETA not known until a task ends$", re.M)
        pending_tasks = re.compile(rf"{sweep.job_id}_\d+\b.*PENDING")   # a row per pending task: what the summary spares

        def queries():   # the piped watch's monitoring queries, as -v reports them ("ran sacct ... -j 12 ...")
            return [line for line in err.decode().splitlines() if line.startswith("slurmkit: ran ") and
                    (" -X -D " in line or " --jobs=" in line)]

        # six queries are three polls at least (a poll makes at most two, as counted above)
        assert read_until({piped.stdout.fileno(): out, piped.stderr.fileno(): err, leader: screen},
                          lambda: summary.search(out.decode()) and len(queries()) >= 6 and
                          b"0/1000 ended: 1000 PENDING" in screen), \
            (out, err, screen)
    finally:
        # Ctrl-C ends both watches first; only then is the array cancelled, so that a watch on a
        # loaded machine never sees the cancellation before its Ctrl-C (that is another test's).
        for process in (piped, terminal):
            if process is not None:
                process.send_signal(signal.SIGINT)
        if piped is not None:
            rest = piped.communicate(timeout=GUARD_S)[0]
        if terminal is not None:
            read_until({leader: screen}, lambda: terminal.poll() is not None)
            terminal.wait(timeout=GUARD_S)
        subprocess.run(["scancel", sweep.job_id], check=False)
        if leader is not None:
            os.close(leader)
    text = (out + rest).decode()
    assert summary.search(text) and len(text.splitlines()) < 10, text
    assert all(f" -j {sweep.job_id} " in query or f" --jobs={sweep.job_id} " in query for query in queries()), queries()
    shown = screen.decode("utf-8", "replace")
    assert "0/1000 ended: 1000 PENDING" in shown and not pending_tasks.search(shown), shown
