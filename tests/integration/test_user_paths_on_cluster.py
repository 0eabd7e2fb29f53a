"""User paths on the real cluster (Slurm 22.05): ``~``, ``$HOME``, ``$SCRATCH`` and ``$USER`` in
stage paths land where the user meant, and the files slurmkit keeps are private.

HOME, SCRATCH and USER are set for the submitting process only; sbatch passes them to the job
(its default --export=ALL), as a login shell's do on an Alliance cluster.
"""

import os
import tarfile

import pytest
import yaml

from slurmkit import Job


@pytest.fixture
def places(tmp_path, monkeypatch):
    home, scratch, work = tmp_path / "home", tmp_path / "scratch-fs", tmp_path / "work"
    for folder in (home, scratch, work):
        folder.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SCRATCH", str(scratch))
    monkeypatch.setenv("USER", "sktester")
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "registry.jsonl"))
    return home, scratch, work


def _job(work, **fields):
    spec = {"name": "paths", "profile": "local", "account": "def-test", "resources": {"time": "5m"}, **fields}
    path = work / "job.yaml"
    path.write_text(yaml.safe_dump(spec))
    return Job.from_yaml(path)


def test_home_and_scratch_paths_in_stage_inputs_and_outputs_land_where_the_user_meant(cluster, places):
    home, scratch, work = places
    (home / "a.txt").write_text("a\n")
    with tarfile.open(home / "d.tar", "w") as archive:
        archive.add(home / "a.txt", arcname="from-tar/a.txt")
    (home / "c.txt").write_text("c\n")
    (scratch / "in").mkdir()
    (scratch / "in" / "b.txt").write_text("b\n")
    listing = ("cd $$SLURM_TMPDIR && find from-tar in c.txt -type f | sort | tr '\\n' ' ' && mkdir -p out out2 && "
               "echo one > out/result.txt && echo two > out2/r2.txt")
    handle = _job(work, stage={"inputs": ["~/d.tar", {"from": "$SCRATCH/in", "to": "in"}, {"from": "${HOME}/c.txt", "to": "c.txt"}],
                               "outputs": [{"from": "out", "to": "~/scratch/run-$SLURM_JOB_ID"},
                                           {"from": "out2", "to": "$SCRATCH/res-$USER"}]},
                  launch={"command": ["bash", "-c", listing]}).submit()
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    assert handle.stdout().split() == ["c.txt", "from-tar/a.txt", "in/b.txt"]
    assert (home / "scratch" / f"run-{handle.job_id}" / "result.txt").read_text() == "one\n"
    assert (scratch / "res-sktester" / "r2.txt").read_text() == "two\n"
    # nothing under the spec's folder named after the unexpanded spelling
    assert sorted(p.name for p in work.iterdir()) == ["job.yaml", "logs"]


def test_the_files_slurmkit_keeps_for_a_real_job_are_private(cluster, places):
    _, _, work = places
    old = os.umask(0o022)
    try:
        handle = _job(work, environment={"variables": {"API_TOKEN": "s3cret"}}, launch="true").submit()
    finally:
        os.umask(old)
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    logs = work / "logs"
    script = logs / f"{handle.job_id}_submission.sh"
    assert "API_TOKEN=s3cret" in script.read_text()
    assert (logs.stat().st_mode & 0o777, script.stat().st_mode & 0o777) == (0o700, 0o600)
    registry = work.parent / "registry.jsonl"
    assert registry.stat().st_mode & 0o777 == 0o600


def test_a_tilde_venv_path_and_requirements_file_are_in_home_on_the_cluster(cluster, places):
    """``~/venvs/t`` and ``~/req.txt`` in environment.venv are ``$HOME/...`` in the
    job (Slurm 22.05, sbatch's --export=ALL passes HOME), not a ``~`` folder beside the spec."""
    import zipfile

    home, _, work = places
    wheel = home / "skdemo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("skdemo.py", "VALUE = 42\n")
        archive.writestr("skdemo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: skdemo\nVersion: 1.0\n")
        archive.writestr("skdemo-1.0.dist-info/WHEEL",
                         "Wheel-Version: 1.0\nGenerator: slurmkit-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr("skdemo-1.0.dist-info/RECORD", "")
    (home / "req.txt").write_text(f"{wheel}\n")
    code = "import sys, skdemo; print('value', skdemo.VALUE); print('prefix', sys.prefix)"
    handle = _job(work, resources={"time": "10m"},
                  environment={"modules": ["python/3.11"], "venv": {"path": "~/venvs/t", "requirements": "~/req.txt"}},
                  launch={"command": ["python", "-c", code]}).submit()
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    assert "value 42" in handle.stdout()
    assert f"prefix {home}/venvs/t" in handle.stdout()
    assert (home / "venvs" / "t" / "bin" / "python").exists()
    assert sorted(p.name for p in work.iterdir()) == ["job.yaml", "logs"]   # no literal ~ folder
