"""GPU use from the sampler's files (contract: docs/job-spec.md, "monitor"): the
parser, the advice that fits the site (tables and a property), the report's lines, gauges and
--json, and ``report --apply`` writing the advice back into the spec."""

import json
import re
import subprocess

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from slurmkit.cli.main import main
from slurmkit.report import gauges, gpuuse, rightsize
from slurmkit.report.efficiency import JobEfficiency, consistent
from slurmkit.report.gpuuse import GpuUse, JobGpus, gpu_tips, parse_line, read_job, report_tips
from slurmkit.sites.profiles import load_profile
from slurmkit.slurm import registry, slurmcli

H100 = "NVIDIA H100 80GB HBM3"
A100 = "NVIDIA A100-SXM4-40GB"


def line(t, index, util, used, total=81559, power="612.34", name=H100, uuid=None):
    uuid = uuid or f"GPU-8f1c{index:04d}-aaaa-bbbb-cccc-0123456789ab"
    return f"2026/11/26 20:00:{t:02d}.123, {index}, {uuid}, {name}, {util}, {used}, {total}, {power}\n"


def record(**changes) -> JobEfficiency:
    base = JobEfficiency(job_id="7", state="COMPLETED", exit_code=0, signal=0, elapsed_s=3000, timelimit_s=3600,
                         cpu_s=2900.0, cores=1, nodes=1, req_mem_mib=1024.0, peak_mib=700.0, peak_estimated=False,
                         gpus=1, steps=("batch",))
    return base._replace(**changes)


def gpu(index=0, mean=90.0, peak=30000.0, total=81559.0, host="ng101", name=H100) -> GpuUse:
    return GpuUse(host, index, f"GPU-{index}", name, 100, mean, mean, peak, total, 300.0)


# ------------------------------------------------------------------------------------ parser

def test_a_real_nvidia_smi_line_parses():
    assert parse_line("2026/11/26 20:00:01.123, 0, GPU-8f1c..., NVIDIA H100 80GB HBM3, 97, 40123, 81559, 612.34") == \
        (0, "GPU-8f1c...", H100, 97.0, 40123.0, 81559.0, 612.34)


@pytest.mark.parametrize("text", ["[N/A]", "[Not Supported]", "N/A", "", "nan", "-1", "abc"])
def test_missing_figures_are_none_never_an_error(text):
    assert parse_line(f"2026/11/26 20:00:01.123, 0, GPU-1, {A100}, 50, 100, 40960, {text}")[-1] is None


@pytest.mark.parametrize("text", ["", "garbage", "1, 2, 3", "2026/11/26, x, GPU-1, n, 1, 2, 3, 4",
                                  "2026/11/26, 0, GPU-1, n, 1, 2, 3, 4, 5"])
def test_lines_that_are_no_sample_are_skipped(text):
    assert parse_line(text) is None


def test_a_file_gives_mean_p95_peak_and_power_per_gpu_and_ignores_a_partial_last_line(tmp_path):
    rows = [line(t, 0, 10 * (t % 10), 1000 + t) + line(t, 1, 0, 500, power="[N/A]") for t in range(20)]
    (tmp_path / "12.gpu.ng101.csv").write_text("".join(rows) + "2026/11/26 20:00:59.1, 0, GPU-8f1c0000-aa")
    job = read_job("12", str(tmp_path))
    first, second = job.gpus
    assert (first.host, first.index, first.samples) == ("ng101", 0, 20)
    assert first.mean_util == pytest.approx(45.0)
    assert first.p95_util == 90.0
    assert (first.peak_mem_mib, first.mem_total_mib, first.mean_power_w) == (1019.0, 81559.0, pytest.approx(612.34))
    assert second.idle and second.mean_power_w is None and not first.idle
    assert job.missing is None


def test_every_node_has_its_file_and_other_jobs_files_are_not_read(tmp_path):
    (tmp_path / "12.gpu.ng1.csv").write_text(line(0, 0, 80, 100))
    (tmp_path / "12.gpu.ng2.csv").write_text(line(0, 0, 2, 100))
    (tmp_path / "12_3.gpu.ng9.csv").write_text(line(0, 0, 50, 100))
    (tmp_path / "123.gpu.ng9.csv").write_text(line(0, 0, 50, 100))
    assert [g.label for g in read_job("12", str(tmp_path)).gpus] == ["GPU 0 on ng1", "GPU 0 on ng2"]
    assert [g.label for g in read_job("12_3", str(tmp_path)).gpus] == ["GPU 0 on ng9"]


