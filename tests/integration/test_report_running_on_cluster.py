"""``slurmkit report`` on a RUNNING job of the real local cluster (Slurm 22.05): its CPU and memory
so far from sstat and its GPU use so far from the live sample file, each marked so far, where
sacct has nothing yet ("not known until the job ends" before). The job busies a core and holds
about 150 MB until a file appears; the test waits on events (the job RUNNING, sstat's figures,
the samples), never on a sleep, then makes the file and the job ends.

The nodes have stand-in P100s and no nvidia-smi: tests/stand_ins/nvidia-smi is first on the
PATH the job inherits (as in test_gpu_sampler.py), so the job script's own sampler writes the file.
"""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from slurmkit import Job

from .slurm import CLI, GUARD_S, wait_until

STAND_INS = Path(__file__).resolve().parents[1] / "stand_ins"

PAYLOAD = """\
import os, sys
held = bytearray(150 * 2**20)
for i in range(0, len(held), 4096):
    held[i] = 1                      # touched: resident, as sstat's MaxRSS counts it
open(sys.argv[1] + ".started", "w").close()
while not os.path.exists(sys.argv[1]):
    sum(range(10000))                # a busy core until the test releases it
"""


@pytest.fixture
def registry(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "registry.jsonl"))
    monkeypatch.setenv("PATH", f"{STAND_INS}{os.pathsep}{os.environ['PATH']}")


def report(job_id: str, *more: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, "report", job_id, *more], capture_output=True, text=True, timeout=GUARD_S)


def cpu_so_far(text: str) -> float:
    """The seconds of ``CPU so far: HH:MM:SS, ...``; 0 when the line is not there yet."""
    found = re.search(r"^CPU so far: (\d+):(\d\d):(\d\d), ", text, re.MULTILINE)
    return int(found[1]) * 3600 + int(found[2]) * 60 + int(found[3]) if found else 0.0


def test_report_of_a_running_job_gives_cpu_memory_and_gpus_so_far(cluster, registry, tmp_path):
    release = tmp_path / "release"
    payload = tmp_path / "payload.py"
    payload.write_text(PAYLOAD)
    spec = {"name": "live", "profile": "local", "account": "def-test", "kind": "gpu",
            "resources": {"time": "10m", "gpus": "p100:1", "mem": "500M"},
            "launch": {"command": ["python3", str(payload), str(release)]}}
    path = tmp_path / "live.yaml"
    path.write_text(yaml.safe_dump(spec))
    handle = Job.from_yaml(path).submit()
    try:
        wait_until(lambda: Path(f"{release}.started").exists(), "the payload holding its memory")
        # sstat's CPU time grows as the core works; the sampler's file as it samples
        out = wait_until(lambda: (lambda r: r.stdout if cpu_so_far(r.stdout) >= 2 and "GPU use so far (1 GPU" in r.stdout
                                  else None)(report(handle.job_id)), "report's CPU and GPU figures so far")
        assert "State: RUNNING (figures so far, not final)\n" in out, out
        assert "not known until the job ends" not in out, out
        assert re.search(r"^Wall-clock so far: \d\d:\d\d:\d\d of 00:10:00 time limit", out, re.MULTILINE), out
        assert re.search(r"^CPU so far: .* core-walltime \(sstat, \d running steps?; not final\)$", out, re.MULTILINE), out
        peak = re.search(r"^Memory so far: peak (\d+)M of 500M, [\d.]+% \(sstat", out, re.MULTILINE)
        assert peak and 150 <= int(peak[1]) < 500, out
        assert "GPU use so far (1 GPU, idle under 5%; the live sample file, not final):\n" in out, out
        assert "  - is still running: the figures above are so far, not final" in out, out

        data = json.loads(report(handle.job_id, "--json").stdout)
        job = data["jobs"][0]
        assert job["state"] == "RUNNING" and job["cpu_efficiency"] is None and job["peak_mib"] is None, job
        assert job["so_far"]["cpu_s"] >= 2 and job["so_far"]["peak_mib"] >= 150 and "batch" in job["so_far"]["steps"], job
        assert data["gpu_use"][handle.job_id]["gpus"][0]["samples"] >= 1
    finally:
        release.write_text("")
    status = handle.wait(0.5)
    assert (status.state, status.exit_code) == ("COMPLETED", 0), handle.stderr()
    final = wait_until(lambda: (lambda r: r.stdout if "State: COMPLETED" in r.stdout else None)(report(handle.job_id)),
                       "accounting recording the end")
    assert "so far" not in final and "CPU Utilized: " in final, final
