"""A spec with ``# to do:`` lines left by import or port is a job known to be wrong: submit
refuses it in one line, before anything is recorded or sent, unless told --ignore-todos."""

import pytest
from click.testing import CliRunner

from slurmkit.api.job import Job
from slurmkit.cli.main import main
from slurmkit.core.errors import OpenTodos
from slurmkit.slurm import submit as submit_module

SPEC = """# Imported by slurmkit from job.sh.
# kept: line 3: mkdir out: run as written before the program (environment.setup)
# to do: line 4: the program reads $1: give it with `slurmkit submit SPEC -- ARGS`
# to do: script: verify: python starts 1 time(s) in the old script, 0 in the new
name: job
profile: local
account: def-prof
resources:
  time: 10m
launch:
  command: python run.py
"""


@pytest.fixture
def spec(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "registry.jsonl"))
    path = tmp_path / "job.yaml"
    path.write_text(SPEC)
    return path


@pytest.fixture
def submitted(monkeypatch):
    """What reached submit_script (nothing runs sbatch here)."""
    calls = []
    monkeypatch.setattr(submit_module, "submit_script", lambda *a, **k: calls.append((a, k)) or "handle")
    return calls


def test_submit_refuses_a_spec_with_to_dos_in_one_line_naming_the_first(spec, submitted):
    result = CliRunner().invoke(main, ["submit", "job.yaml"])
    assert result.exit_code == 2 and submitted == []
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith(f"error: {spec}:3: 2 to-do(s) left by import or port")
    assert "first: line 4: the program reads $1" in lines[0] and lines[0].endswith("or submit with --ignore-todos")
    assert not (spec.parent / "registry.jsonl").exists()


def test_the_python_api_refuses_too_and_ignore_todos_submits(spec, submitted):
    with pytest.raises(OpenTodos):
        Job.from_yaml(spec).submit()
    assert submitted == []
    assert Job.from_yaml(spec).submit(ignore_todos=True) == "handle"
    assert len(submitted) == 1


def test_a_spec_whose_to_dos_are_done_submits(spec, submitted):
    spec.write_text("\n".join(line for line in SPEC.splitlines() if not line.startswith("# to do:")) + "\n")
    assert Job.from_yaml(spec).submit() == "handle"


def test_a_remote_submit_refuses_before_the_cluster_is_asked(spec, monkeypatch):
    from slurmkit.cli import remote

    monkeypatch.setattr(remote, "connect", lambda *a, **k: pytest.fail("connected"))
    result = CliRunner().invoke(main, ["submit", "--remote", "fir", "job.yaml"])
    assert result.exit_code == 2 and "to-do(s) left by import or port" in result.output
