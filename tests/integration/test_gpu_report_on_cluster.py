"""``slurmkit report`` with GPU samples, and ``report --apply``, on a real job of the local cluster
(Slurm 22.05, two p100 stand-ins a node, no nvidia-smi).

The job script's own sampler is tested in test_gpu_sampler.py; here the job's payload itself writes
the files in the contract's format (docs/job-spec.md, "monitor"): ``<key>.gpu.<host>.csv`` with
nvidia-smi's csv lines (GPU 0 busy, GPU 1 idle, a partial last line as a killed sampler leaves)
and ``<key>.gpu.<host>.state``. What is proven: the report (and the end of ``watch``) reads them
from the job's log folder as slurmkit recorded it, names the idle GPU and advises 1 GPU, and
``--apply --yes`` writes that advice into the spec the registry names, with its comments kept.
"""

import re
import time

import pytest
import yaml
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.spec.spec import load_spec

from .slurm import local_job

PAYLOAD = r"""#!/bin/bash
set -eu
d="$1"; h=$(hostname -s); f="$d/$SLURM_JOB_ID.gpu.$h.csv"
for i in 1 2 3 4 5 6; do
  printf '2026/11/26 20:00:0%d.123, 0, GPU-8f1c0000-aaaa-bbbb-cccc-0123456789ab, Tesla P100-PCIE-16GB, 97, 4000, 16384, 200.50\n' "$i" >> "$f"
  printf '2026/11/26 20:00:0%d.123, 1, GPU-8f1c0001-aaaa-bbbb-cccc-0123456789ab, Tesla P100-PCIE-16GB, 0, 2, 16384, [N/A]\n' "$i" >> "$f"
done
printf '2026/11/26 20:00:07.123, 0, GPU-8f1c' >> "$f"
echo "stopped $(date +%s) interval=1" > "$d/$SLURM_JOB_ID.gpu.$h.state"
echo payload done
"""  # noqa: E501  (the payload's printf lines are nvidia-smi's CSV rows, kept whole)


@pytest.fixture
def registry(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "registry.jsonl"))


def _report_once_settled(job_id: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while True:
        out = CliRunner().invoke(main, ["report", job_id]).output
        landed = "  - asked 1h, used " in out and "Memory Utilized: not recorded" not in out   # the batch step, with its MaxRSS
        if landed or time.monotonic() > deadline:
            return out
        time.sleep(1)


def test_report_shows_each_gpu_and_apply_writes_the_advice(cluster, registry, tmp_path):
    payload = tmp_path / "payload.sh"
    payload.write_text(PAYLOAD)
    logs = tmp_path / "logs"
    handle = local_job(tmp_path, name="gpujob", command=["bash", str(payload), str(logs)], time_limit="1h",
                       resources={"time": "1h", "gpus": "p100:2", "mem": "1G"}).submit()
    status = handle.wait(0.5)
    assert (status.state, status.exit_code) == ("COMPLETED", 0), handle.stdout()
    job_id = handle.job_id
    assert (logs / f"{job_id}.gpu.{handle.nodes}.csv").exists(), sorted(p.name for p in logs.iterdir())

    out = _report_once_settled(job_id)
    assert "State: COMPLETED" in out, out
    assert "GPU use (2 GPUs, idle under 5%):\n" in out, out
    assert (f"  GPU 0 on {handle.nodes} (Tesla P100-PCIE-16GB, GPU-8f1c0000-aaaa-bbbb-cccc-0123456789ab): "
            "utilisation mean 97%, p95 97%; memory peak 3.9G of 16G (24%); power mean 200 W\n") in out, out
    assert f"  - asked 2 GPUs, GPU 1 on {handle.nodes} stayed idle (under 5% utilisation): ask 1\n" in out, out

    watched = CliRunner().invoke(main, ["watch", job_id, "--interval", "1"])
    assert f"GPU 1 on {handle.nodes}" in watched.output and "IDLE" in watched.output, watched.output

    spec = tmp_path / "gpujob.yaml"
    spec.write_text("# the GPU job\n" + spec.read_text())
    refused = CliRunner().invoke(main, ["report", job_id, "--apply"])
    assert refused.exit_code == 1 and "add --yes" in refused.output, refused.output
    assert "-  gpus: p100:2\n" in refused.output and "+  gpus: p100:1" in refused.output, refused.output

    applied = CliRunner().invoke(main, ["report", job_id, "--apply", "--yes"])
    assert applied.exit_code == 0, applied.output
    written = spec.read_text()
    assert written.startswith("# the GPU job\n"), written
    assert re.search(rf"\n  gpus: p100:1 +# slurmkit report {job_id}: 1 of 2 GPUs worked\n", written), written
    assert re.search(rf"\n  time: 15m +# slurmkit report {job_id}: ran ", written), written
    assert re.search(rf"\n  mem: 256M +# slurmkit report {job_id}: peak ", written), written + applied.output
    assert load_spec(spec).resources.gpus.count == 1
    assert yaml.safe_load(written)["launch"]["command"] == ["bash", str(payload), str(logs)]
