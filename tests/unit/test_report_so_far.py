"""``report`` of a RUNNING job: its CPU and memory so far from sstat (report/live.py) and its GPU
use so far from the live sample file, each marked so far (never as final), in text, on a
terminal and in ``--json``; and what sstat prints, parsed as Slurm 22.05 prints it."""

import json
import subprocess

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.report import efficiency, live
from slurmkit.report.efficiency import SoFar
from slurmkit.slurm import registry, slurmcli

# sacct of a job 13 s into its run: nothing recorded yet (no TotalCPU, no MaxRSS)
SACCT = """\
54|RUNNING|0:0|13|5|00:00:00|2|1G||billing=2,cpu=2,gres/gpu=1,mem=1G,node=1|1|
54.batch|RUNNING|0:0|13||00:00:00|2|||cpu=2,mem=1G,node=1|1|
"""
# sstat --allsteps -n -P -o JobID,NTasks,MaxRSS,TRESUsageInTot, as Slurm 22.05 printed it
SSTAT = """\
54.batch|1|117388K|cpu=00:00:08,energy=0,fs/disk=1708316,mem=117388K,pages=2,vmem=121560K
54.extern|1|0|cpu=00:00:00,energy=0,fs/disk=2012,mem=0,pages=0,vmem=0
"""


def test_sstat_lines_give_the_running_steps_cpu_and_the_largest_steps_memory():
    assert live.parse_sstat(SSTAT) == SoFar(cpu_s=8.0, peak_mib=117388 / 1024, peak_estimated=False, steps=("batch", "extern"))


@pytest.mark.parametrize("text, cpu, peak, estimated", [
    ("54.0|4|1G|cpu=1-00:00:10\n54.batch|1|10M|cpu=01:02.500\n", 86410 + 62.5, 4096.0, True),   # 4 tasks: x4, estimated
    ("54.0|1||cpu=00:00:01\n", 1.0, None, False),                                             # memory not gathered
])
def test_sstat_cpu_forms_and_a_multi_task_step(text, cpu, peak, estimated):
    now = live.parse_sstat(text)
    assert (now.cpu_s, now.peak_mib, now.peak_estimated) == (cpu, peak, estimated)


@pytest.mark.parametrize("text", ["", "junk\n", "54|1|1K|cpu=00:00:01\n"])   # no step line: nothing so far
def test_no_running_step_is_nothing_so_far_never_an_error(text):
    assert live.parse_sstat(text) is None


def test_sstat_is_asked_for_every_step_not_only_the_first_srun_one():
    assert live.sstat_command("54")[:2] == ["sstat", "--allsteps"]


@pytest.fixture
def running54(tmp_path, monkeypatch):
    """Job 54, running, with one GPU whose live sample file has 3 minutes so far."""
    def run_slurm(argv, **kw):
        return subprocess.CompletedProcess(argv, 0, SSTAT if argv[0] == "sstat" else SACCT, "")

    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "jobs.jsonl"))
    monkeypatch.setattr(slurmcli, "run_slurm", run_slurm)
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "54.gpu.node1.csv").write_text("".join(
        f"2026/11/26 20:0{t // 60}:{t % 60:02d}.000, 0, GPU-1, Tesla P100-PCIE-16GB, {0 if t < 150 else 90}, 500, 16384, [N/A]\n"
        for t in range(0, 181, 10)))
    registry.record(registry.Submission(job_id="54", name="train", folder=str(logs), profile="local",
                                        submitted="2026-11-26T20:00:00+00:00"))


def test_report_of_a_running_job_says_its_figures_so_far_not_not_known(running54):
    out = CliRunner().invoke(main, ["report", "54"]).output
    assert "not known until the job ends" not in out
    assert "State: RUNNING (figures so far, not final)\n" in out
    assert "Wall-clock so far: 00:00:13 of 00:05:00 time limit (4.3%)\n" in out
    assert "CPU so far: 00:00:08, 30.77% of 00:00:26 core-walltime (sstat, 2 running steps; not final)\n" in out
    assert "Memory so far: peak 115M of 1G, 11.19% (sstat, 2 running steps; not final)\n" in out
    assert "GPUs: 1 (19% average utilisation so far)\n" in out
    assert "GPU use so far (1 GPU, idle under 5%; the live sample file, not final):\n" in out, out
    assert "    over time: idle for the first 2 min\n" in out     # the idle start so far is named too
    assert "  - is still running: the figures above are so far, not final; advice on its request comes when it ends\n" in out


