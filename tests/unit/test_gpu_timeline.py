"""A GPU over the job's time (report/timeline.py): the idle start, the stalls and the idle end in
words where a mean and a p95 hide them, the series in ``--json``, a sparkline on a terminal only,
and memory that does not grow with the sample file."""

import json
import subprocess

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.report import gpuuse, timeline
from slurmkit.report.timeline import shape_words, sparkline, spoken, stall_words, timestamp
from slurmkit.slurm import registry, slurmcli

H100 = "NVIDIA H100 80GB HBM3"


def stamp(t: float) -> str:
    return f"2026/11/26 {20 + int(t) // 3600:02d}:{int(t) // 60 % 60:02d}:{int(t) % 60:02d}.123"


def stalled_run(total=2400, idle=600, every=300, stall=50, step=10):
    """One H100 sampled every ``step`` s: idle for the first ``idle`` s, then 99% busy but for a
    stall of ``stall`` s every ``every`` s (the first ``every`` s after the start)."""
    rows = []
    for t in range(0, total + 1, step):
        since = t - idle
        low = since < 0 or (since >= every and since % every < stall)
        rows.append(f"{stamp(t)}, 0, GPU-1, {H100}, {0 if low else 99}, {1000 if since < 0 else 30000}, 81559, 300\n")
    return "".join(rows)


def test_an_idle_start_and_a_stall_every_5_minutes_are_named_where_mean_and_p95_hid_them(tmp_path):
    (tmp_path / "7.gpu.ng1.csv").write_text(stalled_run())
    job = gpuuse.read_job("7", str(tmp_path))
    lines = gpuuse.gpu_lines(job)
    # the figures as they read before: a steady-looking GPU
    assert lines[1] == ("  GPU 0 on ng1 (NVIDIA H100 80GB HBM3, GPU-1): utilisation mean 64%, p95 99%; "
                        "memory peak 29.3G of 79.6G (37%); power mean 300 W")
    assert lines[2] == "    over time: idle for the first 10 min; stalled 5 times, about every 5 min, 50 s each"


def test_the_series_and_the_shape_are_in_report_json(tmp_path, monkeypatch):
    job_with_samples(tmp_path, monkeypatch, stalled_run())
    data = json.loads(CliRunner().invoke(main, ["report", "41", "--json"]).output)
    assert data["schema"] == 1      # new fields only: no field changed meaning
    gpu = data["gpu_use"]["41"]["gpus"][0]
    assert gpu["shape"] == ["idle for the first 10 min", "stalled 5 times, about every 5 min, 50 s each"]
    assert (gpu["idle_start_s"], gpu["span_s"], gpu["stall_count"], gpu["idle_end_s"]) == (600.0, 2400.0, 5, 0.0)
    assert gpu["stalls"][0] == [900.0, 50.0]
    assert gpu["series"][0] == [0.0, 0.0, 1000.0] and gpu["series"][60] == [600.0, 99.0, 30000.0]
    assert len(gpu["series"]) == 241


def test_piped_report_has_words_and_no_sparkline_and_a_terminal_has_both(tmp_path, monkeypatch):
    from slurmkit.cli import views as cli_views

    job_with_samples(tmp_path, monkeypatch, stalled_run())
    piped = CliRunner().invoke(main, ["report", "41"]).output
    assert "over time: idle for the first 10 min; stalled 5 times" in piped
    assert not set(timeline.BLOCKS) & set(piped)
    monkeypatch.setattr(cli_views, "pretty_output", lambda: True)
    monkeypatch.setenv("COLUMNS", "200")
    drawn = CliRunner().invoke(main, ["report", "41"]).output
    assert "GPU use over time (first sample to last, 00:40:00; one column is 00:00:40):" in drawn, drawn
    util = next(line for line in drawn.splitlines() if " util " in line)
    assert util.split()[-1].startswith("▁" * 15 + "█"), util      # 10 min of 40, in 60 columns
    assert "idle for the first 10 min; stalled 5 times, about every 5 min, 50 s each" in drawn


