"""Site rules of a profile's ``rules:`` on the real local cluster.

The local controller takes a job of one p100 on each of two nodes, and one of five minutes
(sbatch --test-only says when it would start). A profile variant (``localrules``: the local
profile with Trillium's kind of rules, whole GPU nodes for a job on several nodes and a
15-minute minimum in the default partition) stands for a site whose scheduler refuses them:
with it, ``slurmkit check`` and ``slurmkit submit`` refuse each spec before anything reaches the
controller, in one line naming the fix and the source, exit 2; nothing is queued or recorded.
"""

import re
import subprocess

import yaml

from slurmkit import Job
from tests.integration.slurm import CLI, GUARD_S

PROFILE = """\
name: localrules
extends: local
description: the local cluster, with a site's rules on GPU nodes and the default partition
rules:
  multi_node_gpus: {gpus_per_node: 2, source: tests/faults/test_site_rules.py}
  partition_limits:
    - {partition: compute, gpus: true, default: true, min_time: 15m, source: tests/faults/test_site_rules.py}
"""
SOURCE = "(source: tests/faults/test_site_rules.py)"
REFUSALS = {
    "multinode": "error: job.yaml:8: resources.gpus: 1 GPU(s) per node on 2 nodes: localrules gives a job on more than one node "
                 f"whole GPU nodes only; ask 'gpus: p100:2' (4 GPUs in all), or 'nodes: 1' {SOURCE}",
    "short": "error: job.yaml:6: resources.time: 5m is shorter than localrules's compute partition (where a job that names no "
             "partition runs) takes (15m at least); ask 15m or more, or bundle short tasks into one longer job " + SOURCE,
}
SPECS = {"multinode": {"time": "20m", "nodes": 2, "gpus": "p100:1"}, "short": {"time": "5m", "gpus": "p100:1"}}


def _spec(folder, profile, name):
    spec = {"name": f"siterule{name}", "profile": profile, "account": "def-test", "kind": "ddp",
            "resources": SPECS[name], "launch": {"command": ["hostname"]}}
    (folder / "job.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return folder / "job.yaml"


def _run(command, folder):
    done = subprocess.run([*CLI, command, "job.yaml"], cwd=folder, capture_output=True, text=True, timeout=GUARD_S)
    return done.returncode, done.stdout + done.stderr


def test_a_job_a_site_rule_refuses_never_reaches_the_controller_that_would_take_it(cluster, registry, tmp_path, monkeypatch):
    profiles = tmp_path / "xdg" / "slurmkit" / "site_profiles"
    profiles.mkdir(parents=True)
    (profiles / "localrules.yaml").write_text(PROFILE, encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("NO_COLOR", "1")
    for name, refusal in REFUSALS.items():
        # What the cluster itself would do: take the job.
        answer = Job.from_yaml(_spec(tmp_path, "local", name)).test_only(folder=tmp_path / "logs")
        assert re.match(r"Job \d+ to start at \S+ using \d+ processors on nodes node", answer), answer
        # Under the profile with the rule, slurmkit refuses it first.
        _spec(tmp_path, "localrules", name)
        for command in ("check", "submit"):
            code, output = _run(command, tmp_path)
            assert code == 2 and "Traceback" not in output, output
            assert [line for line in output.splitlines() if line.startswith("error:")] == [refusal]
        queued = subprocess.run(["squeue", "-h", "-n", f"siterule{name}", "-o", "%i"], capture_output=True, text=True,
                                timeout=GUARD_S)
        assert queued.returncode == 0 and queued.stdout.strip() == ""
    assert not registry.exists() or registry.read_text() == ""


def test_a_spec_that_keeps_the_rules_passes_check_under_them(cluster, tmp_path, monkeypatch):
    profiles = tmp_path / "xdg" / "slurmkit" / "site_profiles"
    profiles.mkdir(parents=True)
    (profiles / "localrules.yaml").write_text(PROFILE, encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    spec = {"name": "siterulekept", "profile": "localrules", "account": "def-test", "kind": "ddp",
            "resources": {"time": "20m", "nodes": 2, "gpus": "p100:2"}, "launch": {"command": ["hostname"]}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    code, output = _run("check", tmp_path)
    assert code == 0 and "error:" not in output, output
