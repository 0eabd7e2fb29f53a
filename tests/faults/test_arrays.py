"""Many tasks as arrays, on the real local cluster: the failed tasks of an array rerun, exactly
those, each with the parameters it had."""

import json
import re
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


def test_resubmit_failed_of_a_function_array_reruns_exactly_the_failed_calls(cluster, registry, tmp_path):
    from slurmkit.api.functions import gather, map_array
    from slurmkit.slurm.submit import JobHandle

    marks = tmp_path / "marks"
    marks.mkdir()

    def once(item: str) -> str:   # defined here, so that it is pickled whole: the node imports no test module
        import os

        os.close(os.open(os.path.join(str(marks), f"ran-{item}-{os.getpid()}"), os.O_CREAT | os.O_WRONLY))
        mended = os.path.join(str(marks), f"mended-{item}")
        if item.startswith("bad") and not os.path.exists(mended):
            os.close(os.open(mended, os.O_CREAT | os.O_WRONLY))
            raise ValueError(f"first try of {item}")
        return item.upper()

    items = ["a", "bad1", "c", "d", "bad4", "f"]
    handles = map_array(once, items, spec=FUNCTION_SPEC, folder=tmp_path / "fn")
    array_id = handles[0].job_id.split("_")[0]
    first = gather(handles, return_exceptions=True)
    assert [r if isinstance(r, str) else f"failed: {'first try of bad' in str(r)}" for r in first] == \
        ["A", "failed: True", "C", "D", "failed: True", "F"]

    rerun = _cli("resubmit", array_id, "--failed")
    assert rerun.returncode == 0, rerun.stderr
    new_id = rerun.stdout.split("submitted job ")[1].split(":")[0]
    assert f"reruns tasks 1,4 of {array_id} (--array=1,4)" in rerun.stdout
    again = [JobHandle(tmp_path / "fn", f"{new_id}_{task}") for task in (1, 4)]
    assert gather(again) == ["BAD1", "BAD4"]   # each rerun task ran its own call
    ran = sorted(path.name.split("-")[1] for path in marks.glob("ran-*"))
    assert ran == sorted(items + ["bad1", "bad4"])   # exactly the failed calls ran again
    record = [json.loads(line) for line in registry.read_text().splitlines() if f'"job_id": "{new_id}"' in line][-1]
    assert (record["rerun_of"], record["array_ids"]) == (array_id, "1,4")