def test_report_json_of_a_running_job_has_so_far_and_its_final_fields_stay_null(running54):
    data = json.loads(CliRunner().invoke(main, ["report", "54", "--json"]).output)
    job = data["jobs"][0]
    assert (job["cpu_efficiency"], job["memory_efficiency"], job["peak_mib"]) == (None, None, None)   # final only
    assert job["so_far"] == {"cpu_s": 8.0, "peak_mib": pytest.approx(114.64, abs=0.01), "peak_estimated": False,
                             "steps": ["batch", "extern"], "elapsed_s": 13, "cpu_efficiency": pytest.approx(8 / 26),
                             "memory_efficiency": pytest.approx(114.64 / 1024, abs=1e-4), "source": "sstat"}
    [cpu] = [g for g in data["gauges"]["54"] if g["name"] == "cpu"]
    assert cpu["used"] is None        # the gauges in --json stay the final figures


def test_report_on_a_terminal_marks_the_gauges_so_far(running54, monkeypatch):
    from slurmkit.cli import views as cli_views

    monkeypatch.setattr(cli_views, "pretty_output", lambda: True)
    monkeypatch.setenv("COLUMNS", "200")
    out = CliRunner().invoke(main, ["report", "54"]).output
    for said in ("0.6 of 2 cores busy so far", "115M of 1G so far", "19% average over 1 GPU(s) so far", "00:00:13 of 00:05:00 so far"):
        assert said in out, out


def test_a_finished_job_is_never_asked_to_sstat(monkeypatch):
    asked = []
    done = efficiency.parse(SACCT.replace("RUNNING", "COMPLETED"))
    assert live.with_so_far(done, ask=asked.append) == done and asked == []


def test_an_array_asks_at_most_max_asked_running_tasks(monkeypatch):
    monkeypatch.setattr(live, "MAX_ASKED", 2)
    tasks = [efficiency.parse(SACCT)[0]._replace(job_id=f"54_{i}") for i in range(4)]
    asked = []
    out = live.with_so_far(tasks, ask=lambda job: asked.append(job) or SoFar(1.0, None, False, ("batch",)))
    assert asked == ["54_0", "54_1"] and [e.so_far is not None for e in out] == [True, True, False, False]


# ------------------------------------------------------------------------------------ watch

class Status:
    def __init__(self, state):
        self.state = state


class Record:
    def __init__(self, folder):
        self.folder = folder


def test_watch_shows_running_jobs_so_far_asking_sstat_at_most_every_30_s(tmp_path):
    from rich.console import Console, Group

    from slurmkit.cli import views

    (tmp_path / "54.gpu.node1.csv").write_text("".join(
        f"2026/11/26 20:0{t // 60}:{t % 60:02d}.000, 0, GPU-1, Tesla P100-PCIE-16GB, 90, 500, 16384, [N/A]\n" for t in range(0, 61, 10)))
    asked, now = [], [0.0]
    so_far = views.SoFar(ask=lambda job: asked.append(job) or SoFar(83.0, 618.0, False, ("batch",)), clock=lambda: now[0])
    statuses = {"54": Status("RUNNING"), "55": Status("PENDING"), "56": Status("COMPLETED")}
    records = {"54": Record(str(tmp_path))}
    console = Console(width=120, record=True)
    console.print(Group(*so_far(statuses, records)))
    text = console.export_text()
    assert "54 so far (sstat, live GPU samples; not final): CPU 00:01:23, memory peak 618M" in text
    assert "GPU 0 on node1  util  ▇▇▇▇▇▇▇" in text and asked == ["54"]     # 90% of 7 columns
    now[0] = 29.0
    so_far(statuses, records)
    assert asked == ["54"]                  # within 30 s: the figures kept, the nodes not asked
    now[0] = 30.0
    so_far(statuses, records)
    assert asked == ["54", "54"]


def test_watch_asks_at_most_three_running_jobs(monkeypatch):
    from slurmkit.cli import views

    asked = []
    so_far = views.SoFar(ask=lambda job: asked.append(job))
    so_far({str(n): Status("RUNNING") for n in range(5)}, {})
    assert asked == ["0", "1", "2"]


def test_report_remote_asks_the_clusters_sstat_for_a_running_job(monkeypatch):
    from slurmkit.cli import remote

    class Conn:
        ran = []

        class remote:
            host = "fir"

        def ensure_open(self):
            pass

        def run(self, argv, timeout=None):
            self.ran.append(argv[0])
            return subprocess.CompletedProcess(argv, 0, SSTAT if argv[0] == "sstat" else SACCT, "")

    monkeypatch.setattr(remote, "connect", lambda cluster: Conn())
    monkeypatch.setattr(remote, "_records", lambda cluster, ids: {})
    out = CliRunner().invoke(main, ["report", "54", "--remote", "fir"]).output
    assert Conn.ran == ["sacct", "sstat"], out
    assert "CPU so far: 00:00:08, 30.77% of 00:00:26 core-walltime (sstat, 2 running steps; not final)\n" in out
