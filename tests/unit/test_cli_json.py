"""Every ``--json`` prints one JSON document on stdout with ``"schema": 1``: the result (empty
lists as ``[]``), or an error object with a stable code a script may branch on. SLURM is faked at
``run_slurm`` as in test_cli_run.py; the real commands are exercised in tests/faults."""

import importlib
import json
import pkgutil
import re
import subprocess
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import slurmkit
from slurmkit.cli.json_output import ERROR_CODES, SCHEMA, USAGE_CODE, JsonCommand, error_code
from slurmkit.cli.main import main
from slurmkit.core.errors import SlurmkitError
from slurmkit.report import efficiency
from slurmkit.slurm import monitor, slurmcli
from slurmkit.slurm.registry import Submission, record
from slurmkit.slurm.slurmcli import SchedulerError
from tests.unit.test_efficiency import SINGLE

DOCS = Path(__file__).resolve().parents[2] / "docs" / "json.md"

GOOD_SPEC = """\
name: hello
profile: local
account: def-lab
kind: serial
resources: {time: 10m}
launch: {command: echo hi}
"""


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """An empty folder, an empty registry and user config, no cluster variables."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "jobs.jsonl"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for variable in ("SLURMKIT_PROFILE", "CC_CLUSTER", "SLURM_CLUSTER_NAME", "SBATCH_ACCOUNT", "SLURM_ACCOUNT"):
        monkeypatch.delenv(variable, raising=False)


def document(*args, exit_code=0):
    """Run ``slurmkit ARGS``; its stdout parsed as the one JSON document, schema 1, exit as given."""
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == exit_code, (result.stdout, result.stderr)
    data = json.loads(result.stdout)
    assert isinstance(data, dict) and data["schema"] == SCHEMA == 1
    return data


def error_of(*args, exit_code):
    data = document(*args, exit_code=exit_code)
    assert set(data) == {"schema", "error"}
    return data["error"]


def fake_slurm(monkeypatch, answer):
    def run_slurm(argv, **kwargs):
        if isinstance(answer, Exception):
            raise answer
        return subprocess.CompletedProcess(argv, 0, answer, "")

    monkeypatch.setattr(monitor, "run_slurm", run_slurm)
    monkeypatch.setattr(slurmcli, "run_slurm", run_slurm)


# ------------------------------------------------------------------------------------- check

def test_check_json_of_a_good_spec_has_the_schema_and_no_findings():
    Path("job.yaml").write_text(GOOD_SPEC)
    assert document("check", "job.yaml", "--json") == {"schema": 1, "spec": "job.yaml", "findings": []}


def test_check_json_of_an_unknown_key_is_a_located_error_object_and_exit_2():
    Path("job.yaml").write_text(GOOD_SPEC + "zzz_unknown: 1\n")
    error = error_of("check", "job.yaml", "--json", exit_code=2)
    assert (error["code"], error["file"], error["line"], error["field"]) == ("spec-invalid", "job.yaml", 7, "zzz_unknown")
    assert error["message"].startswith("unknown key; allowed: name, profile,")


def test_check_json_of_a_missing_file_is_an_error_object():
    error = error_of("check", "nowhere.yaml", "--json", exit_code=2)
    assert error["code"] == "spec-invalid" and error["file"] == "nowhere.yaml"


def test_check_json_with_an_unknown_profile_is_profile_not_found():
    Path("job.yaml").write_text(GOOD_SPEC)
    error = error_of("check", "job.yaml", "--profile", "nibby", "--json", exit_code=2)
    assert error["code"] == "profile-not-found" and "'nibby'" in error["message"] and "nibi" in error["message"]


def test_a_command_line_error_under_json_is_a_usage_error_object_naming_the_option():
    Path("job.yaml").write_text(GOOD_SPEC)
    assert error_of("check", "job.yaml", "--json", "--xyzzy", exit_code=2) == {
        "code": USAGE_CODE, "message": "No such option '--xyzzy'.", "field": "--xyzzy"}


def test_a_command_line_error_without_json_stays_clicks_usage_text():
    result = CliRunner().invoke(main, ["check", "job.yaml", "--bogus"])
    assert result.exit_code == 2 and result.stdout == "" and "No such option '--bogus'" in result.stderr


# ------------------------------------------------------------------------------------ status

def test_status_json_with_no_jobs_is_an_empty_list_not_a_sentence():
    assert document("status", "--json") == {"schema": 1, "jobs": [], "arrays": []}


def test_status_json_lists_the_jobs(monkeypatch, tmp_path):
    record(Submission(job_id="7", name="train", folder=str(tmp_path), profile="local",
                      submitted="2026-01-01T00:00:00+00:00"))
    fake_slurm(monkeypatch, "7|COMPLETED|0:0|5|node1\n")
    (row,) = document("status", "--json")["jobs"]
    assert (row["job"], row["name"], row["state"], row["exit_code"], row["ok"]) == ("7", "train", "COMPLETED", 0, True)


def test_status_json_when_slurm_does_not_answer_is_an_error_object_and_exit_1(monkeypatch):
    fake_slurm(monkeypatch, SchedulerError("sacct failed: Connection refused"))
    error = error_of("status", "12", "--json", exit_code=1)
    assert error["code"] == "slurm-unreachable" and error["message"].startswith("SLURM is not answering")


def test_status_piped_starts_with_a_header(monkeypatch, tmp_path):
    record(Submission(job_id="7", name="train", folder=str(tmp_path), profile="local",
                      submitted="2026-01-01T00:00:00+00:00"))
    fake_slurm(monkeypatch, "7|COMPLETED|0:0|5|node1\n")
    header, row = CliRunner().invoke(main, ["status"]).stdout.splitlines()
    assert header.split("\t") == ["job", "name", "state", "exit", "elapsed_s", "nodes", "source", "elapsed", "limit",
                                   "left", "reason", "outputs"]
    assert row.split("\t")[:3] == ["7", "train", "COMPLETED"]


# ------------------------------------------------------------------------------------ report

def test_report_json_has_the_schema_jobs_summary_and_gauges(monkeypatch):
    monkeypatch.setattr(efficiency, "report_for", lambda job_id, **kw: efficiency.parse(SINGLE))
    data = document("report", "49", "--json")
    assert set(data) == {"schema", "jobs", "summary", "gauges", "gpu_use"} and data["jobs"][0]["job_id"] == "49" and data["summary"] is None
    assert data["gpu_use"] == {}   # no GPUs asked, no samples: nothing to say


def test_report_json_of_an_unknown_job_is_an_error_object(monkeypatch):
    monkeypatch.setattr(efficiency, "report_for", _no_record)
    error = error_of("report", "99999", "--json", exit_code=1)
    assert error == {"code": "slurm-failed", "message": "sacct has no record of job 99999"}


def test_report_json_of_a_bad_job_id_is_a_usage_error_naming_the_argument():
    error = error_of("report", "abc", "--json", exit_code=2)
    assert error["code"] == USAGE_CODE and error["field"] == "JOBID" and "'abc' is not a job id" in error["message"]


def _no_record(job_id, **kwargs):
    raise SchedulerError(f"sacct has no record of job {job_id}")


# ---------------------------------------------------------------------------------- profiles

def test_profiles_list_json_has_the_profiles_and_no_errors():
    data = document("profiles", "list", "--json")
    assert data["errors"] == [] and "nibi" in [entry["name"] for entry in data["profiles"]]


def test_profiles_list_json_puts_a_broken_profile_in_errors_and_exits_2():
    Path("site_profiles").mkdir()
    Path("site_profiles/mine.yaml").write_text("name: mine\nstatus: {state: in-sevice}\n")
    data = document("profiles", "list", "--json", exit_code=2)
    (error,) = data["errors"]
    assert (error["code"], error["line"], error["field"]) == ("profile-invalid", 2, "status.state")
    assert error["file"].endswith("site_profiles/mine.yaml") and "did you mean 'in-service'" in error["message"]
    assert "nibi" in [entry["name"] for entry in data["profiles"]]


def test_profiles_show_json_has_the_merged_profile():
    data = document("profiles", "show", "nibi", "--json")
    assert (data["name"], data["chosen_by"], data["profile"]["name"]) == ("nibi", None, "nibi")


def test_profiles_show_json_of_an_unknown_name_is_profile_not_found():
    error = error_of("profiles", "show", "nibby", "--json", exit_code=2)
    assert error["code"] == "profile-not-found" and "did you mean 'nibi'" in error["message"]


# ------------------------------------------------------------------------- the class, not the instance

def _json_commands(command=main, ctx=None, path="slurmkit"):
    """(path, command) of every command in the tree that has a --json option."""
    ctx = ctx or click.Context(main, info_name="slurmkit")
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            yield from _json_commands(sub, click.Context(sub, info_name=name, parent=ctx), f"{path} {name}")
    elif any("--json" in getattr(param, "opts", ()) for param in command.params):
        yield path, command


def test_every_json_command_makes_usage_errors_json_and_is_documented():
    commands = dict(_json_commands())
    assert {"slurmkit check", "slurmkit status", "slurmkit report", "slurmkit profiles list",
            "slurmkit profiles show"} <= set(commands)
    headings = re.findall(r"^## `([^`]+)`", DOCS.read_text(), re.M)
    for path, command in commands.items():
        assert isinstance(command, JsonCommand), path
        assert any(re.fullmatch(rf"{path} [A-Z\[\].]* ?--json", heading) for heading in headings), \
            f"{path} --json is not described in docs/json.md"


def _all_error_classes():
    for module in pkgutil.walk_packages(slurmkit.__path__, "slurmkit."):
        importlib.import_module(module.name)
    found, todo = set(), [SlurmkitError]
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo.extend(cls.__subclasses__())
    return sorted((cls for cls in found if cls.__module__.startswith("slurmkit")), key=lambda cls: cls.__name__)


@pytest.mark.parametrize("cls", _all_error_classes(), ids=lambda cls: cls.__name__)
def test_every_error_class_has_a_code_of_its_own_or_a_specific_ancestors(cls):
    error = cls.__new__(cls)
    assert cls is SlurmkitError or error_code(error) != "failed", f"give {cls.__name__} a code in cli_json.ERROR_CODES"


def test_docs_list_every_error_code_with_its_exit():
    table = dict(re.findall(r"^\| `([a-z-]+)` \| (\d) \|", DOCS.read_text(), re.M))
    assert set(table) == set(ERROR_CODES.values()) | {USAGE_CODE}
    for cls in _all_error_classes():
        assert table[error_code(cls.__new__(cls))] == str(cls.exit_code), cls.__name__


# -------------------------------------------------------------------------------- completion

@pytest.mark.parametrize("words", ["slurmkit render job.yaml --profile ni", "slurmkit profiles show ni"])
def test_shell_completion_offers_the_profile_names(words):
    """What `eval "$(_SLURMKIT_COMPLETE=bash_source slurmkit)"` (docs/json.md) asks for at a TAB."""
    result = CliRunner().invoke(main, [], prog_name="slurmkit", env={
        "_SLURMKIT_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)})
    assert result.stdout.splitlines() == ["plain,niagara", "plain,nibi"]


@pytest.mark.parametrize("command", ["status", "watch", "cancel", "logs", "report"])
def test_shell_completion_offers_the_ids_of_the_jobs_submitted_here(command, tmp_path):
    for job_id, name in (("41", "prep"), ("42", "train"), ("5", "other")):
        record(Submission(job_id=job_id, name=name, folder=str(tmp_path), profile="local",
                          submitted="2026-01-01T00:00:00+00:00"))
    result = CliRunner().invoke(main, [], prog_name="slurmkit", env={
        "_SLURMKIT_COMPLETE": "zsh_complete", "COMP_WORDS": f"slurmkit {command} 4", "COMP_CWORD": "2"})
    assert result.stdout.splitlines() == ["plain", "42", "train", "plain", "41", "prep"]
