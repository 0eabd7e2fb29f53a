"""Trillium's "$HOME and $PROJECT are read-only inside jobs", on the real local cluster.

A profile variant of ``local`` says that a folder (the stand-in "home") is read-only inside
jobs, and the nodes really mount it read-only (a read-only bind mount in each node's mount
namespace; this host, the submit host, still writes it, as Trillium's login nodes do). Then:

- without the fix, a job submitted from that folder cannot write its own log: sbatch run there
  as a user would, with the rendered script's ``--output=%x-%j.out``, leaves no log and the job
  fails; slurmkit check and slurmkit submit refuse it before anything is queued;
- with the fix (the output folder outside it, ``slurmkit submit --folder``), the same job runs
  and its log holds what it printed.

Proved on Debian's Slurm 22.05. That a job whose stdout cannot be opened fails is slurmstepd's
behaviour in every version since; the Alliance's 23.x/24.x are the same.
"""

import contextlib
import subprocess
import textwrap

import pytest
import yaml

from slurmkit import Job
from slurmkit.core.errors import SpecError
from tests.integration.slurm import wait_for_job

from .conftest import node_pids, on_node

PROFILE = textwrap.dedent("""\
    name: localro
    extends: local
    description: the local cluster with a read-only "home" inside jobs, as Trillium's $HOME
    rules:
      read_only_in_job:
        paths: [$SLURMKIT_TEST_READ_ONLY_HOME]
        fix: "submit from a writable folder, or set the output folder there (slurmkit submit --folder ...)"
        source: tests/faults/test_read_only_home.py
    """)


@contextlib.contextmanager
def read_only_on_nodes(cluster, folder):
    """``folder`` is bound read-only onto itself in every node's mount namespace (what jobs
    see); this host keeps it writable. Unmounted on the way out, even when the test fails."""
    bound = []
    try:
        for node in node_pids(cluster):
            result = on_node(cluster, node, "mount", "--bind", str(folder), str(folder))
            assert result.returncode == 0, result.stderr
            bound.append(node)
            result = on_node(cluster, node, "mount", "-o", "remount,bind,ro", str(folder))
            assert result.returncode == 0, result.stderr
        yield folder
    finally:
        for node in reversed(bound):
            on_node(cluster, node, "umount", "-l", str(folder))


@pytest.fixture
def read_only_home(cluster, registry, tmp_path, monkeypatch):
    """The stand-in home (read-only on the nodes), a spec in it, and the profile variant."""
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    profiles = tmp_path / "xdg" / "slurmkit" / "site_profiles"
    profiles.mkdir(parents=True)
    (profiles / "localro.yaml").write_text(PROFILE, encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("SLURMKIT_TEST_READ_ONLY_HOME", str(home))
    spec = {"name": "rohome", "profile": "localro", "account": "def-test", "resources": {"time": "5m"},
            "launch": {"command": ["echo", "hello-from-the-job"]}}
    (home / "proj" / "job.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    with read_only_on_nodes(cluster, home):
        yield home


def test_the_nodes_really_see_the_home_read_only_and_this_host_does_not(cluster, read_only_home):
    node = next(iter(node_pids(cluster)))
    refused = on_node(cluster, node, "touch", str(read_only_home / "proj" / "probe"))
    assert refused.returncode != 0 and "Read-only file system" in refused.stderr
    (read_only_home / "proj" / "probe").write_text("the submit host writes it")


def test_without_the_fix_the_job_cannot_write_its_log_and_slurmkit_refuses_it(cluster, read_only_home):
    proj = read_only_home / "proj"
    job = Job.from_yaml(proj / "job.yaml")
    script = proj / "job.sbatch"
    script.write_text(job.render())
    # What the rule prevents: sbatch run in the read-only folder, the log going there (%x-%j.out).
    submitted = subprocess.run(["sbatch", "--parsable", str(script)], cwd=proj, capture_output=True, text=True, timeout=60)
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.strip().split(";")[0]
    row = wait_for_job(job_id)
    assert row["State"] == "FAILED", row
    assert not (proj / f"rohome-{job_id}.out").exists()
    # slurmkit says so before anything is queued, naming the fix and the rule's source.
    errors = [f for f in job.check() if f.level == "error"]
    assert [f.field for f in errors] == ["folder"]
    assert f"{proj}/logs" in errors[0].message and "read-only inside localro jobs" in errors[0].message
    assert "slurmkit submit --folder" in errors[0].message and "tests/faults/test_read_only_home.py" in errors[0].message
    with pytest.raises(SpecError, match="read-only inside localro jobs"):
        job.submit()
    assert not (proj / "logs").exists() or not list((proj / "logs").glob("*.out"))


def test_with_the_output_folder_elsewhere_the_same_job_runs_and_logs(cluster, read_only_home, tmp_path):
    job = Job.from_yaml(read_only_home / "proj" / "job.yaml")
    assert [f for f in job.check(folder=tmp_path / "scratch" / "logs") if f.level == "error"] == []   # slurmkit check --folder
    handle = job.submit(folder=tmp_path / "scratch" / "logs")
    row = wait_for_job(handle.job_id)
    assert (row["State"], row["ExitCode"]) == ("COMPLETED", "0:0")
    assert "hello-from-the-job" in handle.stdout()
