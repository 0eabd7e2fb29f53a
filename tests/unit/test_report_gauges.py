"""The report's gauges, array spread and outliers, GPU figures from sacct's TRES usage, and
advice that never contradicts itself (a property over generated usage records)."""

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from slurmkit.cli.main import main
from slurmkit.report import efficiency, gauges
from slurmkit.report.efficiency import JobEfficiency, array_tips, parse, tips
from slurmkit.slurm import slurmcli

# Made up (the local cluster has no GPUs to gather from): the fields as Slurm 23.02 with
# AcctGatherGpuType=gpu/nvml writes them, 2 GPUs at 60% and 20% (gres/gpuutil adds them up).
GPU_USAGE = """\
60|COMPLETED|0:0|3600|240|01:50:00|8|64G||billing=8,cpu=8,gres/gpu=2,mem=64G,node=1|1||
60.batch|COMPLETED|0:0|3600||01:50:00|8||30G|cpu=8,gres/gpu=2,mem=64G,node=1|1|1|cpu=01:50:00,gres/gpuutil=80|gres/gpumem=20000M,mem=30G
"""

# --array=0-5, task 4 much longer and fuller than the rest (made up from the ARRAY capture's shape)
ARRAY = "".join(
    f"70_{i}|COMPLETED|0:0|{600 if i != 4 else 3000}|60|00:09:00|1|4G||billing=1,cpu=1,mem=4G,node=1|1|\n"
    f"70_{i}.batch|COMPLETED|0:0|{600 if i != 4 else 3000}||00:09:00|1||{1000 if i != 4 else 3900}M|cpu=1,mem=4G,node=1|1|1\n"
    for i in range(6))


def record(**changes) -> JobEfficiency:
    base = JobEfficiency(job_id="7", state="COMPLETED", exit_code=0, signal=0, elapsed_s=3000, timelimit_s=3600,
                         cpu_s=2900.0, cores=1, nodes=1, req_mem_mib=1024.0, peak_mib=700.0, peak_estimated=False,
                         gpus=0, steps=("batch",))
    return base._replace(**changes)


def test_gpu_utilisation_and_memory_come_from_the_tres_usage_when_sacct_has_them():
    [eff] = parse(GPU_USAGE)
    assert (eff.gpus, eff.gpu_util_pct, eff.gpu_mem_mib) == (2, 80.0, 20000.0)
    assert eff.gpu_utilisation == pytest.approx(0.4)
    assert efficiency.advice(eff)[-1] == ("2 GPUs at 40% average utilisation: ask 1 GPU, or feed them faster "
                                          "(more data-loader workers, data staged in $SLURM_TMPDIR)")
    assert "\nGPUs: 2 (40% average utilisation)\n" in efficiency.format_report([eff])
    assert [g for g in gauges.gauges(eff) if g.name == "gpu"] == [gauges.Gauge("gpu", pytest.approx(0.4), "40% average over 2 GPU(s)")]


def test_without_tres_usage_the_gpu_gauge_says_not_recorded():
    eff = record(gpus=1)
    assert gauges.gauges(eff)[-1] == gauges.Gauge("gpu", None, "1 GPU(s); utilisation not recorded by sacct")
    assert [g.name for g in gauges.gauges(record())] == ["time", "cpu", "memory"]


def test_a_single_jobs_gauges():
    time_, cpu, memory = gauges.gauges(record())
    assert time_ == ("time", pytest.approx(3000 / 3600), "00:50:00 of 01:00:00")
    assert cpu == ("cpu", pytest.approx(2900 / 3000), "1.0 of 1 cores busy")
    assert memory == ("memory", pytest.approx(700 / 1024), "700M of 1G")


def test_bars_fill_with_the_fraction_and_stop_at_full():
    assert gauges.bar(0.5, 10) == "█████░░░░░"
    assert gauges.bar(1.7, 10) == "█" * 10
    assert gauges.bar(None, 4) == "    "


def test_an_arrays_spread_names_the_task_far_from_the_rest():
    spread = {s.name: s for s in gauges.spreads(parse(ARRAY))}
    assert spread["time"].low == pytest.approx(600 / 3600) and spread["time"].high == pytest.approx(3000 / 3600)
    assert [job for job, _, side in spread["time"].outliers] == ["70_4"]
    assert [(job, side) for job, _, side in spread["memory"].outliers] == [("70_4", "high")]


def test_three_tasks_are_too_few_to_call_one_an_outlier():
    assert gauges.outliers([("1_0", 0.1), ("1_1", 0.1), ("1_2", 0.9)]) == ()


@pytest.fixture
def sacct(monkeypatch):
    def answer(text):
        import subprocess

        monkeypatch.setattr(slurmcli, "run_slurm", lambda argv, **kw: subprocess.CompletedProcess(argv, 0, text, ""))
    return answer


