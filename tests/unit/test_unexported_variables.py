"""A variable only the submitting shell could set, checked against the shell that submits.

sbatch passes the submitting shell's environment to the job, so `check` can only warn that
`$i` in `bash -c "... $i ..."` stops the job unless it is exported. On the host that submits,
slurmkit knows: unset there, the job stops at once, so check says so as an error and submit
refuses it; set there, it is the warning it was."""

import yaml
from click.testing import CliRunner

from slurmkit.cli.main import main

SPEC = {"name": "dq", "profile": "local", "account": "def-test", "kind": "serial", "resources": {"time": "15m"},
        "launch": {"command": 'bash -c "for i in 1 2; do echo $i; done"'}}


def run(tmp_path, monkeypatch, *args):
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(SPEC))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "registry.jsonl"))
    return CliRunner().invoke(main, [*args, "job.yaml"])


def test_a_variable_this_shell_does_not_set_is_an_error_said_once(tmp_path, monkeypatch):
    monkeypatch.delenv("i", raising=False)
    result = run(tmp_path, monkeypatch, "check")
    assert result.exit_code == 2
    assert result.output.count("$i: nothing sets it") == 1
    assert "this shell does not either (sbatch passes its environment on): submitted from here, the job stops at once" in result.output


def test_a_variable_this_shell_exports_stays_a_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("i", "5")
    result = run(tmp_path, monkeypatch, "check")
    assert result.exit_code == 0
    assert "unless it is exported when you submit" in result.output


def test_submit_refuses_it_before_sbatch(tmp_path, monkeypatch):
    monkeypatch.delenv("i", raising=False)
    import slurmkit.slurm.submit as submit

    monkeypatch.setattr(submit, "submit_script", lambda *a, **k: (_ for _ in ()).throw(AssertionError("submitted")))
    result = run(tmp_path, monkeypatch, "submit")
    assert result.exit_code == 2 and "the job stops at once with 'i: unbound variable'" in result.output
    assert result.output.count("$i: nothing sets it") == 1, result.output   # not first as a warning, then the error
    assert not (tmp_path / "registry.jsonl").exists()