def test_missing_files_say_why_from_the_state_file(tmp_path):
    assert "no 12.gpu.*.csv in" in read_job("12", str(tmp_path)).missing
    (tmp_path / "12.gpu.ng1.state").write_text("unavailable nvidia-smi not on PATH\n")
    assert read_job("12", str(tmp_path)) == JobGpus("12", (), "ng1: nvidia-smi not on PATH")
    assert "did not submit" in read_job("12", None).missing


def test_a_file_of_only_a_partial_line_says_so(tmp_path):
    (tmp_path / "12.gpu.ng1.csv").write_text("2026/11/26 20:00:01.123, 0, GPU-")
    assert read_job("12", str(tmp_path)).missing == "the sample files hold no complete line"


def test_a_named_pipe_is_never_waited_on(tmp_path):
    import os

    os.mkfifo(tmp_path / "12.gpu.ng1.csv")
    assert "not a regular file" in read_job("12", str(tmp_path)).missing


def test_a_huge_file_is_streamed_and_read_only_up_to_the_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(gpuuse, "MAX_SAMPLE_BYTES", 10_000)
    one = line(0, 0, 50, 100)
    (tmp_path / "12.gpu.ng1.csv").write_text(one * 1000 + "x" * 100_000 + "\n")
    job = read_job("12", str(tmp_path))
    assert job.cut_short == ("12.gpu.ng1.csv",)
    assert job.gpus[0].samples <= 10_000 // len(one) + 1
    assert "read only its first" in "\n".join(gpuuse.gpu_lines(job))


def test_an_over_long_line_is_skipped_and_reading_goes_on(tmp_path):
    (tmp_path / "12.gpu.ng1.csv").write_text("y" * 20_000 + "\n" + line(0, 0, 60, 100))
    assert read_job("12", str(tmp_path)).gpus[0].mean_util == 60.0


# ------------------------------------------------------------------------------------ advice

NARVAL, TRILLIUM, FIR, BELUGA = (load_profile(n) for n in ("narval", "trillium", "fir", "beluga"))


def texts(eff, gpus, profile):
    return [t.text for t in report_tips(eff, JobGpus(eff.job_id, tuple(gpus)), profile)]


def test_an_idle_gpu_of_two_is_named_and_one_asked():
    said = texts(record(gpus=2), [gpu(0), gpu(1, mean=0.0, host="ng7")], NARVAL)
    assert "asked 2 GPUs, GPU 1 on ng7 stayed idle (under 5% utilisation): ask 1" in said


def test_trillium_takes_1_or_a_multiple_of_4_gpus():
    four = [gpu(i, mean=0.0 if i == 3 else 90.0) for i in range(4)]
    [tip] = gpu_tips(record(gpus=4), JobGpus("7", tuple(four)), TRILLIUM)
    assert tip.direction is None and "Trillium takes 1 or a multiple of 4 GPUs: keep 4" in tip.text
    eight = [gpu(i, mean=0.0 if i >= 3 else 90.0, host=f"n{i // 4}") for i in range(8)]
    [tip] = [t for t in gpu_tips(record(gpus=8), JobGpus("7", tuple(eight)), TRILLIUM) if t.resource == "gpu"]
    assert (tip.direction, tip.suggest) == ("less", 4)
    assert gpuuse.allowed_gpu_count(TRILLIUM, 2) == 4 and gpuuse.allowed_gpu_count(TRILLIUM, 1) == 1
    assert gpuuse.allowed_gpu_count(NARVAL, 3) == 3


