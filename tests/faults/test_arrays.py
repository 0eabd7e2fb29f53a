"""Many tasks as arrays, on the real local cluster: the failed tasks of an array rerun, exactly
those, each with the parameters it had."""

import json
import subprocess

from tests.integration.slurm import CLI, local_job


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300)


def test_resubmit_failed_reruns_exactly_the_failed_tasks_with_their_parameters(cluster, registry, tmp_path):
    # Tasks 1 and 4 fail by their parameter the first time (no marker yet), then succeed.
    shell = ('echo "$SLURM_ARRAY_TASK_ID $x" >> seen.txt; '
             'if [ "$x" = bad ] && [ ! -e "mended-$SLURM_ARRAY_TASK_ID" ]; then touch "mended-$SLURM_ARRAY_TASK_ID"; exit 3; fi')
    sweep = local_job(tmp_path, "rerun", kind="array", launch={"shell": shell},
                      array={"parameters": {"x": ["ok", "bad", "ok", "ok", "bad", "ok"]}}).submit()
    states = [t.wait(1.0).state for t in sweep.tasks]
    assert states == ["COMPLETED", "FAILED", "COMPLETED", "COMPLETED", "FAILED", "COMPLETED"]

    rerun = _cli("resubmit", sweep.job_id, "--failed")
    assert rerun.returncode == 0, rerun.stderr
    new_id = rerun.stdout.split("submitted job ")[1].split(":")[0]
    assert "--array=1,4" in rerun.stdout
    record = [json.loads(line) for line in registry.read_text().splitlines() if f'"job_id": "{new_id}"' in line][-1]
    assert (record["rerun_of"], record["array_ids"], record["array_size"]) == (sweep.job_id, "1,4", 2)

    status = _cli("watch", new_id)   # exit 0 only when every task completed
    assert status.returncode == 0, status.stdout + status.stderr
    assert f"{new_id}_1" in _cli("status", new_id).stdout
    lines = (tmp_path / "seen.txt").read_text().splitlines()
    assert sorted(lines[6:]) == ["1 bad", "4 bad"]   # the rerun: exactly tasks 1 and 4, each its own point

    again = _cli("resubmit", new_id, "--failed")
    assert (again.returncode, again.stdout.strip()) == (0, f"job {new_id}: no task failed; nothing submitted")


def test_resubmit_failed_of_an_unknown_job_is_one_line_and_fails(cluster, registry):
    result = _cli("resubmit", "4242424", "--failed")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "no such job" in result.stderr
