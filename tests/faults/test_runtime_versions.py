"""A script slurmkit rendered keeps its runtime on the real cluster: sbatch run as a user would
(in the script's folder, where render -o put the runtime beside it), after an upgrade wrote a
runtime of another name beside the first; and a runtime changed after render is refused with
exit 78 and one line in the job's log, before anything of the job runs."""

import os
import subprocess

import pytest

from slurmkit.render import runtime as runtime_module
from slurmkit.render.runtime import RUNTIME_EXIT_CODE, runtime, write_runtime
from tests.integration.slurm import local_job, sbatch, wait_for_job

pytestmark = pytest.mark.usefixtures("cluster")


def _render_beside(tmp_path):
    job = local_job(tmp_path, name="rt", command=("bash", "-c", "echo payload ran"))
    script = tmp_path / "rt.sbatch"
    script.write_text(job.render(warn=False))
    write_runtime(tmp_path)          # as `slurmkit render -o rt.sbatch` writes it
    return script


def test_a_script_runs_on_the_cluster_with_its_runtime_after_an_upgrade(tmp_path, monkeypatch):
    script = _render_beside(tmp_path)
    source = tmp_path / "upgrade.sh"
    source.write_text(runtime().text + "\n# a later slurmkit's runtime\n")
    monkeypatch.setattr(runtime_module, "_SOURCE", source)
    runtime_module.runtime.cache_clear()
    try:
        upgraded = write_runtime(tmp_path)
    finally:
        monkeypatch.undo()
        runtime_module.runtime.cache_clear()
    assert upgraded.name != runtime().name and (tmp_path / runtime().name).exists()
    submission = sbatch(script, "--output", str(tmp_path / "%j.out"))
    assert submission.returncode == 0, submission.stderr
    row = wait_for_job(submission.job_id)
    log = (tmp_path / f"{submission.job_id}.out").read_text()
    assert (row["State"], row["ExitCode"]) == ("COMPLETED", "0:0"), log
    assert "payload ran" in log


def test_a_runtime_changed_after_render_is_refused_with_78_before_the_job_runs(tmp_path):
    script = _render_beside(tmp_path)
    lib = tmp_path / runtime().name
    os.chmod(lib, 0o644)
    lib.write_text(lib.read_text().replace("exit 124", "exit 0"))
    # plain sbatch (the tests' helper would write the runtime beside the script again, whole)
    done = subprocess.run(["sbatch", "--parsable", "--output", str(tmp_path / "%j.out"), str(script)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    job_id = done.stdout.strip().split(";")[0]
    row = wait_for_job(job_id)
    log = (tmp_path / f"{job_id}.out").read_text()
    assert (row["State"], row["ExitCode"]) == ("FAILED", f"{RUNTIME_EXIT_CODE}:0"), log
    (line,) = log.splitlines()
    assert str(lib) in line and "missing or changed" in line and "payload ran" not in log
