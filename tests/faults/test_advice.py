"""``report --apply`` on a real job of the local cluster writes only what ``check`` accepts.

The job is kind threaded with 2 cores that it leaves idle for over a minute (the report advises
on cores only past CPU_ADVICE_MIN_S), holding a little memory: the report used to advise
``cpus_per_task: 1``, which --apply wrote and check then warned about (one CPU per task runs one
thread). Now the advice stops at what check accepts, and check says nothing of the values
--apply wrote.
"""

import re
import time

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from tests.integration.slurm import local_job

HOLD = "import time; b = bytearray(80 << 20); b[::4096] = b'x' * len(b[::4096]); time.sleep(70)"


@pytest.fixture
def registry(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "registry.jsonl"))


def _report_once_settled(job_id: str, timeout: float = 60) -> str:
    """The report once accounting has the batch step's figures (they land after the job ends)."""
    deadline = time.monotonic() + timeout
    while True:
        out = CliRunner().invoke(main, ["report", job_id]).output
        if "Memory Utilized: not recorded" not in out or time.monotonic() > deadline:
            return out
        time.sleep(1)


def test_check_has_nothing_to_say_of_what_report_apply_wrote(cluster, registry, tmp_path):
    handle = local_job(tmp_path, name="idle", command=["python3", "-c", HOLD], time_limit="1h", kind="threaded",
                       resources={"time": "1h", "cpus_per_task": 2, "mem": "1G"}).submit()
    status = handle.wait(1.0)
    assert (status.state, status.exit_code) == ("COMPLETED", 0), handle.stdout()
    out = _report_once_settled(handle.job_id)
    assert "CPU Efficiency: " in out and "Memory Utilized: " in out, out
    assert "cpus_per_task: 1" not in out, out        # one thread of a threaded kind: check would warn

    spec = tmp_path / "idle.yaml"
    applied = CliRunner().invoke(main, ["report", handle.job_id, "--apply", "--yes"])
    assert applied.exit_code == 0, applied.output
    written = spec.read_text()
    assert re.search(rf"\n  time: 15m +# slurmkit report {handle.job_id}: ran ", written), written
    assert re.search(rf"\n  mem: 256M +# slurmkit report {handle.job_id}: peak ", written), written
    assert "cpus_per_task: 2\n" in written, written

    checked = CliRunner().invoke(main, ["check", str(spec)])
    about = [line for line in checked.output.splitlines() if re.search(r"resources\.(time|mem|cpus_per_task)\b", line)]
    assert about == [], checked.output
    # what the old advice wrote, check warns about: the test above can fail
    spec.write_text(written.replace("cpus_per_task: 2\n", "cpus_per_task: 1\n"))
    assert "resources.cpus_per_task" in CliRunner().invoke(main, ["check", str(spec)]).output
