"""Trillium's "create virtual environments from a login node in HOME and source it in your job
script" (https://docs.alliancecan.ca/wiki/Python/en) on the real local cluster.

A profile variant of ``local`` has the rule (``rules.env_build``); this host plays the login node
(its shell has Lmod through BASH_ENV, as a login shell of the cluster does). The job's
requirements file names a wheel made here, so nothing is fetched from a network:

- before ``slurmkit env build``, check and submit refuse the job naming the command, and the
  rendered script, submitted with plain sbatch, stops at once with that one line;
- ``slurmkit env build job.yaml`` loads the job's modules and makes the environment here;
- the job then activates that very environment (its python's ``sys.prefix``) and imports the
  package from it, and its script holds no pip install at all.

Proved on Debian's Slurm 22.05; nothing here depends on the Slurm version.
"""

import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
import yaml

from slurmkit import Job
from slurmkit.core.errors import SpecError
from slurmkit.render.runtime import write_runtime
from tests.integration.slurm import wait_for_job

PROFILE = textwrap.dedent("""\
    name: localenv
    extends: local
    description: the local cluster, building Python environments on the login node as Trillium does
    rules:
      env_build:
        path: $SLURMKIT_TEST_ENVS
        source: tests/integration/test_env_build_on_cluster.py
    """)
MARK = "imported-from-the-env-built-on-the-login-node"


def make_wheel(folder: Path) -> Path:
    """A pure-Python wheel of one module, ``skmark``, made by hand (pip installs it without an index)."""
    wheel = folder / "skmark-1.0-py3-none-any.whl"
    files = {"skmark/__init__.py": f"MARK = {MARK!r}\n",
             "skmark-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: skmark\nVersion: 1.0\n",
             "skmark-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{name},,\n" for name in files) + "skmark-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in {**files, "skmark-1.0.dist-info/RECORD": record}.items():
            archive.writestr(name, text)
    return wheel


@pytest.fixture
def login_node(cluster, tmp_path, monkeypatch):
    """The profile variant, a project with its spec and requirements, and a login shell's environment."""
    profiles = tmp_path / "xdg" / "slurmkit" / "site_profiles"
    profiles.mkdir(parents=True)
    (profiles / "localenv.yaml").write_text(PROFILE, encoding="utf-8")
    envs = tmp_path / "home" / "envs"
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "SLURMKIT_TEST_ENVS": str(envs),
           "BASH_ENV": str(cluster.base / "etc" / "bash_env.sh"), "SLURMKIT_REGISTRY": str(tmp_path / "registry.jsonl")}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    (project / "requirements.txt").write_text(f"{make_wheel(tmp_path)}\n", encoding="utf-8")
    spec = {"name": "envjob", "profile": "localenv", "account": "def-test", "resources": {"time": "5m"},
            "environment": {"venv": {"requirements": "requirements.txt"}},
            "launch": {"shell": "python -c 'import skmark, sys; print(skmark.MARK); print(\"prefix=\" + sys.prefix)'"}}
    (project / "job.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    return project, envs


def test_before_env_build_the_job_is_refused_and_its_script_stops_with_one_line(login_node):
    project, envs = login_node
    job = Job.from_yaml(project / "job.yaml")
    errors = [f for f in job.check() if f.level == "error"]
    given = project / "job.yaml"   # the hint names the spec as it was given, so it runs from here
    assert [f.field for f in errors] == ["environment.venv"] and f"run 'slurmkit env build {given}' here" in errors[0].message
    with pytest.raises(SpecError, match=f"slurmkit env build {given}"):
        job.submit()
    script = project / "job.sbatch"
    script.write_text(job.render())
    write_runtime(project)   # as `slurmkit render -o` leaves it beside the script
    submitted = subprocess.run(["sbatch", "--parsable", str(script)], cwd=project, capture_output=True, text=True, timeout=60)
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.strip().split(";")[0]
    assert wait_for_job(job_id)["State"] == "FAILED"
    log = (project / f"envjob-{job_id}.out").read_text()
    key = job.resolve().plan.venv.prebuilt_key
    assert f"slurmkit: no virtualenv is built for this job at {envs}/{key}: run slurmkit env build {given} on the login node" in log
    assert MARK not in log


def test_env_build_on_the_login_node_then_the_job_activates_that_env_and_installs_nothing(login_node):
    project, envs = login_node
    built = subprocess.run([sys.executable, "-m", "slurmkit.cli", "env", "build", "job.yaml"], cwd=project,
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    job = Job.from_yaml(project / "job.yaml")
    env = envs / job.resolve().plan.venv.prebuilt_key
    assert built.stdout.splitlines()[-1] == f"built: {env}"                        # after the build's own output
    assert "Successfully installed skmark-1.0" in built.stdout
    assert "StdEnv/2023 python/3.11" in (env / "slurmkit-env.txt").read_text()   # the job's modules were loaded for it
    script = job.render()
    assert "pip install" not in script and "virtualenv --no-download" not in script   # the job makes and installs nothing
    assert [f for f in job.check() if f.level == "error"] == []
    handle = job.submit()
    row = wait_for_job(handle.job_id)
    assert (row["State"], row["ExitCode"]) == ("COMPLETED", "0:0"), handle.stdout()
    out = handle.stdout()
    assert MARK in out and f"prefix={env}" in out
    assert "Successfully installed" not in out and "pip" not in out