@pytest.mark.parametrize("profile, name, peak, slice_", [
    (NARVAL, A100, 3000.0, "a100_1g.5gb:1"),      # 3000 x 1.25 fits 5G
    (NARVAL, A100, 4500.0, "a100_2g.10gb:1"),     # 5625 does not: the next
    (NARVAL, A100, 15000.0, "a100_3g.20gb:1"),
    (FIR, H100, 9000.0, "nvidia_h100_80gb_hbm3_2g.20gb:1"),   # Fir's own spelling
])
def test_a_lightly_used_gpu_gets_the_smallest_mig_slice_that_holds_its_peak(profile, name, peak, slice_):
    [tip] = gpu_tips(record(cpu_s=1000.0), JobGpus("7", (gpu(mean=20.0, peak=peak, name=name),)), profile)
    assert tip.value == slice_ and tip.direction == "less" and f"ask gpus: {slice_}" in tip.text


@pytest.mark.parametrize("profile, name, mean, peak", [
    (TRILLIUM, H100, 20.0, 3000.0),    # no MIG on Trillium
    (BELUGA, "Tesla V100-SXM2-16GB", 20.0, 3000.0),
    (NARVAL, A100, 20.0, 30000.0),     # too much memory for any slice
    (NARVAL, A100, 80.0, 3000.0),      # busy: a whole GPU
])
def test_no_mig_slice_where_the_site_has_none_or_the_job_needs_the_whole_gpu(profile, name, mean, peak):
    assert not [t for t in gpu_tips(record(), JobGpus("7", (gpu(mean=mean, peak=peak, name=name),)), profile) if t.value]


def test_waiting_gpus_and_saturated_cores_ask_more_cores_within_the_bundle():
    eff = record(cores=4, cpu_s=4 * 3000 * 0.97)
    [tip] = [t for t in report_tips(eff, JobGpus("7", (gpu(mean=30.0, peak=30000.0, name=A100),)), NARVAL) if t.resource == "cpu"]
    assert (tip.direction, tip.suggest) == ("more", 8) and "the GPUs wait for data" in tip.text
    eff = record(cores=12, cpu_s=12 * 3000 * 0.97)   # Narval's bundle is 12 cores per A100
    [tip] = [t for t in gpu_tips(eff, JobGpus("7", (gpu(mean=30.0, peak=30000.0, name=A100),)), NARVAL) if t.resource == "cpu"]
    assert tip.direction is None


def test_gpus_that_wait_for_the_cores_are_fed_not_cut_to_a_mig_slice():
    said = gpu_tips(record(cores=2, cpu_s=2 * 3000 * 0.97), JobGpus("7", (gpu(mean=20.0, peak=1000.0, name=A100),)), NARVAL)
    assert [(t.resource, t.direction, t.value) for t in said] == [("cpu", "more", None)]


def test_an_idle_gpu_is_not_taken_for_a_waiting_one():
    eff = record(gpus=2, cores=2, cpu_s=2 * 3000 * 0.97)
    said = gpu_tips(eff, JobGpus("7", (gpu(0, mean=95.0), gpu(1, mean=0.0))), NARVAL)
    assert [(t.resource, t.direction) for t in said] == [("gpu", "less")]


def test_busy_gpus_and_idle_cores_ask_fewer_cores():
    eff = record(cores=8, cpu_s=3000 * 1.1)
    [tip] = [t for t in report_tips(eff, JobGpus("7", (gpu(mean=95.0),)), NARVAL) if t.resource == "cpu"]
    assert (tip.direction, tip.suggest) == ("less", 1)


def test_sampled_advice_replaces_sacct_gpu_advice_and_a_failed_job_gets_none():
    eff = record(gpus=2, gpu_util_pct=40.0)
    said = texts(eff, [gpu(0), gpu(1)], NARVAL)
    assert not [t for t in said if "average utilisation: ask" in t]
    assert gpu_tips(record(state="FAILED"), JobGpus("7", (gpu(mean=0.0),)), NARVAL) == []


# property: advice never contradicts itself, never asks a MIG slice for several GPUs, never below use

