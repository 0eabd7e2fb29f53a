"""A script keeps the runtime it was rendered with: it finds its versioned file beside it or in the
data folder, checks its hash, and refuses a missing or changed one with one line and exit 78.
An upgrade writes a file of another name and never touches the old one."""

import hashlib
import os
import subprocess
from pathlib import Path

from slurmkit import Job
from slurmkit.render import runtime as runtime_module
from slurmkit.render.runtime import RUNTIME_EXIT_CODE, runtime, write_runtime


def _script(tmp_path: Path) -> Path:
    job = Job(name="v", profile="local", account="def-x", resources={"time": "1h"}, launch="echo ran")
    path = tmp_path / "job.sbatch"
    path.write_text(job.render(warn=False))
    return path


def _run(script: Path, submit: Path, data: Path) -> subprocess.CompletedProcess:
    (submit / "bin").mkdir(exist_ok=True)
    (submit / "bin" / "module").write_text("#!/bin/sh\n")
    (submit / "bin" / "module").chmod(0o755)
    env = {"PATH": f"{submit}/bin:{os.environ['PATH']}", "SLURM_SUBMIT_DIR": str(submit), "SLURM_TMPDIR": str(submit / "node"),
           "SLURM_JOB_ID": "9", "SLURMKIT_JOB_DIR": str(submit), "XDG_DATA_HOME": str(data), "HOME": str(submit)}
    (submit / "node").mkdir(exist_ok=True)
    return subprocess.run(["bash", str(script)], env=env, cwd=submit, capture_output=True, text=True, timeout=60)


def test_a_script_runs_with_its_own_version_after_an_upgrade_writes_another(tmp_path, monkeypatch):
    script = _script(tmp_path)
    old = runtime()
    folder = tmp_path / "data" / "slurmkit" / "runtime"
    write_runtime(folder)                                   # what submit wrote then
    # The upgrade: a runtime of other content, so of another name, written by its submit beside the old.
    source = tmp_path / "new-runtime.sh"
    source.write_text(old.text.replace("slurmkit: saved", "slurmkit: saved (new)"))
    monkeypatch.setattr(runtime_module, "_SOURCE", source)
    runtime_module.runtime.cache_clear()
    try:
        new = write_runtime(folder)
    finally:
        monkeypatch.undo()
        runtime_module.runtime.cache_clear()
    assert new.name != old.name and sorted(p.name for p in folder.iterdir()) == sorted([old.name, new.name])
    assert hashlib.sha256((folder / old.name).read_bytes()).hexdigest() == old.sha256     # never overwritten
    submit = tmp_path / "submit"
    submit.mkdir()
    done = _run(script, submit, tmp_path / "data")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ran\n" and (submit / "9.exit").read_text() == "0\n"


def test_a_changed_runtime_is_refused_in_one_line_that_names_it_and_the_fix(tmp_path):
    script = _script(tmp_path)
    submit = tmp_path / "submit"
    submit.mkdir()
    lib = write_runtime(submit)
    lib.write_text(lib.read_text().replace("exit 124", "exit 0"))
    done = _run(script, submit, tmp_path / "data")
    assert done.returncode == RUNTIME_EXIT_CODE and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert str(lib) in line and "missing or changed" in line and "slurmkit submit" in line and "render --standalone" in line
    assert not (submit / "9.exit").exists()


def test_a_missing_runtime_is_refused_and_one_in_the_data_folder_is_found(tmp_path):
    script = _script(tmp_path)
    submit = tmp_path / "submit"
    submit.mkdir()
    done = _run(script, submit, tmp_path / "data")
    assert done.returncode == RUNTIME_EXIT_CODE and runtime().name in done.stderr
    write_runtime(tmp_path / "data" / "slurmkit" / "runtime")
    done = _run(script, submit, tmp_path / "data")
    assert done.returncode == 0, done.stderr


def test_rendering_is_byte_identical_and_names_no_path_of_this_machine(tmp_path):
    text = _script(tmp_path).read_text()
    assert text == _script(tmp_path).read_text()
    assert str(Path.home()) not in text and str(tmp_path) not in text
