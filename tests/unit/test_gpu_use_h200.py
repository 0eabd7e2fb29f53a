"""The report's reading of real nvidia-smi files: the sampler's own CSV from the device run of
bench/gpu_sampler.py (2 x H200, driver 580, torch 2.11, 2026-11-26; the jobs' bodies as the
rendered scripts run them, sampler interval 1 s, startup included), one run of each case:

- busy: kind multigpu, 2 GPUs, both training ResNet-50;
- one-of-two: kind gpu asking 2 GPUs, running a 1-GPU program;
- idle: ResNet-18 at batch 16 sleeping 0.2 s a step (the device has no cgroup, so nvidia-smi saw
  both GPUs: the file holds GPU 0's lines, the job's, as bench/gpu_sampler.py filters them).
"""

from pathlib import Path

import pytest

from slurmkit.report.efficiency import JobEfficiency
from slurmkit.report.gpuuse import gpu_tips, read_job
from slurmkit.sites.profiles import load_profile

SAMPLES = Path(__file__).parent / "fixtures" / "gpu_samples_h200"


def case(name):
    return read_job("4242", str(SAMPLES / name))


def record(gpus):
    return JobEfficiency(job_id="4242", state="COMPLETED", exit_code=0, signal=0, elapsed_s=40, timelimit_s=300, cpu_s=40.0,
                         cores=16 * gpus, nodes=1, req_mem_mib=64000.0, peak_mib=7000.0, peak_estimated=False, gpus=gpus,
                         steps=("batch",))


def test_every_line_of_the_real_files_is_a_sample_of_an_h200():
    for name, lines in (("busy", 88), ("one-of-two", 62), ("idle", 39)):
        job = case(name)
        assert sum(g.samples for g in job.gpus) == lines and job.missing is None
        assert {g.name for g in job.gpus} == {"NVIDIA H200"} and {g.mem_total_mib for g in job.gpus} == {143771.0}
        assert (SAMPLES / name / "4242.gpu.vm.state").read_text().startswith("stopped ")


def test_both_busy_gpus_are_named_busy_and_get_no_gpu_advice():
    job = case("busy")
    assert [(g.index, g.idle, g.p95_util) for g in job.gpus] == [(0, False, 100.0), (1, False, 100.0)]
    assert gpu_tips(record(2), job, load_profile("fir")) == []


@pytest.mark.parametrize("site", ["fir", "narval", "rorqual"])
def test_two_gpus_asked_one_used_names_the_idle_one_and_advises_one(site):
    job = case("one-of-two")
    assert [g.index for g in job.gpus if g.idle] == [1]
    (tip,) = gpu_tips(record(2), job, load_profile(site))
    assert tip.text == "asked 2 GPUs, GPU 1 on vm stayed idle (under 5% utilisation): ask 1"


def test_a_mostly_idle_gpu_gets_a_mig_slice_where_the_site_has_mig_and_advice_to_feed_it_where_not():
    job = case("idle")
    (gpu,) = job.gpus
    assert gpu.idle and gpu.p95_util > 0       # busy now and then: mostly idle, not unused
    (fir,) = gpu_tips(record(1), job, load_profile("fir"))
    assert fir.text.endswith("a MIG slice is enough: ask gpus: nvidia_h100_80gb_hbm3_1g.10gb:1 (1g.10gb)")
    (trillium,) = gpu_tips(record(1), job, load_profile("trillium"))   # Trillium has no MIG
    assert trillium.text.startswith("1 GPU at 1% average utilisation: feed it faster")
