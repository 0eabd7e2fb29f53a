"""A spec's every error in one run: three typos are three lines with their lines and
did-you-means, not three runs; render and submit list them too and write nothing."""

import json
import textwrap

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.core.errors import MAX_ERRORS_SHOWN, SpecError, SpecErrors
from slurmkit.spec.spec import load_spec, spec_from_mapping

THREE_TYPOS = """
    name: train
    profile: nibi
    account: def-someprof
    kind: gpuu
    resources:
      time: 3hh
      gpus: h100:1
      memm: 8G
    launch: {command: python train.py, launcer: srun}
"""


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("SLURMKIT_PROFILE", "CC_CLUSTER", "SLURM_CLUSTER_NAME", "SBATCH_ACCOUNT", "SLURM_ACCOUNT"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "job.yaml").write_text(textwrap.dedent(THREE_TYPOS).lstrip("\n"))


def test_every_independent_error_is_raised_at_once_in_file_order():
    with pytest.raises(SpecErrors) as caught:
        load_spec("job.yaml")
    assert [(error.line, error.keypath) for error in caught.value.errors] == [
        (4, "kind"), (6, "resources.time"), (8, "resources.memm"), (9, "launch.launcer")]
    assert "did you mean 'gpu'?" in caught.value.errors[0].message
    assert "did you mean 'mem'?" in caught.value.errors[2].message
    assert "did you mean 'launcher'?" in caught.value.errors[3].message
    assert str(caught.value).splitlines() == [error.message for error in caught.value.errors]


def test_one_error_is_still_a_plain_spec_error():
    with pytest.raises(SpecError) as caught:
        spec_from_mapping({"name": "x", "resources": {"time": "1h"}, "launch": "true", "kind": "gpuu"}, source="j.yaml")
    assert type(caught.value) is SpecError


def test_a_misspelt_required_key_is_one_error_not_two():
    data = {"name": "x", "resources": {"tme": "1h"}, "launch": {"comand": "true"}}
    with pytest.raises(SpecErrors) as caught:
        spec_from_mapping(data, source="j.yaml")
    assert [error.keypath for error in caught.value.errors] == ["resources.tme", "launch.comand"]


def test_an_error_that_makes_the_rest_meaningless_stops_its_part():
    """A section that is not a mapping says so once; its fields are not checked one by one."""
    with pytest.raises(SpecError) as caught:
        spec_from_mapping({"name": "x", "resources": [1, 2], "launch": "true"}, source="j.yaml")
    assert type(caught.value) is SpecError and caught.value.keypath == "resources"


def test_many_errors_are_capped_with_a_count_of_the_rest():
    data = {"name": "x", "resources": {"time": "1h", **{f"bad{i}": 1 for i in range(MAX_ERRORS_SHOWN + 5)}}, "launch": "true"}
    with pytest.raises(SpecErrors) as caught:
        spec_from_mapping(data, source="j.yaml")
    messages = caught.value.messages()
    assert len(messages) == MAX_ERRORS_SHOWN + 1 and messages[-1] == "and 5 more errors"


@pytest.mark.parametrize("command", [["check", "job.yaml"], ["render", "job.yaml", "-o", "out.sbatch"],
                                     ["submit", "job.yaml"], ["submit", "job.yaml", "--dry-run"]])
def test_check_render_and_submit_list_every_error_and_write_nothing(tmp_path, command):
    before = sorted(p.name for p in tmp_path.iterdir())
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert [line.split(": ")[2] for line in errors] == ["kind", "resources.time", "resources.memm", "launch.launcer"]
    assert all(line.startswith("error: job.yaml:") for line in errors)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_check_json_carries_every_error():
    result = CliRunner().invoke(main, ["check", "job.yaml", "--json"])
    error = json.loads(result.stdout)["error"]
    assert error["field"] == "kind" and [each["line"] for each in error["errors"]] == [4, 6, 8, 9]


NAMES_AND_KEYS = """
    name: train
    profile: {profile}
    account: def-someprof
    resources:
      time: 1h
      cpus: 2
      gpus: {gpus}
    launch: {{comand: python train.py}}
"""


@pytest.mark.parametrize("profile, gpus, expected", [
    ("fri", "h100:1", [(2, "profile", "no site profile named 'fri' (did you mean 'fir'?)")]),
    ("fir", "h101:1", [(7, "resources.gpus", "fir has no GPU called 'h101'; did you mean 'h100'?")]),
    ("fir", "h100:1", []),
])
def test_names_only_the_site_can_judge_are_listed_with_the_key_errors(tmp_path, profile, gpus, expected):
    """A misspelt profile or GPU model is an error of the same run as a misspelt key: check
    used to stop at the keys, and the next run found the profile, the one after the GPU."""
    (tmp_path / "job.yaml").write_text(textwrap.dedent(NAMES_AND_KEYS.format(profile=profile, gpus=gpus)).lstrip("\n"))
    result = CliRunner().invoke(main, ["check", "job.yaml"])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    keys = [(6, "resources.cpus", "unknown key; did you mean 'cpus_per_task'?"),
            (8, "launch.comand", "unknown key; did you mean 'command'?")]
    wanted = sorted(keys + expected)
    assert len(errors) == len(wanted), errors
    for line, (number, field, words) in zip(errors, wanted):
        assert line.startswith(f"error: job.yaml:{number}: {field}: {words}"), line


def test_a_profile_the_spec_misnames_is_an_error_at_its_line_with_the_profile_code(tmp_path):
    (tmp_path / "job.yaml").write_text("name: t\nprofile: fri\nresources: {time: 1h}\nlaunch: {command: 'true'}\n")
    result = CliRunner().invoke(main, ["check", "job.yaml", "--json"])
    error = json.loads(result.stdout)["error"]
    assert (result.exit_code, error["code"], error["line"], error["field"]) == (2, "profile-not-found", 2, "profile")


@pytest.mark.parametrize("word, meant", [("cpus", "cpus_per_task"), ("tasks", "tasks_per_node"), ("cpus-per-task", "cpus_per_task"),
                                         ("gpu", "gpus"), ("MEM", "mem")])
def test_the_did_you_mean_prefers_the_key_the_word_begins(word, meant):
    with pytest.raises(SpecError) as caught:
        spec_from_mapping({"name": "x", "resources": {"time": "1h", word: 1}, "launch": "true"}, source="j.yaml")
    assert f"did you mean '{meant}'?" in caught.value.message
