"""A spec's own log names (logs.output, logs.error): checked, rendered, imported, submitted and
found again. The cluster half is tests/integration/test_own_logs_on_cluster.py."""

import os
from pathlib import Path

import pytest

from slurmkit import Job
from slurmkit.core.errors import SpecError
from slurmkit.core.logpatterns import at_submit, log_file
from slurmkit.port.porting import import_script
from slurmkit.slurm.jobfiles import job_log_path
from slurmkit.slurm.registry import Submission, _as_record
from slurmkit.slurm.submit import make_log_folders, own_logs, sbatch_command
from slurmkit.spec.spec import spec_from_mapping


def spec(**more):
    data = {"name": "fold", "profile": "generic", "account": "def-x", "resources": {"time": "1h"}, "launch": "python x.py", **more}
    return spec_from_mapping(data, source="job.yaml")


def sweep(logs):
    return spec(kind="array", array={"parameters": {"n": [1, 2]}}, logs=logs)


# ---------------------------------------------------------------------------------- the field

@pytest.mark.parametrize("value", ["logs/%x-%j.out", "out/log-%x-%j.out", "/project/def-x/me/logs/%x-%j.out", "logs/%x.o%A-%a",
                                   "out_files/%j.txt", "%4a-%%.log", "my logs/%u/%x.%N.%n.%s.%t.%J.out"])
def test_sbatch_patterns_are_taken_as_written(value):
    assert spec(logs={"output": value, "error": value}).logs == (value, value)
    assert spec(logs=value).logs == (value, None)          # logs: PATTERN is the output alone


@pytest.mark.parametrize("value,said", [
    ("logs/%q.out", "'%q' is not a symbol sbatch fills in; allowed: sbatch's symbols %% %A %a %J %j %N %n %s %t %u %x"),
    ("logs/run-%", "'%' is not a symbol sbatch fills in"),
    ("logs/%12a.out", "'%12' is not a symbol sbatch fills in"),
    ("logs/%j/out.txt", "its folder holds %j, which sbatch fills in only when the job starts"),
    ("$HOME/logs/%j.out", "sbatch expands no variable or ~ in its file names"),
    ("~/logs/%j.out", "sbatch expands no variable or ~ in its file names"),
    ("logs/", "a folder (it ends with '/')"),
    ("logs/it's.out", "holds \"'\", which sbatch's #SBATCH parser reads otherwise"),
    ("a\\b.out", "holds '\\\\', which sbatch's #SBATCH parser reads otherwise"),
    (" ", "empty: give a file name such as logs/%x-%j.out"),
])
def test_a_bad_pattern_is_one_line_naming_the_field_and_what_is_allowed(value, said):
    for key in ("output", "error"):
        with pytest.raises(SpecError) as caught:
            spec(logs={"output": "ok.out", key: value})
        message = str(caught.value)
        assert message.startswith(f"job.yaml: logs.{key}: {value!r}: ") and said in message and "\n" not in message


def test_logs_needs_an_output_and_knows_only_its_keys():
    with pytest.raises(SpecError, match=r"logs.output: is required"):
        spec(logs={"error": "e.txt"})
    with pytest.raises(SpecError, match=r"logs.out: unknown key; did you mean 'output'\? allowed: output, error"):
        spec(logs={"out": "o.txt"})


# ---------------------------------------------------------------------------------- rendering

def header(job_spec):
    return [line for line in Job(job_spec).render().splitlines() if line.startswith(("#SBATCH --output", "#SBATCH --error"))]


def test_the_header_says_the_specs_logs_quoted_instead_of_slurmkits():
    assert header(spec()) == ["#SBATCH --output=%x-%j.out"]
    assert header(spec(logs={"output": "out/log-%x-%j.out"})) == ["#SBATCH --output=out/log-%x-%j.out"]
    assert header(spec(logs={"output": "my logs/%x.o%j", "error": "my logs/%x.e%j"})) == [
        "#SBATCH --output='my logs/%x.o%j'", "#SBATCH --error='my logs/%x.e%j'"]


def test_an_array_gets_its_own_pattern_not_slurmkits():
    assert header(sweep(None)) == ["#SBATCH --output=%x-%A_%a.out"]
    assert header(sweep({"output": "logs/%x.o%A-%a"})) == ["#SBATCH --output=logs/%x.o%A-%a"]


# ---------------------------------------------------------------------------------- check

def warnings_of(job_spec):
    return [(f.field, f.message) for f in Job(job_spec).resolve().findings if f.level == "warning" and f.field.startswith("logs")]


