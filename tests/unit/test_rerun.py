"""Rerunning an array's failed tasks: the index list, which tasks count as failed, the script's
--array line narrowed to them."""

import pytest

from slurmkit.core.array_ids import array_ids, index_list
from slurmkit.slurm.monitor import JobStatus
from slurmkit.slurm.registry import Submission
from slurmkit.slurm.rerun import CannotRerun, call_files, copy_calls, failed_tasks, rerun_script, runs_calls


@pytest.mark.parametrize("ids, text", [([3, 7, 12], "3,7,12"), ([1, 2, 3, 7, 8], "1-3,7-8"), ([5], "5"),
                                       ([4, 1, 2], "1-2,4"), ([0, 1, 2, 3], "0-3"), ([9, 9, 10], "9-10")])
def test_index_list_compacts_runs_and_reads_back(ids, text):
    assert index_list(ids) == text
    assert array_ids(text) == tuple(sorted(set(ids)))


def _record(**fields) -> Submission:
    return Submission(job_id="50", name="s", folder="/tmp/logs", profile="local", submitted="now", array_size=6, **fields)


def _poll(states):
    def ask(job_ids, folders, array_sizes=None):
        assert list(job_ids) == ["50"] and folders == {"50": "/tmp/logs"}
        return {f"50_{task}": JobStatus(f"50_{task}", state) for task, state in states.items()}
    return ask


def test_failed_tasks_are_those_that_ended_badly_and_open_ones_are_apart():
    states = {0: "COMPLETED", 1: "FAILED", 2: "TIMEOUT", 3: "RUNNING", 4: "OUT_OF_MEMORY", 5: "CANCELLED"}
    assert failed_tasks(_record(), _poll(states)) == ([1, 2, 4, 5], [3])


def test_failed_tasks_of_an_array_with_its_own_ids():
    record = _record(array_ids="1-9:4")
    ask = lambda ids, folders, array_sizes=None: {"50_1": JobStatus("50_1", "NODE_FAIL"),  # noqa: E731
                                                  "50_5": JobStatus("50_5", "COMPLETED"),
                                                  "50_9": JobStatus("50_9", "FAILED")}
    assert failed_tasks(record, ask) == ([1, 9], [])


def test_nothing_failed_is_an_empty_list():
    assert failed_tasks(_record(), _poll({i: "COMPLETED" for i in range(6)})) == ([], [])


def test_rerun_script_narrows_the_array_line_and_keeps_the_throttle():
    script = "#!/bin/bash\n#SBATCH --job-name=s\n#SBATCH --array=0-5%2\n#SBATCH --time=00:05:00\necho\n"
    assert rerun_script(script, [1, 4]) == script.replace("--array=0-5%2", "--array=1,4%2")
    assert "--array=3-5\n" in rerun_script(script.replace("%2", ""), [3, 4, 5])


def test_rerun_script_without_an_array_line_is_refused():
    with pytest.raises(CannotRerun, match="no '#SBATCH --array=' line"):
        rerun_script("#!/bin/bash\necho\n", [1])


def test_a_function_arrays_script_is_narrowed_like_a_scripts():
    script = "#!/bin/bash\n#SBATCH --array=0-49%50\nsrun python -u -m submitit.core._submit /logs\n"
    assert rerun_script(script, [3, 7]) == script.replace("0-49%50", "3,7%50") and runs_calls(script)


def test_a_function_arrays_rerun_is_refused_when_a_failed_calls_pickle_is_gone(tmp_path):
    (tmp_path / "50_3_submitted.pkl").write_bytes(b"call")
    record = _record()._replace(folder=str(tmp_path))
    assert call_files(record, [3]) == [tmp_path / "50_3_submitted.pkl"]
    with pytest.raises(CannotRerun, match=r"the call of task 7 is gone .*call map_array again with the failed items"):
        call_files(record, [3, 7])


def test_each_failed_call_is_copied_under_the_reruns_task_id(tmp_path):
    for task in (3, 7):
        (tmp_path / f"50_{task}_submitted.pkl").write_bytes(f"call {task}".encode())
    copy_calls(call_files(_record()._replace(folder=str(tmp_path)), [3, 7]), [3, 7], "61")
    assert [(tmp_path / f"61_{task}_submitted.pkl").read_bytes() for task in (3, 7)] == [b"call 3", b"call 7"]
    assert not list(tmp_path.glob(".*tmp"))
