"""A SLURM configuration that cannot be read, on the real local cluster (Slurm 22.05): every
command that talks to SLURM says so in one line and exits 1, and no SLURM command is retried.

SLURM's own commands, given a ``SLURM_CONF`` that names no file, retry for 60 s and then fail as
if the controller were down. Here every SLURM command slurmkit runs goes through a stand-in on
PATH that counts its runs before it runs the real one: the tests count attempts, not seconds.
"""

import json
import os
import shutil
import subprocess

import pytest

from slurmkit.core.errors import SlurmConfigError
from slurmkit.slurm.registry import all_records
from tests.integration.slurm import local_job

from .test_submission import run_cli, write_spec

SLURM_COMMANDS = ("sbatch", "squeue", "sacct", "scancel", "scontrol", "sacctmgr", "sinfo")


@pytest.fixture
def counted(tmp_path):
    """A folder of stand-ins for SLURM's commands, each adding its name to ``runs.log`` and then
    running the real command: (the folder, the log)."""
    folder, log = tmp_path / "counted-bin", tmp_path / "runs.log"
    folder.mkdir()
    for name in SLURM_COMMANDS:
        real = shutil.which(name)
        assert real, f"{name} is not installed"
        stand_in = folder / name
        stand_in.write_text(f'#!/bin/bash\necho {name} >> {log}\nexec {real} "$@"\n')
        stand_in.chmod(0o755)
    return folder, log


def runs(log) -> list:
    return log.read_text().split() if log.exists() else []


def env_with(conf, folder) -> dict:
    return {**os.environ, "SLURM_CONF": str(conf), "PATH": f"{folder}:{os.environ['PATH']}"}


def live_job(tmp_path):
    """A job that is still pending or running while the test asks about it (cancelled after)."""
    return local_job(tmp_path, "live", command=["sleep", "300"]).submit()


def commands(spec, job_id):
    return [("submit", spec), ("status",), ("status", job_id, "--json"), ("watch", job_id), ("cancel", job_id),
            ("report", job_id), ("logs", "-f", job_id), ("profiles", "detect")]


def one_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_a_missing_slurm_conf_file_stops_every_command_at_once_and_runs_no_slurm_command(cluster, registry, tmp_path, counted):
    folder, log = counted
    conf = tmp_path / "etc" / "slurm.conf"
    spec = write_spec(tmp_path, "never")
    job = live_job(tmp_path)
    before = all_records(registry)
    said = (f"error: SLURM_CONF={conf} names no file: SLURM's commands cannot read their configuration (nothing was "
            "asked of the cluster); export SLURM_CONF=<your cluster's slurm.conf>, or unset it where SLURM finds its own "
            "(a login node)")
    try:
        for argv in commands(spec, job.job_id):
            result = run_cli(*argv, env=env_with(conf, folder))
            assert (result.returncode, one_line(result)) == (1, said), argv
            assert runs(log) == [], argv     # not one SLURM command ran, so none was retried
            if "--json" in argv:
                assert json.loads(result.stdout)["error"]["code"] == "slurm-config-unreadable"
        assert all_records(registry) == before          # submit recorded nothing, not even an intent
        assert job.status(force=True).state in ("PENDING", "RUNNING")   # cancel cancelled nothing
    finally:
        subprocess.run(["scancel", job.job_id], check=False)


def test_a_configuration_slurm_cannot_parse_is_said_once_and_never_retried(cluster, registry, tmp_path, counted):
    """An empty slurm.conf passes the look before the command; SLURM's own fatal error ends it at
    its first run: each command runs one SLURM command, once."""
    folder, log = counted
    conf = tmp_path / "empty.conf"
    conf.write_text("")
    spec = write_spec(tmp_path, "never")
    job = live_job(tmp_path)
    try:
        for argv in commands(spec, job.job_id):
            log.unlink(missing_ok=True)
            result = run_cli(*argv, env=env_with(conf, folder))
            assert result.returncode == 1, argv
            assert one_line(result).startswith(f"error: SLURM's commands cannot read their configuration (SLURM_CONF={conf}): "
                                               f's_p_parse_file: file "{conf}" is empty;'), argv
            assert len(runs(log)) <= 1, (argv, runs(log))
        assert [r.job_id for r in all_records(registry) if r.name == "never"] == [""] * 2   # the intent, then its close
        assert "not submitted: SLURM's commands cannot read" in (all_records(registry)[-1].note or "")
    finally:
        subprocess.run(["scancel", job.job_id], check=False)


def test_the_python_handles_stop_at_once_when_slurm_conf_names_no_file(cluster, registry, tmp_path, counted, monkeypatch):
    folder, log = counted
    job = live_job(tmp_path)
    try:
        monkeypatch.setenv("SLURM_CONF", str(tmp_path / "gone.conf"))
        monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
        for ask in (lambda: job.status(force=True), lambda: job.wait(0.5), job.cancel,
                    lambda: local_job(tmp_path, "never").submit()):
            with pytest.raises(SlurmConfigError, match="gone.conf names no file"):
                ask()
        assert runs(log) == []
    finally:
        monkeypatch.undo()
        subprocess.run(["scancel", job.job_id], check=False)
