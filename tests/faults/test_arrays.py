"""Many tasks as arrays, on the real local cluster: the failed tasks of an array rerun, exactly
those, each with the parameters it had."""

import json
import subprocess

import pytest

from tests.integration.slurm import CLI, local_job, wait_until


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


FUNCTION_SPEC = {"name": "mapped", "profile": "local", "account": "def-test", "resources": {"time": "5m", "mem": "200M"}}


def test_map_array_of_50_calls_is_one_array_and_results_come_back_in_order(cluster, registry, tmp_path):
    from slurmkit.api.functions import gather, map_array
    from tests.integration.slurm import sacct_rows

    items = [str(i) for i in range(50)]
    items[7] = "seven"   # this call alone raises
    handles = map_array(int, items, spec=FUNCTION_SPEC, folder=tmp_path / "fn")
    array_id = handles[0].job_id.split("_")[0]
    assert [h.job_id for h in handles] == [f"{array_id}_{i}" for i in range(50)]
    results = gather(handles, return_exceptions=True)
    assert results[:7] + results[8:] == [i for i in range(50) if i != 7]
    assert isinstance(results[7], ValueError) and "invalid literal for int" in str(results[7])   # the call's own exception
    assert "int('seven')" in str(results[7].__cause__) or "invalid literal" in str(results[7].__cause__)   # its traceback there
    with pytest.raises(ValueError, match="invalid literal for int"):
        handles[7].result()
    tasks = lambda: sorted(r["JobID"] for r in sacct_rows(array_id) if "." not in r["JobID"])  # noqa: E731
    wait_until(lambda: len(tasks()) == 50, "accounting to have every task")   # slurmdbd hears of them in its own time
    assert tasks() == sorted(h.job_id for h in handles)   # one array id, 50 tasks
    assert [(r["job_id"], r["array_size"]) for r in map(json.loads, registry.read_text().splitlines())] == \
        [("", 50), (array_id, 50)]


def test_map_array_above_the_sites_largest_array_submits_nothing(cluster, registry, tmp_path):
    from slurmkit.api.functions import TooManyCalls, map_array

    spec = {**FUNCTION_SPEC, "profile": "local"}
    with pytest.raises(TooManyCalls, match="1002 calls are more than one array may hold on local \\(1001 tasks\\)"):
        map_array(int, ["1"] * 1002, spec=spec, folder=tmp_path / "fn")
    assert not registry.exists()
