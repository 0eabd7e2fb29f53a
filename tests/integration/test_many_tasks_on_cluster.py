"""Kind many-tasks on the local cluster (Slurm 22.05, Debian's GNU Parallel 20221122).

Each task appends "start" and then "end HOST" to runs/<task>, so that the files tell how often
each task began and finished, and where. The jobs are submitted with plain sbatch from the
spec's folder, as slurmkit submit does (the task file and joblogs are relative to it).
"""

import os
import subprocess
import time
from pathlib import Path

import yaml

from slurmkit.api.job import Job
from slurmkit.render.runtime import write_runtime

from .slurm import sbatch, wait_for_job

TASK = 'echo start >> "runs/$1"; sleep {pause}; echo "end $(hostname)" >> "runs/$1"\n'


def _many_tasks(tmp_path: Path, name: str, count: int, pause: float, profile: str = "local", **resources) -> Path:
    """A many-tasks job of ``count`` tasks of ``pause`` seconds, rendered into tmp_path; the script's path."""
    (tmp_path / "tasks.txt").write_text("".join(f"{i}\n" for i in range(1, count + 1)))
    (tmp_path / "task.sh").write_text(TASK.format(pause=pause))
    (tmp_path / "runs").mkdir(exist_ok=True)
    spec = {"name": name, "profile": profile, "account": "def-test", "kind": "many-tasks",
            "resources": {"time": "10m", **resources}, "tasks": {"arguments": "tasks.txt"},
            "launch": {"command": "bash task.sh {}"}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(spec))
    script = tmp_path / "job.sbatch"
    script.write_text(Job.from_yaml(tmp_path / "job.yaml").render())
    return script


def _submit(script: Path) -> str:
    submission = sbatch(script)
    assert submission.returncode == 0, submission.stderr
    return submission.job_id


def _finished(script: Path, name: str, state: str = "COMPLETED") -> str:
    """Submit, wait, check the end state; the job's output."""
    job_id = _submit(script)
    row = wait_for_job(job_id)
    out = (script.parent / f"{name}-{job_id}.out").read_text()
    assert row["State"] == state, out
    return out


def _runs(tmp_path: Path) -> dict:
    """task number -> the lines its runs wrote."""
    return {int(p.name): p.read_text().splitlines() for p in (tmp_path / "runs").iterdir()}


def _joblog(path: Path) -> list:
    """GNU Parallel's joblog rows as dicts (Seq, Host, Starttime, JobRuntime, ..., Exitval, Signal, Command)."""
    header, *rows = path.read_text().splitlines()
    return [dict(zip(header.split("\t"), row.split("\t"))) for row in rows]


def _most_at_once(rows: list) -> int:
    events = sorted([(float(r["Starttime"]), 1) for r in rows] + [(float(r["Starttime"]) + float(r["JobRuntime"]), -1) for r in rows])
    running = most = 0
    for _, change in events:
        running += change
        most = max(most, running)
    return most


def test_a_hundred_tasks_run_on_one_node_each_once_two_at_a_time(cluster, tmp_path):
    out = _finished(_many_tasks(tmp_path, "hundred", 100, 0.1, tasks_per_node=2), "hundred")
    runs = _runs(tmp_path)
    assert sorted(runs) == list(range(1, 101))
    assert all(lines[0] == "start" and len(lines) == 2 for lines in runs.values())
    assert len({lines[1] for lines in runs.values()}) == 1           # "end node1": all on the one node
    rows = _joblog(tmp_path / "hundred.joblog" / "node-1-of-1.log")
    assert sorted(int(r["Seq"]) for r in rows) == list(range(1, 101))
    assert {(r["Exitval"], r["Signal"]) for r in rows} == {("0", "0")}
    assert _most_at_once(rows) == 2                                    # --jobs from SLURM_CPUS_PER_TASK=2 (one node)
    assert "slurmkit: 100 of 100 tasks succeeded, 0 failed, 0 not run" in out


