"""Rerunning an array's failed tasks: the index list, which tasks count as failed, the script's
--array line narrowed to them."""

import pytest

from slurmkit.core.array_ids import array_ids, index_list
from slurmkit.slurm.monitor import JobStatus
from slurmkit.slurm.registry import Submission
from slurmkit.slurm.rerun import CannotRerun, failed_tasks, rerun_script


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


def test_a_function_arrays_script_is_refused_with_what_to_do():
    script = "#!/bin/bash\n#SBATCH --array=0-49%50\nsrun python -u -m submitit.core._submit /logs\n"
    with pytest.raises(CannotRerun, match="call map_array again with the failed items"):
        rerun_script(script, [7])
