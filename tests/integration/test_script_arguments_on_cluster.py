"""`slurmkit submit SPEC -- ARGS` on the real cluster: sbatch passes the words to the batch script,
and a launch.shell line reading "$1", "$#" and "$@" gets them as they were typed, hostile ones
included (blanks, quotes, a substitution, a newline), none ever run by a shell."""

import json
import os
import subprocess

import pytest
import yaml

from .slurm import CLI, GUARD_S
from .test_remote import laptop, sshd  # noqa: F401  (the far side's fixtures)

HOSTILE = ["a b  c", "$(touch pwned)", "`touch pwned`", "x\ny", "it's \"quoted\"", "*", ""]


@pytest.fixture
def registry(tmp_path, monkeypatch):
    path = tmp_path / "registry.jsonl"
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(path))
    return path


def _spec(tmp_path):
    spec = tmp_path / "args.yaml"
    shell = "printf '%s\\n' \"$1\" \"$#\" > first.txt && for a in \"$@\"; do printf '%s\\001' \"$a\"; done > all.txt"
    spec.write_text(yaml.safe_dump({"name": "args", "profile": "local", "account": "def-test", "resources": {"time": "5m"},
                                    "environment": {"setup": ["FROM_SETUP=$1", "export FROM_SETUP"]},
                                    "launch": {"shell": shell + " && printf '%s' \"$FROM_SETUP\" > setup.txt"}}))
    return spec


def test_hostile_arguments_reach_the_launch_line_and_setup_as_given(cluster, registry, tmp_path):
    result = subprocess.run([*CLI, "submit", str(_spec(tmp_path)), "--wait", "--", *HOSTILE], capture_output=True, text=True,
                            timeout=GUARD_S + 60, env={**os.environ, "NO_COLOR": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "first.txt").read_text() == f"{HOSTILE[0]}\n{len(HOSTILE)}\n"
    assert (tmp_path / "all.txt").read_text().split("\x01")[:-1] == HOSTILE
    assert (tmp_path / "setup.txt").read_text() == HOSTILE[0]
    assert not (tmp_path / "pwned").exists()
    job_id = result.stdout.split("submitted job ", 1)[1].split()[0]
    rows = json.loads(subprocess.run([*CLI, "status", job_id, "--json"], capture_output=True, text=True).stdout)["jobs"]
    assert rows[0]["args"] == HOSTILE and rows[0]["state"] == "COMPLETED"


def test_a_job_submitted_without_arguments_sees_none(cluster, registry, tmp_path):
    result = subprocess.run([*CLI, "submit", str(_spec(tmp_path)), "--wait"], capture_output=True, text=True,
                            timeout=GUARD_S + 60, env={**os.environ, "NO_COLOR": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "first.txt").read_text() == "\n0\n" and (tmp_path / "all.txt").read_text() == ""


def test_over_ssh_the_far_shell_passes_hostile_arguments_as_given(laptop, tmp_path):
    """`submit --remote`: each word quoted for the far shell, the job folder synced and run there."""
    from pathlib import Path

    from .test_remote import slurmkit

    (tmp_path / "project").mkdir()
    spec = _spec(tmp_path / "project")
    done = slurmkit(laptop, "submit", str(spec), "--remote", "local", "--wait", "--", *HOSTILE)
    assert done.returncode == 0, done.stdout + done.stderr
    [record] = [json.loads(line) for line in Path(laptop["SLURMKIT_REGISTRY"]).read_text().splitlines()][-1:]
    far = Path(record["folder"]).parent
    assert record["args"] == HOSTILE and (far / "all.txt").read_text().split("\x01")[:-1] == HOSTILE
    assert (far / "first.txt").read_text() == f"{HOSTILE[0]}\n{len(HOSTILE)}\n" and not (far / "pwned").exists()