def test_a_cancelled_run_resumes_from_its_joblog_and_each_task_finishes_once(cluster, tmp_path):
    script = _many_tasks(tmp_path, "cut", 40, 0.5, tasks_per_node=2)
    log = tmp_path / "cut.joblog" / "node-1-of-1.log"
    job_id = _submit(script)
    deadline = time.monotonic() + 60
    while not (log.exists() and len(_joblog(log)) >= 8):
        assert time.monotonic() < deadline, f"job {job_id} logged no 8 tasks in 60 s"
        time.sleep(0.2)
    subprocess.run(["scancel", job_id], check=True)
    assert wait_for_job(job_id)["State"].startswith("CANCELLED")
    first = _runs(tmp_path)
    done_first = {task for task, lines in first.items() if lines[-1].startswith("end")}
    assert 8 <= len(done_first) < 40

    out = _finished(script, "cut")
    runs = _runs(tmp_path)
    assert sorted(runs) == list(range(1, 41))
    assert all(sum(line.startswith("end") for line in lines) == 1 for lines in runs.values())   # each finished once
    assert all(runs[task] == first[task] for task in done_first)                               # and was not run again
    rows = _joblog(log)
    succeeded = [int(r["Seq"]) for r in rows if r["Exitval"] == "0" and r["Signal"] == "0"]
    assert sorted(succeeded) == list(range(1, 41))
    assert "slurmkit: 40 of 40 tasks succeeded, 0 failed, 0 not run" in out


def test_two_nodes_share_the_tasks_each_with_its_own_joblog(cluster, tmp_path):
    out = _finished(_many_tasks(tmp_path, "pair", 20, 0.1, nodes=2, tasks_per_node=2), "pair")
    runs = _runs(tmp_path)
    assert all(len(lines) == 2 for lines in runs.values()) and sorted(runs) == list(range(1, 21))
    hosts = sorted(lines[1] for lines in runs.values())
    assert hosts == ["end node1"] * 10 + ["end node2"] * 10
    first, second = (_joblog(tmp_path / "pair.joblog" / f"node-{i}-of-2.log") for i in (1, 2))
    # Node i of 2 takes lines i, i+2, ...: the odd tasks on the first node, the even ones on the second.
    assert sorted(r["Command"] for r in first) == sorted(f"bash task.sh {i}" for i in range(1, 21, 2))
    assert sorted(r["Command"] for r in second) == sorted(f"bash task.sh {i}" for i in range(2, 21, 2))
    assert "slurmkit: 20 of 20 tasks succeeded, 0 failed, 0 not run" in out


def test_the_set_up_lines_run_before_the_tasks_on_every_node(cluster, tmp_path):
    """environment.setup (``source settings.sh``, a variable) runs in the batch shell before
    GNU Parallel starts, and what it sets reaches the tasks on both nodes, as in the script
    imported: the kind had rendered no set-up line at all."""
    script = _many_tasks(tmp_path, "setup", 4, 0.1, nodes=2, tasks_per_node=1)
    (tmp_path / "settings.sh").write_text("MODE=accurate\n")
    (tmp_path / "task.sh").write_text('echo "$MODE $LEVEL" >> "runs/$1"\n')
    spec = yaml.safe_load((tmp_path / "job.yaml").read_text())
    spec["environment"] = {"setup": ["source settings.sh", "LEVEL=3"]}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(spec))
    script.write_text(Job.from_yaml(tmp_path / "job.yaml").render())
    out = _finished(script, "setup")
    assert _runs(tmp_path) == {i: ["accurate 3"] for i in range(1, 5)}, out


