"""The handle protocol's pieces that need no cluster (the cluster tests: tests/integration/test_handles_on_cluster.py)."""

import subprocess
import sys

import pytest

import slurmkit
from slurmkit.slurm import handles, outcomes
from slurmkit.slurm.handles import JobFailed, WaitTimeout, sweep_result, sweep_state
from slurmkit.slurm.monitor import JobStatus
from slurmkit.slurm.registry import Submission, record


def st(job_id, state, code=None, **more):
    return JobStatus(job_id, state, code, **more)


@pytest.mark.parametrize("states, expected", [
    ([("PENDING", None)] * 3, "PENDING"),
    ([("RUNNING", None), ("PENDING", None)], "RUNNING"),
    ([("COMPLETED", 0), ("PENDING", None)], "RUNNING"),          # some ended, some wait: the array is under way
    ([("COMPLETED", 0)] * 3, "COMPLETED"),
    ([("COMPLETED", 0), ("OUT_OF_MEMORY", None), ("FAILED", 1)], "OUT_OF_MEMORY"),
    ([], "UNKNOWN"),
])
def test_a_sweeps_state_in_one_word(states, expected):
    assert sweep_state([st(f"9_{i}", s, c) for i, (s, c) in enumerate(states)]) == expected


class FakeTask:
    def __init__(self, job_id, err=None, out=None):
        self.job_id, self._err, self._out = job_id, err, out

    def stderr(self):
        return self._err

    def stdout(self):
        return self._out


def test_a_sweeps_result_is_every_exit_status_or_names_the_failed_tasks():
    tasks = [FakeTask("9_0"), FakeTask("9_1", err="".join(f"e{i}\n" for i in range(30))), FakeTask("9_2")]
    assert sweep_result(tasks, [st("9_0", "COMPLETED", 0), st("9_1", "COMPLETED", 0), st("9_2", "COMPLETED", 0)]) == [0, 0, 0]
    with pytest.raises(JobFailed) as caught:
        sweep_result(tasks, [st("9_0", "COMPLETED", 0), st("9_1", "FAILED", 2), st("9_2", "TIMEOUT")])
    assert caught.value.failed == ("9_1", "9_2")
    text = str(caught.value)
    assert text.startswith("2 task(s) of job 9 failed (9_1, 9_2); the first, job 9_1: FAILED exit 2\n")
    assert text.endswith("e10\n" + "".join(f"e{i}\n" for i in range(11, 30)).rstrip("\n"))


def test_a_completed_job_whose_outputs_were_not_saved_is_a_failure():
    with pytest.raises(JobFailed) as caught:
        handles.script_result(FakeTask("5", out="done\n"), st("5", "COMPLETED", 0, unsaved=("results: no space",)))
    assert "outputs NOT saved: results: no space" in str(caught.value) and str(caught.value).endswith("done")


def test_logs_of_several_tasks_are_headed_like_tail_does():
    tasks = [FakeTask("9_0", out="a\n"), FakeTask("9_1"), FakeTask("9_2", out="c\n")]
    assert handles.joined_logs(tasks, "stdout") == "==> 9_0 <==\na\n\n==> 9_2 <==\nc\n"
    assert handles.joined_logs([FakeTask("9_0")], "stdout") is None


class FakeWatcher:
    """Answers as the real watcher would, ending one more job each poll."""

    def __init__(self, order):
        self.order, self.polls = list(order), 0

    def update(self):
        self.polls += 1

    def status_of(self, job_id):
        ended = self.order[:self.polls]
        return st(job_id, "COMPLETED" if job_id.split("_")[0] in ended else "RUNNING", 0)