def _profile(tmp_path, monkeypatch, name: str, scheduling: str) -> None:
    """A user profile ``name`` over the local cluster with these ``scheduling`` lines."""
    profiles = tmp_path / "xdg" / "slurmkit" / "site_profiles"
    profiles.mkdir(parents=True, exist_ok=True)
    said = scheduling.replace(":", " =")
    (profiles / f"{name}.yaml").write_text(f"name: {name}\nextends: local\ndescription: the local cluster with {said}\n"
                                           f"scheduling:\n  {scheduling}\n  source: tests/faults/test_arrays.py\n", encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def test_map_array_above_the_per_user_job_limit_submits_nothing(cluster, registry, tmp_path, monkeypatch):
    from slurmkit.api.functions import TooManyCalls, map_array

    _profile(tmp_path, monkeypatch, "localfew", "max_jobs_per_user: 30")
    with pytest.raises(TooManyCalls, match="31 calls are more than localfew lets one user queue \\(30 jobs; each call is one\\)"):
        map_array(int, ["1"] * 31, spec={**FUNCTION_SPEC, "profile": "localfew"}, folder=tmp_path / "fn")
    assert not registry.exists()


def test_map_array_above_max_array_size_is_linked_arrays_followed_and_rerun_as_one(cluster, registry, tmp_path, monkeypatch):
    from slurmkit.api.functions import gather, map_array
    from slurmkit.slurm.submit import JobHandle

    _profile(tmp_path, monkeypatch, "localten", "max_array_size: 10")
    marks = tmp_path / "marks"
    marks.mkdir()

    def once(item: str) -> str:   # defined here, so that it is pickled whole: calls 3 and 20 fail the first time
        import os

        os.close(os.open(os.path.join(str(marks), f"ran-{item}-{os.getpid()}"), os.O_CREAT | os.O_WRONLY))
        mended = os.path.join(str(marks), f"mended-{item}")
        if item in ("3", "20") and not os.path.exists(mended):
            os.close(os.open(mended, os.O_CREAT | os.O_WRONLY))
            raise ValueError(f"first try of {item}")
        return f"done {item}"

    items = [str(i) for i in range(25)]
    handles = map_array(once, items, spec={**FUNCTION_SPEC, "profile": "localten"}, folder=tmp_path / "fn")
    parts = list(dict.fromkeys(h.job_id.split("_")[0] for h in handles))
    first = parts[0]
    assert [h.job_id for h in handles] == [f"{part}_{i}" for part, size in zip(parts, (9, 9, 7)) for i in range(size)]
    results = gather(handles, return_exceptions=True)   # one gather over every part, in the items' order
    assert [r for i, r in enumerate(results) if i not in (3, 20)] == [f"done {i}" for i in range(25) if i not in (3, 20)]
    assert [str(results[i]) for i in (3, 20)] == ["first try of 3", "first try of 20"]   # each call's own exception
    assert all(isinstance(results[i], ValueError) for i in (3, 20))
    records = [json.loads(line) for line in registry.read_text().splitlines() if '"job_id": ""' not in line]
    assert [(r["job_id"], r["array_size"], r["offset"], r.get("sweep"), r["parts"]) for r in records] == [
        (parts[0], 9, 0, None, 3), (parts[1], 9, 9, first, 3), (parts[2], 7, 18, first, 3)]
    status = json.loads(_cli("status", first, "--json").stdout)
    states = {row["job"]: row["state"] for row in status["jobs"]}
    assert sorted(states) == sorted(f"{first}_{i}" for i in range(25))   # one job of 25 tasks
    assert [job for job, state in states.items() if state == "FAILED"] == [f"{first}_3", f"{first}_20"]

    rerun = _cli("resubmit", first, "--failed")
    assert rerun.returncode == 0, rerun.stderr
    assert [line.split(": ", 1)[1] for line in rerun.stdout.splitlines()] == [
        f"reruns points 3 of {first} (tasks 3 of its part {parts[0]})", f"reruns points 20 of {first} (tasks 2 of its part {parts[2]})"]
    new = re.findall(r"submitted job (\d+)", rerun.stdout)
    assert gather([JobHandle(tmp_path / "fn", f"{new[0]}_3"), JobHandle(tmp_path / "fn", f"{new[1]}_2")]) == ["done 3", "done 20"]
    ran = sorted(path.name.split("-")[1] for path in marks.glob("ran-*"))
    assert ran == sorted(items + ["3", "20"])   # exactly the failed calls ran again


SMALL_ARRAYS = """\
name: localsmall
extends: local
description: the local cluster, as if its MaxArraySize were 4
scheduling:
  max_array_size: 4
  source: tests/faults/test_arrays.py
"""


def _seen(path) -> list:
    """``seen.txt``'s lines as (point by offset + task id, the point's parameter), sorted."""
    rows = [line.split() for line in path.read_text().splitlines()]
    return sorted((int(offset) + int(task), int(x)) for offset, task, x in rows)


SEEN = 'echo "$SLURMKIT_SWEEP_OFFSET $SLURM_ARRAY_TASK_ID $x" >> seen.txt'


# 2500 tasks, 4 at a time on the test cluster's 4 cores: about 45 minutes. On a cluster of its own with more
# cores (SLURMKIT_CLUSTER_CPUS=16 SLURMKIT_CLUSTER_PORT_BASE=18400 SLURMKIT_CLUSTER_DIR=/tmp/c cluster.sh up): 6.5 min.
@pytest.mark.slow
def test_a_2500_task_sweep_above_max_array_size_1001_runs_every_task_once_as_one_job(cluster, registry, tmp_path):
    config = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True, timeout=60).stdout
    assert re.search(r"^MaxArraySize\s*=\s*1001$", config, re.M), "the test cluster's MaxArraySize is 1001"
    sweep = local_job(tmp_path, "big", kind="array", launch={"shell": SEEN}, extra_directives=["--nice=10000"],  # others first
                      resources={"time": "5m", "mem": "100M"}, array={"parameters": {"x": list(range(2500))}}).submit()
    assert (sweep.size, len(sweep.parts)) == (2500, 3)
    records = [json.loads(line) for line in registry.read_text().splitlines() if '"job_id": "' in line
               and '"job_id": ""' not in line]
    assert [(r["array_size"], r["offset"], r.get("sweep")) for r in records] == [
        (1001, 0, None), (1001, 1001, sweep.job_id), (498, 2002, sweep.job_id)]
    watched = subprocess.run([*CLI, "watch", sweep.job_id, "--interval", "30"], capture_output=True, text=True, timeout=4 * 3600)
    assert watched.returncode == 0, watched.stdout[-2000:] + watched.stderr
    assert _seen(tmp_path / "seen.txt") == [(i, i) for i in range(2500)]   # every point once, by its own task
    status = json.loads(_cli("status", sweep.job_id, "--json").stdout)
    assert [(a["job"], a["tasks"]) for a in status["arrays"]] == [(sweep.job_id, 2500)]


