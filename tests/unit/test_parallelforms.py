"""GNU Parallel's command lines in job scripts: --jobs in each spelling as the many-tasks shape,
and its argument groups as task lines (a decision table each)."""

import pytest

from slurmkit.port import parallelforms
from slurmkit.port.porting import import_script


@pytest.mark.parametrize("jobs, cpus, tasks, todo", [
    (None, 16, None, False), ("0", 16, None, False), ("100%", 16, None, False), ("$SLURM_CPUS_PER_TASK", 16, None, False),
    ("${SLURM_CPUS_PER_TASK}", 16, None, False), ("$(nproc)", 16, None, False), ("8", 16, 8, False), ("50%", 16, 8, False),
    ("25%", 16, 4, False), ("-2", 16, 14, False), ("+4", 16, 20, False), ("$SLURM_NTASKS", 16, -1, False),
    ("procfile", 16, None, True), ("$N", 16, None, True), ("$N", 16, 6, False),
])
def test_jobs_in_every_spelling(jobs, cpus, tasks, todo):
    slots = parallelforms.slots(jobs, cpus, {"N": "6"} if tasks == 6 else {})
    assert (slots.tasks, slots.todo) == (tasks, todo)


@pytest.mark.parametrize("count, cpus, expected", [(8, 16, (8, 2)), (16, 16, (16, 1)), (3, 16, (3, 5)), (32, 16, (16, 1))])
def test_the_cores_are_shared_out_whole(count, cpus, expected):
    tasks, each, said = parallelforms.shape(count, cpus)
    assert (tasks, each) == expected
    assert bool(said) == (cpus % count != 0 or count > cpus)


@pytest.mark.parametrize("raw, words", [
    ("{1..4}", ["1", "2", "3", "4"]), ("{0..10..5}", ["0", "5", "10"]), ("{3..1}", ["3", "2", "1"]),
    ("$(seq 3)", ["1", "2", "3"]), ("$(seq 2 4)", ["2", "3", "4"]), ("`seq 1 2 5`", ["1", "3", "5"]),
    ("alpha", ["alpha"]), ("'a b'", ["a b"]), ("*.dat", None), ("$X", None), ("$(ls)", None), ("{a,b}", None),
])
def test_words_bash_makes_with_certainty(raw, words):
    assert parallelforms.expanded(raw) == words


def test_groups_combine_as_gnu_parallel_does():
    assert parallelforms.task_lines([(":::", ["a", "b"]), (":::", ["x", "y"])]) == [["a", "x"], ["a", "y"], ["b", "x"], ["b", "y"]]
    assert parallelforms.task_lines([(":::", ["a", "b"]), (":::+", ["x", "y"])]) == [["a", "x"], ["b", "y"]]
    assert parallelforms.task_lines([(":::", ["a", "b"]), (":::+", ["x"])]) is None


HEAD = "#!/bin/bash\n#SBATCH --account=def-x\n#SBATCH --time=1:00:00\n#SBATCH --cpus-per-task=16\n"


def test_jobs_that_do_not_divide_the_cores_run_as_many_at_a_time_as_before():
    """Before, -j 3 on 16 cores ran one task at a time: the spec lost the script's parallelism."""
    spec = import_script(HEAD + "parallel -j 3 ./p {} ::: a b c\n", name="t", profile="cedar").spec
    assert (spec["resources"]["tasks_per_node"], spec["resources"]["cpus_per_task"]) == (3, 5)


def test_jobs_read_from_a_file_are_one_to_do():
    imported = import_script(HEAD + "parallel --jobs procfile ./p {} ::: a b\n", name="t", profile="cedar")
    assert imported.spec["kind"] == "many-tasks" and imported.spec["resources"]["tasks_per_node"] == 16
    assert [n.line for n in imported.unmapped] == [5] and "procfile" in imported.unmapped[0].reason


def test_a_cat_pipe_into_parallel_reads_the_file_as_four_colons_do():
    spec = import_script(HEAD + "cat list.txt | parallel ./p {}\n", name="t", profile="cedar").spec
    assert spec["kind"] == "many-tasks" and spec["tasks"] == {"arguments": "list.txt"}


def test_an_input_file_named_by_a_variable_runs_as_written():
    spec = import_script(HEAD + "parallel ./p {} :::: list_$X.txt\n", name="t", profile="cedar").spec
    assert spec["kind"] != "many-tasks" and "tasks" not in spec


def test_two_groups_become_columns_and_whole_line_placeholders_stay_as_written():
    imported = import_script(HEAD + "parallel ./p {1} {2} ::: a b ::: x y\n", name="t", profile="cedar")
    assert imported.spec["tasks"]["separator"] == "\t" and imported.files[0][1] == "a\tx\na\ty\nb\tx\nb\ty\n"
    assert "tasks" not in import_script(HEAD + "parallel ./p {} ::: a b ::: x y\n", name="t", profile="cedar").spec
