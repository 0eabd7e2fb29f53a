"""Hardware a cluster retired, on the real local cluster.

The local nodes still have their p100 GRES, so the controller takes a p100 job (sbatch
--test-only says when it would start). A profile variant that marks those nodes retired
(``localold``: the local profile, its gpu-p100 node type with ``retired_on``) stands for a cluster
whose old GPUs went out of service: with it, ``slurmkit check`` and ``slurmkit submit`` refuse
the same job before anything reaches the controller, in one line saying what, since when and
what to use, exit 2; nothing is queued or recorded.
"""

import re
import subprocess

import yaml

from slurmkit import Job
from tests.integration.slurm import CLI, GUARD_S

PROFILE = """\
name: localold
extends: local
description: the local cluster, its p100 nodes retired
node_types:
  gpu-p100:
    retired_on: 2025-01-13
    source: tests/faults/test_retired_hardware.py
"""
REFUSAL = ("error: job.yaml:7: resources.gpus: localold's p100 GPUs were retired on 2025-01-13: no job runs on them; "
           "it has none in service")


def _spec(folder, profile):
    spec = {"name": "retiredgpu", "profile": profile, "account": "def-test", "kind": "gpu",
            "resources": {"time": "5m", "gpus": "p100:1"}, "launch": {"command": ["hostname"]}}
    (folder / "job.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return folder / "job.yaml"


def test_a_job_for_retired_gpus_is_refused_before_the_controller_that_would_take_it(cluster, registry, tmp_path, monkeypatch):
    profiles = tmp_path / "xdg" / "slurmkit" / "site_profiles"
    profiles.mkdir(parents=True)
    (profiles / "localold.yaml").write_text(PROFILE, encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("NO_COLOR", "1")
    # What the cluster itself would do: take the job.
    answer = Job.from_yaml(_spec(tmp_path, "local")).test_only(folder=tmp_path / "logs")
    assert re.match(r"Job \d+ to start at \S+ using \d+ processors on nodes node", answer), answer
    # Under the profile that retired those nodes, slurmkit refuses it first.
    _spec(tmp_path, "localold")
    for command in ("check", "submit"):
        done = subprocess.run([*CLI, command, "job.yaml"], cwd=tmp_path, capture_output=True, text=True, timeout=GUARD_S)
        output = done.stdout + done.stderr
        assert done.returncode == 2 and "Traceback" not in output, output
        assert [line for line in output.splitlines() if line.startswith("error:")] == [REFUSAL]
    queued = subprocess.run(["squeue", "-h", "-n", "retiredgpu", "-o", "%i"], capture_output=True, text=True, timeout=GUARD_S)
    assert queued.returncode == 0 and queued.stdout.strip() == ""
    assert not registry.exists() or registry.read_text() == ""