@st.composite
def gpu_jobs(draw):
    count = draw(st.sampled_from([1, 1, 2, 4, 8]))
    name = draw(st.sampled_from([A100, H100, "Tesla V100-SXM2-16GB"]))
    gpus = tuple(GpuUse(f"n{i // 4}", i % 4, f"GPU-{i}", name, 10, draw(st.one_of(st.none(), st.floats(0, 100))),
                        None, draw(st.one_of(st.none(), st.floats(0, 80000))), 81559.0, None) for i in range(count))
    elapsed = draw(st.integers(0, 7200))
    cores = draw(st.integers(1, 48))
    eff = record(state=draw(st.sampled_from(["COMPLETED"] * 3 + ["FAILED", "TIMEOUT", "OUT_OF_MEMORY"])),
                 gpus=draw(st.sampled_from([0, count, count + 1])), cores=cores, elapsed_s=elapsed,
                 timelimit_s=draw(st.sampled_from([None, 900, 3600, 86400])),
                 cpu_s=draw(st.floats(0, 1.0)) * cores * elapsed,
                 peak_mib=draw(st.one_of(st.none(), st.floats(1, 200000))), req_mem_mib=draw(st.sampled_from([None, 4096.0, 65536.0])))
    return eff, JobGpus(eff.job_id, gpus), draw(st.sampled_from([NARVAL, TRILLIUM, FIR, BELUGA, None]))


@settings(max_examples=300, deadline=None)
@given(gpu_jobs())
def test_gpu_advice_never_contradicts_itself_or_asks_below_use(case):
    eff, job, profile = case
    said = report_tips(eff, job, profile)
    assert consistent(said) == said
    for resource in ("gpu", "cpu", "memory", "time"):
        assert len({t.direction for t in said if t.resource == resource and t.direction}) <= 1, said
    working = sum(1 for g in job.gpus if not g.idle)
    asked = max(eff.gpus, len(job.gpus))
    for tip in said:
        if tip.value:        # a MIG slice: one GPU, whose peak fits the slice with room
            assert asked == 1 and len(job.gpus) == 1
            room = {m.gres: m.memory_mib for t in profile.node_types if t.gpus for m in t.gpus.mig}[tip.value[:-2]]
            assert room >= job.gpus[0].peak_mem_mib * 1.25
        elif tip.resource == "gpu" and tip.direction == "less":
            assert working <= tip.suggest < asked
            if profile is TRILLIUM:
                assert tip.suggest == 1 or tip.suggest % 4 == 0
        elif tip.resource == "gpu" and tip.direction == "more":
            raise AssertionError(f"no advice asks more GPUs: {tip}")
        if tip.resource == "cpu" and tip.direction == "more":
            assert tip.suggest > eff.cores
        if tip.resource == "cpu" and tip.direction == "less":
            assert tip.suggest >= round(eff.cpu_s / eff.elapsed_s)
        if tip.resource == "time" and tip.suggest is not None:
            assert tip.suggest >= eff.elapsed_s
        if tip.resource == "memory" and tip.direction == "less":
            assert tip.suggest >= eff.peak_mib / eff.nodes


# ------------------------------------------------------------------------------------ report and --apply

SACCT = ("41|COMPLETED|0:0|3000|60|00:50:00|1|16G||billing=1,cpu=1,gres/gpu=2,mem=16G,node=1|1||\n"
         "41.batch|COMPLETED|0:0|3000||00:50:00|1||3100M|cpu=1,gres/gpu=2,mem=16G,node=1|1|1||\n")

SPEC = """\
# train the model
name: train
profile: narval
account: def-someprof
resources:
  gpus: a100:2        # two for the big batch
  mem: 16G
  time: 1h
  cpus_per_task: 1

# how it runs
launch:
  command: python train.py
"""


@pytest.fixture
def job41(tmp_path, monkeypatch):
    """Job 41 on Narval: 2 A100s (one idle), 16G asked, 3.1G peak; registered with its spec."""
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "jobs.jsonl"))
    monkeypatch.setattr(slurmcli, "run_slurm", lambda argv, **kw: subprocess.CompletedProcess(argv, 0, SACCT, ""))
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "41.gpu.ng3.csv").write_text("".join(line(t, 0, 95, 20000, 40960, name=A100) + line(t, 1, 0, 3, 40960, name=A100)
                                                 for t in range(30)))
    spec = tmp_path / "job.yaml"
    spec.write_text(SPEC)
    registry.record(registry.Submission(job_id="41", name="train", folder=str(logs), profile="narval",
                                        submitted="2026-11-26T20:00:00+00:00", spec=str(spec)))
    return spec