def test_as_completed_yields_in_the_order_jobs_end_and_times_out(monkeypatch):
    from slurmkit.slurm.submit import JobHandle

    monkeypatch.setattr(JobHandle, "watcher", FakeWatcher(["2", "3", "1"]))
    monkeypatch.setattr(outcomes.time, "sleep", lambda _s: None)
    jobs = [FakeTask("1"), FakeTask("2"), type("Sweep", (), {"job_id": "3", "tasks": [FakeTask("3_0"), FakeTask("3_1")]})()]
    assert [h.job_id for h in slurmkit.as_completed(jobs)] == ["2", "3", "1"]

    monkeypatch.setattr(JobHandle, "watcher", FakeWatcher([]))
    monkeypatch.setattr(outcomes.time, "monotonic", iter(range(0, 1000, 10)).__next__)
    with pytest.raises(WaitTimeout, match=r"job 1 2 had not ended"):
        list(slurmkit.as_completed([FakeTask("1"), FakeTask("2")], timeout=25))


def _record(path, job_id, **fields):
    record(Submission(job_id=job_id, name="n", folder="/tmp/f", profile="local", submitted="2026-01-01T00:00:00Z", **fields), path)


def test_tracked_folds_the_links_of_a_chain_into_one_handle(tmp_path, monkeypatch):
    path = tmp_path / "jobs.jsonl"
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(path))
    _record(path, "10")
    _record(path, "11", chain="11", link=1, links=3)
    _record(path, "12", array_size=4)
    _record(path, "13", chain="11", link=2, links=3)
    _record(path, "14", chain="11", link=3, links=3)
    tracked = slurmkit.tracked()
    assert [(type(h).__name__, h.job_id) for h in tracked] == [("JobHandle", "10"), ("ChainHandle", "11"), ("SweepHandle", "12")]
    assert [link.job_id for link in tracked[1].links] == ["11", "13", "14"]
    assert [t.job_id for t in tracked[2].tasks] == ["12_0", "12_1", "12_2", "12_3"]
    assert [h.job_id for h in slurmkit.tracked(limit=2)] == ["11", "12"]   # a chain counts once


def test_tracked_folds_the_parts_of_a_split_sweep_into_one_handle(tmp_path, monkeypatch):
    path = tmp_path / "jobs.jsonl"
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(path))
    _record(path, "20", array_size=3, offset=0, parts=2)
    _record(path, "21")
    _record(path, "22", array_size=2, offset=3, parts=2, sweep="20")
    tracked = slurmkit.tracked()
    assert [(type(h).__name__, h.job_id) for h in tracked] == [("SweepHandle", "20"), ("JobHandle", "21")]
    assert (tracked[0].size, tracked[0].parts) == (5, ["20", "22"])
    assert [t.job_id for t in tracked[0].tasks] == ["20_0", "20_1", "20_2", "22_0", "22_1"]


def test_a_function_spec_needs_no_launch(tmp_path):
    from slurmkit.api.functions import FUNCTION_LAUNCH, function_job

    data = {"name": "fn", "profile": "local", "resources": {"time": "5m"}}
    assert function_job(data).spec.launch.command == (FUNCTION_LAUNCH["command"],)
    path = tmp_path / "fn.yaml"
    path.write_text("name: fn\nprofile: local\nresources: {time: 5m, memm: 1G}\n")
    with pytest.raises(slurmkit.core.errors.SpecError, match=r"fn.yaml:3: resources.memm: unknown key"):
        function_job(path)


def test_every_handle_has_the_protocol():
    from slurmkit.slurm.submit import ChainHandle, JobHandle, SweepHandle

    for cls in (JobHandle, SweepHandle, ChainHandle):
        for name in ("state", "done", "wait", "result", "cancel", "stdout", "stderr"):
            assert hasattr(cls, name), (cls.__name__, name)


def test_the_package_is_typed_and_its_handles_import_lazily():
    from pathlib import Path

    assert (Path(slurmkit.__file__).parent / "py.typed").is_file()
    loaded = subprocess.run([sys.executable, "-c", "import sys, slurmkit; slurmkit.as_completed; slurmkit.tracked; "
                             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('submitit', 'rich')))"],
                            capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