def test_a_split_sweep_is_one_job_to_status_logs_and_resubmit_failed(cluster, registry, tmp_path, monkeypatch):
    profiles = tmp_path / "xdg" / "slurmkit" / "site_profiles"
    profiles.mkdir(parents=True)
    (profiles / "localsmall.yaml").write_text(SMALL_ARRAYS, encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    shell = (f'{SEEN}; echo "point $x"; '
             'if [ "$x" = 5 ] || [ "$x" = 9 ]; then [ -e "mended-$x" ] || { touch "mended-$x"; exit 3; }; fi')
    submitted = _cli("submit", str(_spec_file(tmp_path, shell)), "--json")
    assert submitted.returncode == 0, submitted.stderr
    doc = json.loads(submitted.stdout)
    sweep, parts = doc["job"], doc["parts"]
    assert (doc["array_size"], len(parts), parts[0]) == (10, 3, sweep)
    assert _cli("watch", sweep).returncode == 1   # points 5 and 9 failed
    status = json.loads(_cli("status", sweep, "--json").stdout)
    states = {row["job"]: row["state"] for row in status["jobs"]}
    assert sorted(states) == sorted(f"{sweep}_{i}" for i in range(10))
    assert [job for job, state in states.items() if state == "FAILED"] == [f"{sweep}_5", f"{sweep}_9"]
    assert _cli("logs", f"{sweep}_9").stdout == "point 9\n"   # task 1 of the third part
    assert _cli("logs", sweep, "--task", "6").stdout == "point 6\n"

    rerun = _cli("resubmit", sweep, "--failed")
    assert rerun.returncode == 0, rerun.stderr
    assert [line.split(": ", 1)[1] for line in rerun.stdout.splitlines()] == [
        f"reruns points 5 of {sweep} (tasks 1 of its part {parts[1]})", f"reruns points 9 of {sweep} (tasks 1 of its part {parts[2]})"]
    for new_id in re.findall(r"submitted job (\d+)", rerun.stdout):
        assert _cli("watch", new_id).returncode == 0
    assert _seen(tmp_path / "seen.txt") == sorted([(i, i) for i in range(10)] + [(5, 5), (9, 9)])


def _spec_file(tmp_path, shell):
    import yaml

    spec = {"name": "split", "profile": "localsmall", "account": "def-test", "kind": "array",
            "resources": {"time": "5m", "mem": "100M"}, "launch": {"shell": shell}, "array": {"parameters": {"x": list(range(10))}}}
    path = tmp_path / "split.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path