def test_report_shows_a_line_per_gpu_and_the_idle_one_in_the_advice(job41):
    out = CliRunner().invoke(main, ["report", "41"]).output
    assert "GPU use (2 GPUs, idle under 5%):\n" in out
    assert "  GPU 0 on ng3 (NVIDIA A100-SXM4-40GB, GPU-8f1c0000-aaaa-bbbb-cccc-0123456789ab): utilisation mean 95%, " \
           "p95 95%; memory peak 19.5G of 40G (49%); power mean 612 W\n" in out
    assert "GPU 1 on ng3" in out and "IDLE" in out
    assert "  - asked 2 GPUs, GPU 1 on ng3 stayed idle (under 5% utilisation): ask 1\n" in out
    assert "GPUs: 2 (48% average utilisation)" in out


def test_report_json_has_gpu_use(job41):
    data = json.loads(CliRunner().invoke(main, ["report", "41", "--json"]).output)
    first, second = data["gpu_use"]["41"]["gpus"]
    assert (first["mean_util"], first["idle"], second["idle"]) == (95.0, False, True)
    assert data["gpu_use"]["41"]["missing"] is None and data["gpu_use"]["41"]["idle_below_pct"] == 5.0
    assert any("stayed idle" in line for line in data["jobs"][0]["advice"])
    [gpu_gauge] = [g for g in data["gauges"]["41"] if g["name"] == "gpu"]
    assert gpu_gauge["used"] == pytest.approx(0.475)


def test_report_on_a_terminal_draws_a_gauge_per_gpu(job41, monkeypatch):
    from slurmkit.cli import views as cli_views

    monkeypatch.setattr(cli_views, "pretty_output", lambda: True)
    monkeypatch.setenv("COLUMNS", "200")
    out = CliRunner().invoke(main, ["report", "41"]).output
    assert "GPU 0 on ng3" in out and gauges.bar(0.95) in out and gauges.bar(0.0) in out


def test_a_gpu_job_without_samples_says_why(job41):
    for path in (job41.parent / "logs").glob("41.gpu.*"):
        path.unlink()
    (job41.parent / "logs" / "41.gpu.ng3.state").write_text("unavailable nvidia-smi not found\n")
    out = CliRunner().invoke(main, ["report", "41"]).output
    assert "GPU use: no GPU samples: ng3: nvidia-smi not found\n" in out


def test_the_array_report_spreads_gpu_utilisation_over_tasks(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "jobs.jsonl"))
    rows = "".join(f"50_{i}|COMPLETED|0:0|600|60|00:09:00|1|4G||billing=1,cpu=1,gres/gpu=1,mem=4G,node=1|1|\n"
                   f"50_{i}.batch|COMPLETED|0:0|600||00:09:00|1||1000M|cpu=1,mem=4G,node=1|1|1\n" for i in range(3))
    monkeypatch.setattr(slurmcli, "run_slurm", lambda argv, **kw: subprocess.CompletedProcess(argv, 0, rows, ""))
    for i, util in enumerate((10, 50, 90)):
        (tmp_path / f"50_{i}.gpu.ng1.csv").write_text(line(0, 0, util, 100) * 3)
    registry.record(registry.Submission(job_id="50", name="a", folder=str(tmp_path), profile="narval",
                                        submitted="2026-11-26T20:00:00+00:00"))
    out = CliRunner().invoke(main, ["report", "50"]).output
    assert "GPUs per task: 1 (average utilisation min/median/max: 10% / 50% / 90%)" in out
    assert "GPU samples: 3 of 3 tasks" in out
    data = json.loads(CliRunner().invoke(main, ["report", "50", "--json"]).output)
    [spread] = [s for s in data["spread"] if s["name"] == "gpu"]
    assert (spread["low"], spread["median"], spread["high"]) == pytest.approx((0.1, 0.5, 0.9))


def test_apply_shows_the_diff_and_without_yes_writes_nothing(job41):
    result = CliRunner().invoke(main, ["report", "41", "--apply"])
    assert result.exit_code == 1
    assert f"--- {job41}\n+++ {job41}\n" in result.output
    assert "-  gpus: a100:2        # two for the big batch\n" in result.output
    assert result.output.rstrip().endswith("not written: add --yes to write these changes")
    assert job41.read_text() == SPEC