@pytest.mark.parametrize("pattern", ["logs/run.out", "logs/%x-%A.out"])
def test_an_array_whose_tasks_share_one_log_is_warned_with_what_to_do(pattern):
    assert warnings_of(sweep({"output": "logs/%x-%A_%a.out", "error": pattern})) == [
        ("logs.error", f"{pattern!r} names one file for every task of the array (it has no %a): each task writes over the "
                       "others' log; add the task's index, such as logs/%x-%A_%a.out")]


@pytest.mark.parametrize("pattern", ["logs/%x-%A_%a.out", "logs/%x-%j.out", "logs/%x.o%A-%4a"])
def test_an_array_whose_tasks_each_have_a_log_is_not_warned(pattern):
    assert warnings_of(sweep({"output": pattern})) == []


def test_check_errors_on_a_log_folder_that_cannot_be_made(tmp_path):
    (tmp_path / "taken").write_text("a file, not a folder")
    path = tmp_path / "job.yaml"
    path.write_text("name: fold\nprofile: generic\naccount: def-x\nresources: {time: 1h}\nlaunch: python x.py\n"
                    "logs: {output: taken/%x-%j.out}\n")
    errors = [(f.field, f.message) for f in Job.from_yaml(path).check() if f.level == "error"]
    assert errors == [("logs.output", f"the log folder {tmp_path}/taken cannot be made: {tmp_path}/taken is a file, not a "
                                      "folder; choose a folder you can write in logs, or make it first")]


# ---------------------------------------------------------------------------------- import

def imported(*lines):
    return import_script("#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\n" + "\n".join(lines) + "\npython x.py\n",
                         name="job", profile="nibi")


@pytest.mark.parametrize("lines,logs", [
    (["#SBATCH --output=out/log-%x-%j.out"], {"output": "out/log-%x-%j.out"}),
    (["#SBATCH -o logs/%x.o%A-%a", "#SBATCH -e logs/%x.e%A-%a"], {"output": "logs/%x.o%A-%a", "error": "logs/%x.e%A-%a"}),
    (["#SBATCH --out=/project/def-x/me/logs/%x-%j.out --err=e.txt"], {"output": "/project/def-x/me/logs/%x-%j.out",
                                                                     "error": "e.txt"}),
    (["#SBATCH -oout_files/%j.txt"], {"output": "out_files/%j.txt"}),
    (["#SBATCH --error=e-%j.txt"], {"error": "e-%j.txt", "output": "slurm-%j.out"}),   # sbatch's own output name
])
def test_import_keeps_the_scripts_log_names_as_written(lines, logs):
    result = imported(*lines)
    assert result.spec["logs"] == logs
    assert {n.outcome for n in result.notes if n.line == 3} == {"mapped"}
    assert spec_from_mapping(result.spec).logs is not None


@pytest.mark.parametrize("written, spec", [("OUTPUT_R1_08_%.txt", "OUTPUT_R1_08_%%.txt"), ("run-%j-%", "run-%j-%%")])
def test_import_keeps_a_percent_no_symbol_follows_as_sbatch_writes_it(written, spec):
    """sbatch writes ``run_%.txt`` as it is (Slurm 22.05, run): the spec says %%, which gives
    the same file, where a to-do asked for it by hand."""
    result = imported(f"#SBATCH --output={written}")
    assert result.spec["logs"]["output"] == spec
    assert [n.outcome for n in result.notes if n.line == 3] == ["mapped"]


def test_import_makes_a_log_name_a_spec_cannot_hold_a_to_do():
    result = imported("#SBATCH --output=$HOME/logs/%j.out")
    assert "logs" not in result.spec
    assert [(n.outcome, n.reason) for n in result.notes if n.line == 3] == [
        ("to do", "--output=$HOME/logs/%j.out: sbatch expands no variable or ~ in its file names (the job would write to a "
                  "folder named so): write the path out; set logs.output by hand")]


# ---------------------------------------------------------------------------------- submit

def test_sbatch_gets_no_log_options_of_its_own_when_the_script_names_them(tmp_path):
    own = sbatch_command(Path("job.sh"), tmp_path, array=False, own_logs=True)
    assert not [word for word in own if word.startswith(("--output", "--error"))]
    assert [w.split("=")[0] for w in sbatch_command(Path("job.sh"), tmp_path, array=False) if w.startswith("--")][1:3] == [
        "--output", "--error"]


