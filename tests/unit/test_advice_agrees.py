"""The report's advice and what ``report --apply`` writes agree with ``check``: one model of a
job's needs (resolve.floors) that both use, so check never warns about a value the report
wrote; comments that described a rewritten value go with it; each band of use is worded truly."""

import re

import pytest
import yaml

from slurmkit.report import efficiency, rightsize
from slurmkit.report.efficiency import JobEfficiency
from slurmkit.resolve.resolve import floors, resolve
from slurmkit.sites.profiles import list_profiles, load_profile
from slurmkit.spec.spec import spec_from_mapping

from .golden_specs import KINDS, spec_for

PROFILES = sorted(p.name for p in list_profiles()[0])
#: (elapsed s, peak MiB per node, busy cores): a short idle job, a middling one, one at its limits
USES = [(20, 40.0, 0.1), (2400, 900.0, 1.0), (10500, 30000.0, 3.0)]


def _eff(spec: dict, elapsed: int, peak: float, busy: float) -> JobEfficiency:
    res, nodes = spec["resources"], spec["resources"].get("nodes", 1)
    cores = 16
    asked = float(res["mem"].rstrip("G")) * 1024 if isinstance(res.get("mem"), str) else 64.0 * 1024
    return JobEfficiency(job_id="9", state="COMPLETED", exit_code=0, signal=None, elapsed_s=elapsed, timelimit_s=3 * 3600,
                         cpu_s=busy * elapsed, cores=cores, nodes=nodes, req_mem_mib=asked * nodes, peak_mib=peak * nodes,
                         peak_estimated=False, gpus=0, steps=("batch",))


def _field_findings(data: dict, profile) -> set:
    return {(f.field, f.message) for f in resolve(spec_from_mapping(data, "job.yaml"), profile).findings}


@pytest.mark.parametrize("profile_name", PROFILES)
@pytest.mark.parametrize("kind", KINDS)
def test_what_apply_writes_check_says_nothing_about(tmp_path, profile_name, kind):
    """Every golden kind and profile, short to long, idle to busy, small to large peaks: each
    value --apply writes is within check's floors (no value is left out for a warning) and
    check has no new finding about it."""
    profile = load_profile(profile_name)
    spec = spec_for(profile, kind)
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    limits = floors(spec_from_mapping(spec, "job.yaml"), profile)
    before = _field_findings(spec, profile)
    for elapsed, peak, busy in USES:   # no more than the nodes it fits on have: it ran on one
        peak, busy = min(peak, 0.9 * (limits.max_mem_mib or peak)), min(busy, limits.max_cpus or busy)
        eff = _eff(spec, elapsed, peak, busy)
        used = {"time": elapsed, "mem": peak, "cpus_per_task": busy, "gpus": 0, "gpu_mem": 0.0}
        _, after, skipped = rightsize.rewritten(path, "9", efficiency.tips(eff, floors=limits), used, {}, profile)
        assert not [line for line in skipped if "check would say" in line], skipped
        written = yaml.safe_load(after)
        changed = {f"resources.{k}" for k, v in written["resources"].items() if spec["resources"].get(k) != v}
        new = {f for f in _field_findings(written, profile) - before if f[0] in changed}
        assert not new, (after, new)


def test_a_gpu_jobs_memory_advice_stops_at_what_check_accepts(tmp_path):
    """A PyTorch job on one H100 that peaked at 500M: 4G, the host memory a GPU process holds, not 1G."""
    spec = {"name": "t", "profile": "nibi", "account": "def-someprof", "kind": "gpu",
            "resources": {"gpus": "h100:1", "mem": "32G", "time": "3h"},
            "environment": {"venv": {"packages": ["torch"]}}, "launch": {"command": "python train.py"}}
    profile = load_profile("nibi")
    limits = floors(spec_from_mapping(spec, "job.yaml"), profile)
    assert limits.mem_mib == 4096
    eff = _eff(spec, 2400, 500.0, 1.0)
    [memory] = [t for t in efficiency.tips(eff, floors=limits) if t.resource == "memory"]
    assert memory.suggest == 4096 and "ask 4G (4G of host memory per GPU process)" in memory.text, memory.text
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    _, after, _ = rightsize.rewritten(path, "9", [efficiency.Tip("memory", "less", "ask 1G", 1024, 32768)],
                                      {"time": 2400, "mem": 500.0, "cpus_per_task": 1.0, "gpus": 1, "gpu_mem": 0.0}, profile)
    assert re.search(r"mem: 4G +# slurmkit report 9: peak 500M \(4G of host memory per GPU process\)", after), after
    assert not [f for f in resolve(spec_from_mapping(yaml.safe_load(after), "job.yaml"), profile).findings
                if f.field == "resources.mem"]