def job_with_samples(tmp_path, monkeypatch, samples: str) -> None:
    sacct = ("41|COMPLETED|0:0|2400|60|00:39:00|1|40G||billing=1,cpu=1,gres/gpu=1,mem=40G,node=1|1|\n"
             "41.batch|COMPLETED|0:0|2400||00:39:00|1||1000000K|cpu=1,mem=40G,node=1|1|1\n")
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "jobs.jsonl"))
    monkeypatch.setattr(slurmcli, "run_slurm", lambda argv, **kw: subprocess.CompletedProcess(argv, 0, sacct, ""))
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "41.gpu.ng3.csv").write_text(samples)
    registry.record(registry.Submission(job_id="41", name="train", folder=str(logs), profile="narval",
                                        submitted="2026-11-26T20:00:00+00:00"))


@pytest.mark.parametrize("start, stalls, count, end, said", [
    (30.0, [], 0, 0.0, []),                                             # start-up: not worth a word
    (600.0, [], 0, 0.0, ["idle for the first 10 min"]),
    (0.0, [(600.0, 30.0)], 1, 0.0, []),                                 # one short stall: noise
    (0.0, [(600.0, 300.0)], 1, 0.0, ["stalled once, for 5 min, 10 min in"]),
    (0.0, [(60.0, 40.0), (400.0, 40.0)], 2, 0.0, ["stalled 2 times, 40 s each"]),   # two: no period yet
    (0.0, [(60.0, 10.0), (120.0, 50.0), (900.0, 300.0)], 3, 0.0,
     ["stalled 3 times, 2 min on average, the longest 5 min"]),         # neither regular nor alike
    (0.0, [(0.0, 40.0), (300.0, 40.0), (600.0, 40.0)], 12_000, 0.0,
     ["stalled 12000 times, about every 5 min, 40 s each"]),            # counted past the ones kept
    (0.0, [], 0, 3 * 3600.0, ["idle for the last 3 h"]),
])
def test_the_shape_in_words(start, stalls, count, end, said):
    assert shape_words(start, stalls, count, end) == said


def test_a_gpu_never_busy_gets_no_shape_words_the_report_calls_it_idle():
    assert shape_words(3600.0, [], 0, None, busy=False) == []
    assert stall_words([], 0) == ""


@pytest.mark.parametrize("seconds, said", [(40, "40 s"), (89, "89 s"), (600, "10 min"), (5400, "1 h 30 min"), (7200, "2 h")])
def test_lengths_are_said_as_a_person_says_them(seconds, said):
    assert spoken(seconds) == said


def test_timestamps_and_a_clock_that_goes_back(tmp_path):
    assert timestamp("2026/11/27 00:00:01.500") - timestamp("2026/11/26 23:59:59.000") == pytest.approx(2.5)
    assert timestamp("garbage") is None and timestamp("2026/11/26 xx") is None
    line = timeline.Timeline()
    for when, util in ((100.0, 99.0), (50.0, 0.0), (110.0, 0.0), (120.0, 99.0)):
        line.add(when, util, None)
    assert (line.span_s, line.stalls) == (20.0, [(10.0, 10.0)])    # the sample from the past is left out


def test_the_series_stays_bounded_over_a_long_file():
    line = timeline.Timeline()
    for t in range(100_000):
        line.add(float(t), 99.0 if t % 2 else 0.0, float(t))
    points = line.series()
    assert timeline.SERIES_POINTS <= len(points) <= 2 * timeline.SERIES_POINTS
    assert points[0][0] == 0.0 and points[-1][2] == 99_999.0 and points[5][1] == pytest.approx(49.5)
    assert len(line.stalls) == timeline.MAX_STALLS and line.stall_count == 49_999


def test_a_sparkline_scales_to_its_top_and_leaves_gaps_blank():
    assert sparkline([0.0, 50.0, 100.0, None, 120.0], 100.0) == "▁▅█ █"
    assert sparkline([0.0, None], 0.0) == "▁ "