def test_failed_tasks_fail_the_job_with_their_count_and_run_again_when_it_is_resubmitted(cluster, tmp_path):
    # A command a line; two fail until the file "fixed" exists.
    (tmp_path / "commands.txt").write_text("echo one >> ran\n\ntest -e fixed && echo two >> ran\necho three >> ran\n"
                                           "[ -e fixed ] && echo four >> ran\n")
    spec = {"name": "flaky", "profile": "local", "account": "def-test", "kind": "many-tasks",
            "resources": {"time": "10m", "tasks_per_node": 2}, "tasks": {"commands": "commands.txt"}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(spec))
    script = tmp_path / "job.sbatch"
    script.write_text(Job.from_yaml(tmp_path / "job.yaml").render())
    out = _finished(script, "flaky", state="FAILED")
    assert "slurmkit: 2 of 4 tasks succeeded, 2 failed, 0 not run" in out
    (tmp_path / "fixed").write_text("")
    out = _finished(script, "flaky")
    assert "slurmkit: 4 of 4 tasks succeeded, 0 failed, 0 not run" in out
    assert sorted((tmp_path / "ran").read_text().split()) == ["four", "one", "three", "two"]   # the two that passed ran once


# -------------------------------------------------------------- the resume guards, run by bash

def _run_script(script: Path, nodes: int = 1) -> subprocess.CompletedProcess:
    """The rendered script run by bash outside SLURM, with the variables sbatch would set, and
    its runtime beside it, as slurmkit submit writes it (not one an earlier run left elsewhere)."""
    write_runtime(script.parent)
    shape = {"SLURM_CPUS_PER_TASK": "2"} if nodes == 1 else {"SLURM_NTASKS_PER_NODE": "2", "SLURM_CPUS_PER_TASK": "1"}
    env = {**os.environ, "SLURM_SUBMIT_DIR": str(script.parent), "SLURM_NNODES": str(nodes), **shape, "SLURM_JOB_ID": "1"}
    return subprocess.run(["bash", str(script)], cwd=script.parent, env=env, capture_output=True, text=True, timeout=60)


def test_a_task_file_changed_after_the_joblog_began_is_refused_but_lines_added_at_its_end_run(cluster, tmp_path):
    script = _many_tasks(tmp_path, "guard", 4, 0, profile="generic", tasks_per_node=2)
    assert _run_script(script).returncode == 0
    with (tmp_path / "tasks.txt").open("a") as tasks:
        tasks.write("5\n6\n")
    added = _run_script(script)
    assert added.returncode == 0, added.stderr
    assert "6 of 6 tasks succeeded" in added.stderr
    assert all(len(lines) == 2 for lines in _runs(tmp_path).values()) and len(_runs(tmp_path)) == 6
    (tmp_path / "tasks.txt").write_text("1\n2\nthree\n4\n5\n6\n")
    changed = _run_script(script)
    assert changed.returncode == 2
    assert "is not the task file the joblogs in" in changed.stderr and "add lines at the end only" in changed.stderr


def test_joblogs_of_a_run_on_another_number_of_nodes_are_not_resumed(cluster, tmp_path):
    script = _many_tasks(tmp_path, "nodes", 4, 0, profile="generic", tasks_per_node=2)
    (tmp_path / "nodes.joblog").mkdir()
    (tmp_path / "nodes.joblog" / "node-1-of-2.log").write_text("Seq\n")
    result = _run_script(script)
    assert result.returncode == 2
    assert "node-1-of-2.log is from a run on another number of nodes" in result.stderr
    assert not (tmp_path / "runs" / "1").exists()


def test_a_joblog_line_cut_short_by_a_kill_is_dropped_before_the_run_resumes(cluster, tmp_path):
    script = _many_tasks(tmp_path, "torn", 3, 0, profile="generic", tasks_per_node=2)
    log = tmp_path / "torn.joblog" / "node-1-of-1.log"
    log.parent.mkdir()
    log.write_text("Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n"
                   "1\t:\t1.0\t0.1\t0\t0\t0\t0\tbash task.sh 1\n2\t:\t1.0")
    result = _run_script(script)
    assert result.returncode == 0, result.stderr
    assert all(len(line.split("\t")) == 9 for line in log.read_text().splitlines())
    assert sorted(_runs(tmp_path)) == [2, 3]       # task 1 was logged whole; task 2's line was torn, so it ran
