"""``slurmkit report`` on real jobs of the local cluster: sacct's figures read right, advice that fits.

The jobs hold their memory for 8 s because JobAcctGatherFrequency=task=5: a shorter step may
end before its first sample and leave no MaxRSS.
"""

import subprocess
import time

from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.report import efficiency

from .slurm import GUARD_S, wait_for_job

ACCOUNT = "--account=def-test"
HOLD_MIB = "python3 -c \"import time; b = bytearray({mib} * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); time.sleep(8)\""


def submit(tmp_path, *args: str) -> str:
    result = subprocess.run(["sbatch", "--parsable", ACCOUNT, "--output", str(tmp_path / "%j.out"), *args],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().split(";")[0]


def records_once_steps_land(job_id: str, tasks: int = 1, timeout: float = 30):
    """The job's records once every finished task has its MaxRSS (step records land a little after the job)."""
    deadline = time.monotonic() + timeout
    while True:
        text = subprocess.run(efficiency.sacct_command(job_id), capture_output=True, text=True, timeout=60).stdout
        effs = efficiency.parse(text)
        if len(effs) == tasks and all(eff.peak_mib is not None for eff in effs) or time.monotonic() > deadline:
            return effs
        time.sleep(1)


def test_report_finds_the_peak_and_advises_asking_less_memory(cluster, tmp_path):
    job_id = submit(tmp_path, "--mem=1G", "--time=10", "--wrap", HOLD_MIB.format(mib=80))
    assert wait_for_job(job_id)["State"] == "COMPLETED"
    [eff] = records_once_steps_land(job_id)

    assert eff.state == "COMPLETED" and eff.exit_code == 0
    assert (eff.cores, eff.nodes, eff.req_mem_mib, eff.timelimit_s) == (1, 1, 1024.0, 600)
    assert 60 <= eff.peak_mib <= 200, eff  # 80 MiB of bytearray plus the interpreter
    assert 6 <= eff.elapsed_s <= 60
    assert "batch" in eff.steps
    [memory] = [line for line in efficiency.advice(eff) if line.startswith("asked 1G, peak ")]
    suggested = efficiency.parse_size(memory.rsplit("ask ", 1)[1])
    assert eff.peak_mib < suggested < 1024, memory

    result = CliRunner().invoke(main, ["report", job_id])
    assert result.exit_code == 0, result.output
    assert f"Job ID: {job_id}\nState: COMPLETED (exit code 0)\n" in result.output
    assert "Memory Efficiency: " in result.output and "of 1G" in result.output
    assert f"  - {memory}\n" in result.output


def test_report_of_an_array_is_a_summary_of_its_tasks(cluster, tmp_path):
    job_id = submit(tmp_path, "--mem=512M", "--time=5", "--array=0-2", "--wrap",
                    HOLD_MIB.format(mib="(20 + 20 * $SLURM_ARRAY_TASK_ID)"))
    for task in range(3):
        assert wait_for_job(f"{job_id}_{task}", timeout=180)["State"] == "COMPLETED"
    effs = records_once_steps_land(job_id, tasks=3)

    assert [eff.job_id for eff in effs] == [f"{job_id}_{task}" for task in range(3)]
    low, _, high = efficiency.summarize(effs).peak_mib
    assert high - low >= 25, effs  # the tasks held 20, 40 and 60 MiB

    result = CliRunner().invoke(main, ["report", job_id])
    assert result.exit_code == 0, result.output
    assert f"Array ID: {job_id}\nTasks: 3 (COMPLETED 3)\n" in result.output
    assert "Memory Utilized (min/median/max): " in result.output
    assert "  - asked 512M, peak " in result.output and ": ask 256M\n" in result.output


def test_report_of_an_unknown_job_fails_in_one_line(cluster):
    result = CliRunner().invoke(main, ["report", "99999999"])
    assert result.exit_code == 1
    assert result.output == "error: sacct has no record of job 99999999: check the id, and that it ran on this cluster\n"


def test_report_of_an_array_names_the_task_far_from_the_rest(cluster, tmp_path):
    """Slurm 22.05: five tasks hold 40 MiB, task 4 holds it three times as long; the gauges'
    spread (report --json) and the piped report name task 4 as the outlier of time."""
    import json

    hold = HOLD_MIB.format(mib=40).replace("time.sleep(8)", "time.sleep(8 if $SLURM_ARRAY_TASK_ID != 4 else 24)")
    job_id = submit(tmp_path, "--mem=512M", "--time=5", "--array=0-4", "--wrap", hold)
    for task in range(5):
        assert wait_for_job(f"{job_id}_{task}", timeout=180)["State"] == "COMPLETED"
    records_once_steps_land(job_id, tasks=5)

    data = json.loads(CliRunner().invoke(main, ["report", job_id, "--json"]).output)
    spread = {s["name"]: s for s in data["spread"]}
    assert [o["job_id"] for o in spread["time"]["outliers"]] == [f"{job_id}_4"], spread["time"]
    assert set(data["gauges"]) == {f"{job_id}_{task}" for task in range(5)}
    piped = CliRunner().invoke(main, ["report", job_id]).output
    assert f"Outliers (time): {job_id}_4 (" in piped
    memory = [line for line in data["summary"]["advice"] if "peak" in line or "memory" in line]
    assert len(memory) <= 1, data["summary"]["advice"]


def _squeue_state(job_id: str) -> str:
    return subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%T"], capture_output=True, text=True, timeout=60).stdout.strip()


def test_report_of_a_requeued_job_lists_the_run_before_its_last(cluster, tmp_path):
    """Slurm 22.05: a job that requeues itself in its first run (as Lightning's auto-requeue does)
    and completes in its second; sacct without --duplicates would show the second run only."""
    first_run = 'if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then sleep 3; scontrol requeue "$SLURM_JOB_ID"; sleep 60; fi; sleep 2'
    job_id = submit(tmp_path, "--requeue", "--mem=256M", "--time=5", "--wrap", first_run)
    deadline = time.monotonic() + 90
    while "REQUEUED" not in subprocess.run(["sacct", "-n", "-X", "-D", "-P", "-o", "State", "-j", job_id],
                                           capture_output=True, text=True, timeout=60).stdout:
        assert time.monotonic() < deadline, "the job was not requeued"
        time.sleep(1)
    # SLURM holds a requeued job back for about two minutes before it may start again: not here
    while _squeue_state(job_id) != "PENDING":
        assert time.monotonic() < deadline, _squeue_state(job_id)
        time.sleep(0.5)
    status = CliRunner().invoke(main, ["status", job_id, "--json"])
    [row] = __import__("json").loads(status.output)["jobs"]
    # Slurm 22.05's accounting says REQUEUED until the second run starts; the controller, which
    # status may ask first while accounting catches up, says PENDING: never an ended state
    assert row["state"] in ("REQUEUED", "PENDING"), row
    subprocess.run(["scontrol", "update", f"jobid={job_id}", "StartTime=now"], check=True, timeout=60)
    assert wait_for_job(job_id, timeout=120)["State"] == "COMPLETED"
    assert f"{job_id}\t\tCOMPLETED (run 2)\texit 0\t" in CliRunner().invoke(main, ["status", job_id]).output
    [eff] = records_once_steps_land(job_id)
    deadline = time.monotonic() + GUARD_S        # accounting fills the last run's time limit in a moment
    while eff.timelimit_s is None and time.monotonic() < deadline:
        time.sleep(0.5)
        [eff] = records_once_steps_land(job_id)

    assert (eff.state, [run.state for run in eff.earlier_runs]) == ("COMPLETED", ["REQUEUED"]), eff
    assert eff.all_elapsed_s == eff.elapsed_s + eff.earlier_runs[0].elapsed_s and eff.earlier_runs[0].elapsed_s >= 3
    result = CliRunner().invoke(main, ["report", job_id])
    assert result.exit_code == 0, result.output
    assert "Runs: 2, requeued 1 time (the figures above and below are of run 2, the last)\n  run 1: REQUEUED after " in result.output
    assert "All runs: " in result.output
