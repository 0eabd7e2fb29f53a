"""A SLURM configuration that cannot be read is told at once and never retried (core/slurmconf.py):
the decision table, and each place a SLURM command runs (run_slurm, profiles detect's commands,
the monitor, adopting interrupted submissions), without a cluster."""

import os
import stat

import pytest

from slurmkit.cli.json_output import error_code
from slurmkit.core.errors import SlurmConfigError
from slurmkit.core.slurmconf import check_slurm_conf, conf_problem, config_failure
from slurmkit.sites.detect import run_command
from slurmkit.slurm.monitor import Watch, poll
from slurmkit.slurm.registry import adopt_interrupted, intent, record
from slurmkit.slurm.slurmcli import SchedulerError, run_slurm

#: what Slurm 22.05's sinfo prints for an empty SLURM_CONF (captured on the local cluster).
EMPTY_CONF = ('sinfo: s_p_parse_file: file "/tmp/empty.conf" is empty\n'
              "sinfo: error: ClusterName needs to be specified\n"
              "sinfo: fatal: Unable to process configuration file\n")


def _counting_command(tmp_path, name, body):
    """A stand-in SLURM command that counts its runs in ``<name>.runs``."""
    path = tmp_path / name
    path.write_text(f"#!/bin/bash\necho run >> {tmp_path / (name + '.runs')}\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def _runs(tmp_path, name) -> int:
    counted = tmp_path / (name + ".runs")
    return len(counted.read_text().splitlines()) if counted.exists() else 0


# --------------------------------------------------------------------------- the decision

@pytest.mark.parametrize("make, said", [
    (lambda tmp: tmp / "missing" / "slurm.conf", "names no file"),
    (lambda tmp: tmp, "is a folder, not a slurm.conf"),
    (lambda tmp: (os.mkfifo(tmp / "fifo"), tmp / "fifo")[1], "is not a regular file"),
])
def test_a_slurm_conf_that_names_no_readable_file_is_one_line_naming_the_variable_and_the_file(tmp_path, make, said):
    conf = make(tmp_path)
    problem = conf_problem({"SLURM_CONF": str(conf)})
    assert isinstance(problem, SlurmConfigError) and problem.exit_code == 1
    assert problem.message.startswith(f"SLURM_CONF={conf} {said}: ") and "\n" not in problem.message
    assert error_code(problem) == "slurm-config-unreadable"


def test_an_unset_or_readable_slurm_conf_is_no_problem(tmp_path):
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=lab\n")
    assert conf_problem({}) is None and conf_problem({"SLURM_CONF": ""}) is None
    assert conf_problem({"SLURM_CONF": str(conf)}) is None
    check_slurm_conf({"SLURM_CONF": str(conf)})


def test_slurms_own_words_for_a_configuration_it_cannot_parse_are_a_config_error_and_others_are_not(tmp_path):
    conf = tmp_path / "empty.conf"
    conf.write_text("")
    error = config_failure(EMPTY_CONF, {"SLURM_CONF": str(conf)})
    assert isinstance(error, SlurmConfigError)
    assert error.message.startswith(f"SLURM's commands cannot read their configuration (SLURM_CONF={conf}): "
                                    's_p_parse_file: file "/tmp/empty.conf" is empty; ClusterName needs to be specified; '
                                    "Unable to process configuration file; ")
    assert config_failure("squeue: error: Unable to contact slurm controller (connect failure)\n", {}) is None
    assert config_failure("sbatch: error: Batch job submission failed: Invalid account\n", {}) is None


# ----------------------------------------------------------------- where SLURM commands run

def test_run_slurm_runs_nothing_when_slurm_conf_names_no_file(tmp_path):
    command = _counting_command(tmp_path, "squeue", "echo 1")
    slept = []
    with pytest.raises(SlurmConfigError, match="SLURM_CONF=/nowhere/slurm.conf names no file"):
        run_slurm([command], env={"SLURM_CONF": "/nowhere/slurm.conf", "PATH": os.environ["PATH"]}, sleep=slept.append)
    assert _runs(tmp_path, "squeue") == 0 and slept == []


def test_run_slurm_never_retries_a_configuration_slurm_could_not_parse(tmp_path, monkeypatch):
    conf = tmp_path / "empty.conf"
    conf.write_text("")
    monkeypatch.setenv("SLURM_CONF", str(conf))
    command = _counting_command(tmp_path, "sbatch", f"printf '%s' '{EMPTY_CONF}' >&2; exit 1")
    slept = []
    with pytest.raises(SlurmConfigError) as raised:
        run_slurm([command], retry_for=60.0, sleep=slept.append, failed="sbatch refused the job")
    assert not isinstance(raised.value, SchedulerError)    # no retry loop of the slurm layer catches it
    assert _runs(tmp_path, "sbatch") == 1 and slept == []
    assert "sbatch refused the job" not in raised.value.message


def test_profiles_detect_commands_run_nothing_when_slurm_conf_names_no_file(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "gone.conf"))
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    _counting_command(tmp_path, "scontrol", "echo ClusterName=lab")
    with pytest.raises(SlurmConfigError, match="gone.conf names no file"):
        run_command(["scontrol", "show", "config"])
    assert _runs(tmp_path, "scontrol") == 0


def test_status_and_watch_stop_at_the_first_poll_without_asking_again(monkeypatch):
    monkeypatch.setenv("SLURM_CONF", "/nowhere/slurm.conf")
    asked = []

    def slurm(argv):
        asked.append(argv[0])
        return run_slurm(argv, retry_for=0.0).stdout

    with pytest.raises(SlurmConfigError):
        poll(["1"], run=slurm)
    slept = []
    with pytest.raises(SlurmConfigError):
        next(iter(Watch(["1"], run=slurm, sleep=slept.append)))
    assert asked == ["sacct", "sacct"] and slept == []   # neither squeue next nor a second poll


def test_an_interrupted_submission_is_not_looked_up_through_a_configuration_that_cannot_be_read(tmp_path):
    path = tmp_path / "jobs.jsonl"
    record(intent("n", "/f", "local", "tok1")._replace(pid=999999999), path)
    unreadable = SlurmConfigError("SLURM_CONF=/nowhere names no file")

    def lookup(since):
        raise unreadable

    said, failed = [], []
    adopt_interrupted(said.append, path, lookup=lookup, on_error=failed.append)
    assert failed == [unreadable] and said == []    # the caller's one error, not a warning before it
    with pytest.raises(SlurmConfigError):
        adopt_interrupted(said.append, path, lookup=lookup)


def test_check_says_when_slurm_conf_names_no_file_instead_of_no_problems(tmp_path, monkeypatch):
    """With $SLURM_CONF naming no file check said "no problems found": it could ask nothing."""
    import yaml
    from click.testing import CliRunner

    from slurmkit.cli.main import main

    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "gone" / "slurm.conf"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.yaml").write_text(yaml.safe_dump({"name": "c", "profile": "local", "account": "def-test", "kind": "serial",
                                                        "resources": {"time": "15m"}, "launch": {"command": "true"}}))
    result = CliRunner().invoke(main, ["check", "job.yaml"])
    assert result.exit_code == 0
    assert "warning: job.yaml:" in result.output and "check could not tell which cluster this host is on" in result.output
    assert f"SLURM_CONF={tmp_path / 'gone' / 'slurm.conf'} names no file" in result.output
    assert "no problems found" not in result.output
