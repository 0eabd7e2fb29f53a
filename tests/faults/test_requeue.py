"""A requeued job on the real local cluster (Slurm 22.05): ``scontrol requeue`` of a running job
stops run 1 (its TERM trap writes exit 143) and SLURM runs the job again under the same id.
Until run 2 ends, nothing says the job ended: not ``status``, not ``JobHandle.wait()``, not
``watch`` (which ``submit --wait`` is); the final word is run 2's.

SLURM holds a requeued job back for about two minutes before it may start again; the test
moves its start to now, again at each look while the job pends.
"""

import json
import subprocess
import threading

from tests.integration.slurm import CLI, GUARD_S, controller_view, local_job, wait_until

from .test_monitor import cli


def squeue_run(job_id: str):
    """(state, run) as the controller says: its run is RestartCnt + 1."""
    out = subprocess.run(["squeue", "-h", "-t", "all", "-j", job_id, "-O", "State:|,RestartCnt:|"],
                         capture_output=True, text=True).stdout.strip()
    state, _, restarts = out.partition("|")
    restarts = restarts.strip("|")
    return state, int(restarts) + 1 if restarts.isdigit() else 0


def started_now(job_id: str):
    """(state, run) of ``job_id``, moving its start to now while it pends: at every look, not
    once, since a move made before the controller has finished run 1 may be overtaken by the
    requeue's own hold-back (once failed on a loaded CI machine: no start within 300 s)."""
    state_and_run = squeue_run(job_id)
    if state_and_run[0] == "PENDING":
        subprocess.run(["scontrol", "update", f"jobid={job_id}", "StartTime=now"], check=True)
    return state_and_run


def outcome(call):
    """What ``call`` returns, or the exception it raised: a thread's exception would be lost."""
    try:
        return call()
    except BaseException as error:  # noqa: BLE001 (shown by the test's assertion)
        return error


def test_a_requeued_job_is_not_failed_while_slurm_runs_it_again_and_ends_as_run_2_ended(cluster, registry, tmp_path):
    started, finish = tmp_path / "run1", tmp_path / "finish"
    payload = (f'if [ "${{SLURM_RESTART_COUNT:-0}}" = 0 ]; then touch {started}; exec sleep 600; fi; '
               f'until [ -e {finish} ]; do sleep 0.2; done')
    handle = local_job(tmp_path, "rq", command=["bash", "-c", payload], extra_directives=["--requeue"]).submit()
    waited = []
    waiter = threading.Thread(target=lambda: waited.append(outcome(lambda: handle.wait(1.0))), daemon=True)
    watcher = subprocess.Popen([*CLI, "watch", handle.job_id, "--interval", "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        waiter.start()
        wait_until(started.exists, "run 1's start", job_id=handle.job_id)
        subprocess.run(["scontrol", "requeue", handle.job_id], check=True)
        exit_file = handle.paths.folder / f"{handle.job_id}.exit"
        wait_until(lambda: exit_file.exists() and squeue_run(handle.job_id) == ("PENDING", 2), "run 1's exit file, run 2 pending",
                   job_id=handle.job_id)
        assert exit_file.read_text().splitlines()[0] == "143"      # run 1's TERM trap
        row = json.loads(cli("status", handle.job_id, "--json")[0].stdout)["jobs"][0]
        assert row["state"] in ("PENDING", "REQUEUED") and row["runs"] == 2 and row["exit_code"] is None, row
        assert waiter.is_alive() and watcher.poll() is None        # neither returned at run 1's end

        wait_until(lambda: started_now(handle.job_id) == ("RUNNING", 2), "run 2's start", step=1.0, job_id=handle.job_id)
        row = json.loads(cli("status", handle.job_id, "--json")[0].stdout)["jobs"][0]
        # Accounting may not have seen run 2 start yet (sacct answers first, and PENDING is an
        # answer); what matters is that the job is not ended and is run 2.
        assert row["state"] in ("PENDING", "RUNNING") and row["runs"] == 2 and row["exit_code"] is None, row
        assert waiter.is_alive() and watcher.poll() is None
        finish.write_text("")
        waiter.join(timeout=GUARD_S)
        out, err = watcher.communicate(timeout=GUARD_S)
    finally:
        finish.write_text("")
        if watcher.poll() is None:
            watcher.kill()
        subprocess.run(["scancel", handle.job_id], check=False)
    assert waited, "JobHandle.wait() had not returned " + f"{GUARD_S:.0f} s after run 2 ended (watch had)" + controller_view(handle.job_id)
    final = waited[0]
    assert not isinstance(final, BaseException), repr(final)
    assert (final.state, final.exit_code, final.runs) == ("COMPLETED", 0, 2), final
    text = out.decode()
    assert f" {handle.job_id} COMPLETED (run 2) exit 0\n" in text and "FAILED" not in text, text
    assert watcher.returncode == 0, err.decode()