def test_submit_records_absolute_patterns_with_name_and_user_and_makes_their_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("USER", "me")
    monkeypatch.setattr("getpass.getuser", lambda: "me")
    patterns = own_logs(("logs/%u/%x-%j.out", None), "fold", tmp_path)
    assert patterns == (f"{tmp_path}/logs/me/fold-%j.out",)
    make_log_folders(patterns)
    assert (tmp_path / "logs" / "me").is_dir()


def test_a_log_folder_that_cannot_be_made_submits_nothing(tmp_path):
    from slurmkit.slurm.submit import SubmitError

    (tmp_path / "taken").write_text("")
    with pytest.raises(SubmitError, match=r"nothing was submitted: cannot make the log folder .*/taken/in"):
        make_log_folders([f"{tmp_path}/taken/in/%j.out"])


def test_a_jobs_logs_are_found_from_its_id_and_task(tmp_path):
    logs = (f"{tmp_path}/%x.o%A-%3a", f"{tmp_path}/e-%j-%%.txt")
    assert job_log_path(tmp_path, "77_4", "stdout", at_fill(logs)) == tmp_path / "fold.o77-004"
    assert job_log_path(tmp_path, "78", "stderr", at_fill(logs)) == tmp_path / "e-78-%.txt"
    assert job_log_path(tmp_path, "78", "stderr", at_fill(logs[:1])) is None          # stderr joins the output
    assert job_log_path(tmp_path, "78", "stdout") == tmp_path / "78_0_log.out"        # slurmkit's own


def at_fill(logs):
    return tuple(at_submit(pattern, "fold", "me") for pattern in logs)


def test_symbols_known_only_on_the_node_are_found_by_a_glob(tmp_path):
    pattern = f"{tmp_path}/%x-%j-%N.out"
    assert log_file(pattern, "9") == f"{tmp_path}/%x-9-%N.out"          # none there yet: as far as it is known
    (tmp_path / "%x-9-node2.out").write_text("")
    assert log_file(pattern, "9") == f"{tmp_path}/%x-9-node2.out"
    (tmp_path / "run-5.out").write_text("")                              # an array task's own %j is not its array id
    assert log_file(f"{tmp_path}/run-%j.out", "4_1") == f"{tmp_path}/run-5.out"


def test_the_registry_keeps_the_logs_and_reads_older_lines_without_them():
    record = Submission("5", "fold", "/f", "generic", "2026-01-01T00:00:00+00:00", logs=["/a/%j.out", "/a/%j.err"])
    assert _as_record(record._asdict()) == record
    old = {key: value for key, value in record._asdict().items() if key != "logs"}
    assert _as_record(old).logs is None
    assert _as_record({**record._asdict(), "logs": [1]}) is None


def test_a_handle_reads_the_specs_log_not_slurmkits(tmp_path):
    from slurmkit.slurm.submit import JobHandle, SweepHandle

    (tmp_path / "out-12.txt").write_text("mine\n")
    (tmp_path / "12_0_log.out").write_text("slurmkit's\n")
    assert JobHandle(tmp_path, "12", logs=(f"{tmp_path}/out-%j.txt",)).stdout() == "mine\n"
    assert JobHandle(tmp_path, "12").stdout() == "slurmkit's\n"
    (tmp_path / "a-30-1.o").write_text("task one\n")
    sweep_handle = SweepHandle(tmp_path, "30", 2, logs=(f"{tmp_path}/a-%A-%a.o",))
    assert [t.stdout() for t in sweep_handle.tasks] == [None, "task one\n"]
    assert os.path.basename(str(sweep_handle.tasks[1].log_path())) == "a-30-1.o"


@pytest.mark.parametrize("job_id, tasks, task, ids", [
    ("420", 3, None, ["420_0", "420_1", "420_2"]),          # an array's id: every task
    ("420", (1, 3, 5), None, ["420_1", "420_3", "420_5"]),   # array.indices: SLURM's own task ids
    ("420", (1, 3, 5), 3, ["420_3"]),
    ("420_3", 5, None, ["420_3"]),                           # a task: its own
    ("420", None, None, ["420"]),                            # a job
    ("420+1", None, None, ["420"]),                          # a het job's component: its job's logs
])
def test_the_ids_whose_logs_a_job_id_stands_for(job_id, tasks, task, ids):
    from slurmkit.slurm.jobfiles import job_log_ids

    assert job_log_ids(job_id, tasks, task) == ids
    assert [job_log_path("/l", i, "stdout").name for i in ids] == [f"{i}_0_log.out" for i in ids]
