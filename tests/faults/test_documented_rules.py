"""Documented site rules of a profile's ``rules:``, through the CLI on the real local cluster.

The local controller takes a job of two nodes whose command downloads a file (the local nodes
reach the network). Profile variants stand for sites whose rules refuse them: ``localoffline``
(the local profile with Trillium's kind of rules: compute nodes that reach no internet, and a
job-size cap of one node), ``localrac`` (a cap of one node without a RAC allocation, two with
one) and ``localmover`` (this host named as one of the site's data-mover nodes, which cannot
submit). Under them ``slurmkit check``
and ``slurmkit submit`` refuse each spec in one line naming the fix and the source, exit 2, and
nothing is queued or recorded; a spec between the two caps is a warning only, and check passes.
"""

import re
import socket
import subprocess

import yaml

from slurmkit import Job
from tests.integration.slurm import CLI, GUARD_S

HERE = "tests/faults/test_documented_rules.py"
OFFLINE = f"""\
name: localoffline
extends: local
description: the local cluster, with no internet on compute nodes and a job-size cap
storage:
  internet_on_compute: false
rules:
  no_internet: {{exceptions: false, source: {HERE}}}
  partition_limits:
    - {{partition: compute, gpus: false, default: true, max_nodes: 1, source: {HERE}}}
"""
RAC = f"""\
name: localrac
extends: local
description: the local cluster, with a job-size cap of one node without a RAC allocation, two with one
rules:
  partition_limits:
    - {{partition: compute, gpus: false, default: true, max_nodes: 2, without_allocation: {{max_nodes: 1}}, source: {HERE}}}
"""
MOVER = f"""\
name: localmover
extends: local
description: the local cluster, with this host as a data-mover node
rules:
  no_submit_hosts: {{hosts: ["{socket.gethostname().split('.')[0]}"], what: data-mover nodes, source: {HERE}}}
"""
SOURCE = f"(source: {HERE})"


def _profiles(tmp_path, monkeypatch):
    folder = tmp_path / "xdg" / "slurmkit" / "site_profiles"
    folder.mkdir(parents=True)
    (folder / "localoffline.yaml").write_text(OFFLINE, encoding="utf-8")
    (folder / "localmover.yaml").write_text(MOVER, encoding="utf-8")
    (folder / "localrac.yaml").write_text(RAC, encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("NO_COLOR", "1")


def _spec(folder, profile, name, nodes=1, command="hostname"):
    spec = {"name": f"docrule{name}", "profile": profile, "account": "def-test", "kind": "mpi",
            "resources": {"time": "20m", "nodes": nodes}, "launch": {"shell": command}}
    (folder / "job.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return folder / "job.yaml"


def _run(command, folder):
    done = subprocess.run([*CLI, command, "job.yaml"], cwd=folder, capture_output=True, text=True, timeout=GUARD_S)
    return done.returncode, done.stdout + done.stderr


def _queued(name):
    queued = subprocess.run(["squeue", "-h", "-n", name, "-o", "%i"], capture_output=True, text=True, timeout=GUARD_S)
    return queued.stdout.strip()


CASES = {
    "download": ({"command": "curl -fsSLO https://example.org/data.tgz"}, "localoffline",
                 "launch.shell: 'curl -fsSLO https://example.org/data.tgz' reaches example.org, but localoffline's compute nodes "
                 "reach no internet: download it on the login node before you submit (into the spec's folder, or stage it) "
                 + SOURCE),
    "cap": ({"nodes": 2}, "localoffline", "resources.nodes: 2 nodes is more than localoffline's compute partition (where a job "
            f"that names no partition runs) takes (1 at most); ask fewer {SOURCE}"),
    "mover": ({}, "localmover", f"is one of localmover's data-mover nodes, which cannot submit jobs: log in to a login node and "
              f"submit from there {SOURCE}"),
}


def test_a_job_a_documented_rule_refuses_never_reaches_the_controller(cluster, registry, tmp_path, monkeypatch):
    _profiles(tmp_path, monkeypatch)
    for name, (shape, profile, refusal) in CASES.items():
        # What the cluster itself would do: take the job.
        answer = Job.from_yaml(_spec(tmp_path, "local", name, **shape)).test_only(folder=tmp_path / "logs")
        assert re.match(r"Job \d+ to start at \S+ using \d+ processors on nodes node", answer), answer
        _spec(tmp_path, profile, name, **shape)
        for command in ("check", "submit"):
            code, output = _run(command, tmp_path)
            assert code == 2 and "Traceback" not in output, output
            errors = [line for line in output.splitlines() if line.startswith("error:")]
            assert len(errors) == 1 and errors[0].endswith(refusal), output
        assert _queued(f"docrule{name}") == ""
    assert not registry.exists() or registry.read_text() == ""


def test_between_the_two_caps_check_warns_of_the_allocation_and_passes(cluster, tmp_path, monkeypatch):
    _profiles(tmp_path, monkeypatch)
    _spec(tmp_path, "localrac", "between", nodes=2, command="tar xf data.tgz || true")
    code, output = _run("check", tmp_path)
    assert code == 0 and "error:" not in output, output
    assert "2 nodes is more than localrac's compute partition (where a job that names no partition runs) takes without " \
           "a RAC allocation (1 at most; 2 with one)" in output
    _spec(tmp_path, "localoffline", "kept", command="pip install --no-index numpy || true")
    code, output = _run("check", tmp_path)
    assert code == 0 and "error:" not in output and "internet" not in output, output
    _spec(tmp_path, "local", "mover")
    code, output = _run("check", tmp_path)   # the same host, under a profile without the data-mover rule
    assert code == 0 and "data-mover" not in output, output