def test_apply_with_yes_writes_the_advice_with_comments_and_keeps_the_rest(job41):
    result = CliRunner().invoke(main, ["report", "41", "--apply", "--yes"])
    assert result.exit_code == 0, result.output
    written = job41.read_text()
    assert "  gpus: a100:1        # two for the big batch; slurmkit report 41: 1 of 2 GPUs worked\n" in written
    assert re.search(r"\n  mem: 4G +# slurmkit report 41: peak 3G\n", written), written
    assert "  time: 1h\n" in written          # 50 min of 1h: no time advice
    assert written.startswith("# train the model\n") and "\n# how it runs\nlaunch:\n" in written
    from slurmkit.spec.spec import load_spec

    assert load_spec(job41).resources.gpus.count == 1
    again = CliRunner().invoke(main, ["report", "41", "--apply", str(job41), "--yes"])
    assert again.exit_code == 0 and "nothing to change" in again.output, again.output


def test_apply_says_unchanged_not_nothing_to_change_under_advice_it_could_not_write(job41):
    """A spec with ``mem: node`` gets the memory advice as "not applied: ... by hand"; the closing
    line used to add "nothing to change: no advice with a figure to write" beneath it."""
    job41.write_text(SPEC.replace("a100:2 ", "a100:1 ").replace("mem: 16G", "mem: node"))
    result = CliRunner().invoke(main, ["report", "41", "--apply", "--yes"])
    assert result.exit_code == 0, result.output
    assert "not applied: memory" in result.output, result.output
    assert "nothing to change" not in result.output
    assert result.output.rstrip().endswith(f"{job41}: unchanged: the advice above is for you to apply by hand")
    assert "mem: node" in job41.read_text()


def test_apply_again_says_the_spec_already_follows_the_advice():
    from slurmkit.cli.report import unchanged_reason
    from slurmkit.report.efficiency import Tip

    figure, words = Tip("memory", "less", "ask 1G", 1024, 16384), Tip("state", None, "it timed out")
    assert unchanged_reason([figure], []) == "nothing to change: it already asks what the report advises"
    assert unchanged_reason([words], []) == "nothing to change: no advice with a figure to write"
    assert unchanged_reason([figure], ["memory: set mem by hand"]).startswith("unchanged:")


def test_apply_refuses_advice_below_what_the_job_used(job41, monkeypatch):
    from slurmkit.report.efficiency import Tip

    monkeypatch.setattr(gpuuse, "report_tips", lambda eff, job, profile=None, floors=None: [Tip("memory", "less", "ask 1G", 1024, 16384)])
    monkeypatch.setattr(rightsize, "spec_floors", lambda data, path, profile: None)   # no floor to raise it to
    result = CliRunner().invoke(main, ["report", "41", "--apply", "--yes"])
    assert result.exit_code == 1
    assert "error: not applied: the advice for job 41 asks memory 1G, below what it used (3G)" in result.output
    assert job41.read_text() == SPEC


def test_apply_without_a_spec_on_record_asks_for_the_path(job41, tmp_path, monkeypatch):
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "other.jsonl"))
    result = CliRunner().invoke(main, ["report", "41", "--apply"])
    assert result.exit_code == 1
    assert "pass it: slurmkit report 41 --apply job.yaml" in result.output


def test_apply_is_refused_with_json_and_a_spec_without_apply(job41):
    result = CliRunner().invoke(main, ["report", "41", "--apply", "--json"])
    assert result.exit_code == 2 and "not with --json" in result.output
    result = CliRunner().invoke(main, ["report", "41", str(job41)])
    assert result.exit_code == 2 and "a spec is read only with --apply" in result.output
    assert job41.read_text() == SPEC