def test_json_has_the_gauges_and_the_spread_with_outliers(sacct):
    sacct(ARRAY)
    data = json.loads(CliRunner().invoke(main, ["report", "70", "--json"]).output)
    assert data["schema"] == 1
    assert [g["name"] for g in data["gauges"]["70_0"]] == ["time", "cpu", "memory"]
    time_spread = next(s for s in data["spread"] if s["name"] == "time")
    assert time_spread["outliers"] == [{"job_id": "70_4", "value": pytest.approx(3000 / 3600), "side": "high"}]


def test_piped_report_lists_outliers_before_the_advice(sacct):
    sacct(ARRAY)
    out = CliRunner().invoke(main, ["report", "70"]).output
    assert "Outliers (time): 70_4 (83%)\nOutliers (cpu): 70_4 (18%)\nOutliers (memory): 70_4 (95%)\nAdvice:" in out
    assert "█" not in out


def test_on_a_terminal_the_report_draws_bars(sacct, monkeypatch):
    from slurmkit.cli import views as cli_views

    sacct(GPU_USAGE)
    monkeypatch.setattr(cli_views, "pretty_output", lambda: True)
    monkeypatch.setenv("COLUMNS", "140")
    out = CliRunner().invoke(main, ["report", "60"]).output
    assert "Job ID: 60" in out
    assert "Time" in out and gauges.bar(3600 / (240 * 60)) in out and "01:00:00 of 04:00:00" in out
    assert gauges.bar(0.4) in out and "40% average over 2 GPU(s)" in out
    assert "Advice:" in out and "ask 1 GPU" in out


# ------------------------------------------------------------------ advice never contradicts itself

STATES = ["COMPLETED"] * 4 + ["FAILED", "TIMEOUT", "OUT_OF_MEMORY", "CANCELLED", "NODE_FAIL"]


@st.composite
def requests(draw):
    return {"timelimit_s": draw(st.sampled_from([None, 900, 3600, 3 * 3600, 24 * 3600])),
            "cores": draw(st.integers(1, 16)), "nodes": draw(st.integers(1, 3)),
            "req_mem_mib": draw(st.sampled_from([None, 256.0, 1024.0, 4096.0, 65536.0])),
            "gpus": draw(st.sampled_from([0, 0, 1, 4]))}


@st.composite
def usage(draw, request, job_id="7"):
    limit = request["timelimit_s"] or 7 * 24 * 3600
    elapsed = draw(st.integers(0, limit))
    memory = request["req_mem_mib"]
    return JobEfficiency(
        job_id=job_id, state=draw(st.sampled_from(STATES)), exit_code=draw(st.sampled_from([0, 1, None])), signal=None,
        elapsed_s=elapsed, cpu_s=draw(st.floats(0, 1.0)) * elapsed * request["cores"],
        peak_mib=draw(st.one_of(st.none(), st.floats(0.1, 1.2).map(lambda f: f * (memory or 2048)))),
        peak_estimated=False, steps=draw(st.sampled_from([(), ("batch",)])),
        gpu_util_pct=draw(st.one_of(st.none(), st.floats(0, 100.0 * max(request["gpus"], 1)))), **request)


def _assert_consistent(said):
    moves = {}
    for tip in said:
        if tip.direction is None:
            continue
        assert tip.resource not in moves, f"two tips move {tip.resource}: {moves[tip.resource].text!r} and {tip.text!r}"
        moves[tip.resource] = tip
        if tip.suggest is not None and tip.asked:
            assert (tip.suggest > tip.asked) == (tip.direction == "more"), tip
    for tip in said:   # telling "no memory advice" beside "ask more memory" is a contradiction too
        if tip.direction is None and tip.resource != "state":
            assert tip.resource not in moves, tip
    texts = [tip.text for tip in said]
    assert len(texts) == len(set(texts))


@settings(max_examples=300, deadline=None)
@given(requests().flatmap(lambda r: usage(r)))
def test_one_jobs_advice_never_contradicts_itself(eff):
    _assert_consistent(tips(eff))


@settings(max_examples=300, deadline=None)
@given(requests().flatmap(lambda r: st.lists(usage(r), min_size=2, max_size=8)))
def test_an_arrays_advice_never_contradicts_itself(effs):
    effs = [eff._replace(job_id=f"9_{i}") for i, eff in enumerate(effs)]
    states = {}
    for eff in effs:
        states[eff.state] = states.get(eff.state, 0) + 1
    _assert_consistent(array_tips(effs, states))


def test_a_task_a_second_off_siblings_that_agree_is_not_an_outlier():
    """CI on Slurm 22.05: three tasks ran 9 s of a 5-minute limit, one 8 s, one 24 s; the IQR
    was nought, and Tukey's fences alone named the 8 s task a low outlier as well."""
    values = [("55_0", 8 / 300), ("55_1", 9 / 300), ("55_2", 9 / 300), ("55_3", 9 / 300), ("55_4", 24 / 300)]
    assert [(job, side) for job, _, side in gauges.outliers(values)] == [("55_4", "high")]


def test_a_low_outlier_must_be_well_under_the_median():
    values = [("1_0", 0.90), ("1_1", 0.91), ("1_2", 0.90), ("1_3", 0.80), ("1_4", 0.30)]
    assert [(job, side) for job, _, side in gauges.outliers(values)] == [("1_4", "low")]