def test_apply_writes_a_mig_slice_in_the_clusters_spelling(tmp_path):
    from slurmkit.report.efficiency import Tip
    from slurmkit.report.rightsize import rewritten

    spec = tmp_path / "job.yaml"
    spec.write_text("resources: {gpus: a100:1, time: 1h}\n")
    used = {"time": 60, "mem": 100.0, "cpus_per_task": 1.0, "gpus": 1, "gpu_mem": 3000.0}
    _, after, _ = rewritten(spec, "9", [Tip("gpu", "less", "...", 1, 1, "a100_1g.5gb:1")], used, {"a100_1g.5gb": 5120})
    assert "gpus: a100_1g.5gb:1  # slurmkit report 9: GPU memory peak 2.9G\n" in after
    with pytest.raises(Exception, match="asks GPU memory a100_1g.5gb:1, below what it used"):
        rewritten(spec, "9", [Tip("gpu", "less", "...", 1, 1, "a100_1g.5gb:1")], dict(used, gpu_mem=6000.0), {"a100_1g.5gb": 5120})


def test_the_end_of_watch_and_submit_wait_prints_the_gpu_lines(job41, capsys):
    from slurmkit.cli.views import print_reports

    print_reports(["41"])
    out = capsys.readouterr().out
    assert "GPU use (2 GPUs, idle under 5%):\n" in out and "  - asked 2 GPUs, GPU 1 on ng3 stayed idle" in out


def test_waiting_gpus_of_several_tasks_ask_more_cores_per_task():
    # made up: 4 tasks (one per A100, lightning-like) on one node, 4 cores each, saturated
    eff = record(gpus=4, cores=16, cpu_s=16 * 3000 * 0.97, tasks=4)
    job = JobGpus("7", tuple(gpu(i, mean=30.0, peak=30000.0, name=A100) for i in range(4)))
    [tip] = [t for t in gpu_tips(eff, job, NARVAL) if t.resource == "cpu"]
    assert (tip.direction, tip.suggest, tip.asked) == ("more", 8, 4), tip   # per task: 4 -> 8, within 12 per A100
    assert "ask cpus_per_task: 8 (per task; 4 tasks)" in tip.text


@pytest.mark.parametrize("spec, applied", [
    ("kind: threaded\nresources: {cpus_per_task: 16, time: 1h}\n", True),
    ("kind: mpi\nresources: {tasks_per_node: 16, time: 1h}\n", False),       # ranks in the batch step look like one task
    ("kind: mpi\nresources: {time: 1h}\n", False),                           # a whole-node site fills the node with tasks
    ("kind: threaded\nresources: {nodes: 2, cpus_per_task: 16, time: 1h}\n", False),
    ("kind: ddp\nresources: {gpus: h100:4, time: 1h}\n", False),             # one task per GPU
    ("kind: lightning\nresources: {gpus: {type: h100, count: 2}, time: 1h}\n", False),
    ("kind: gpu\nresources: {gpus: h100:1, cpus_per_task: 16, time: 1h}\n", True),
])
def test_apply_writes_cores_only_for_a_spec_of_one_task(tmp_path, spec, applied):
    """The cores advice is the job's busy cores in all; cpus_per_task is per task: written only
    where the spec runs one task, else named as left to the user."""
    from slurmkit.report.efficiency import Tip
    from slurmkit.report.rightsize import rewritten

    path = tmp_path / "job.yaml"
    path.write_text(spec)
    used = {"time": 600, "mem": 100.0, "cpus_per_task": 3.6, "gpus": 1, "gpu_mem": 0.0}
    _, after, skipped = rewritten(path, "9", [Tip("cpu", "less", "...", 4, 16)], used, {})
    assert ("cpus_per_task: 4  # slurmkit report 9: 3.6 cores busy" in after) is applied, after
    assert bool(skipped) is not applied
    if not applied:
        assert skipped == ["cores: the spec runs several tasks, and what sacct shows of the job cannot say which task "
                           "kept which cores busy: set cpus_per_task by hand from the advice above"]


def test_one_process_on_four_gpus_at_the_sites_most_cores_is_told_so_per_task():
    eff = record(gpus=4, cores=48, cpu_s=48 * 3000 * 0.97)
    job = JobGpus("7", tuple(gpu(i, mean=30.0, peak=30000.0, name=A100) for i in range(4)))
    [tip] = [t for t in gpu_tips(eff, job, NARVAL) if t.resource == "cpu"]
    assert tip.direction is None and "48 cores per task is the most here (12 per GPU)" in tip.text, tip.text
