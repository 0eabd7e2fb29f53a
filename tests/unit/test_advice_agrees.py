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


def _with_gpus(eff: JobEfficiency, spec: dict, profile, limits):
    """The advice for ``eff``, where the spec asks GPUs as if only the first of them worked (the
    rest idle): (the tips, the GPUs that worked)."""
    from slurmkit.report.gpuuse import GpuUse, JobGpus, report_tips
    from slurmkit.report.rightsize import _gpu_count

    count = _gpu_count(spec["resources"].get("gpus"))
    if not count:
        return efficiency.tips(eff, floors=limits), 0
    gpus = tuple(GpuUse("n1", i, f"GPU-{i}", "GPU", 100, 0.0 if i else 90.0, 90.0, 1000.0, 16000.0, 100.0) for i in range(count))
    return report_tips(eff._replace(gpus=count), JobGpus("9", gpus), profile, limits), 1


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
        said, working = _with_gpus(eff, spec, profile, limits)
        used = {"time": elapsed, "mem": peak, "cpus_per_task": busy, "gpus": working, "gpu_mem": 0.0}
        _, after, skipped = rightsize.rewritten(path, "9", said, used, {}, profile)
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


# ------------------------------------------------------------------ comments of rewritten values

#: the words a comment uses for each field's number: ``8 cores`` is about cpus_per_task
_UNITS = {"cpus_per_task": r"cores?|cpus?|threads?", "nodes": r"nodes?", "tasks_per_node": r"ranks?|tasks?",
          "mem": r"G|GB|GiB", "gpus": r"GPUs?|x?\s*[a-z]\d+"}


def contradictions(text: str):
    """(field, its value, the comment) for each comment on a resources field's line, or just
    above it, that states a number for the field other than the field's own."""
    lines = text.splitlines()
    resources = yaml.safe_load(text)["resources"]
    found = []
    for number, line in enumerate(lines):
        key = re.match(r"\s+(\w+):", line)
        if not key or key.group(1) not in _UNITS:
            continue
        field = key.group(1)
        value = str(resources[field]).rstrip("G").rpartition(":")[2]
        # the report's own comment says what the job measured, not the field's value
        said = [line.partition(" #")[2].partition("slurmkit report")[0]] + list(_block_above(lines, number))
        for comment in said:
            for stated in re.findall(rf"(\d+)\s*(?:{_UNITS[field]})\b", comment, re.IGNORECASE):
                if stated != value:
                    found.append((field, resources[field], comment.strip()))
    return found


def _block_above(lines, number):
    while number > 0 and lines[number - 1].strip().startswith("#"):
        number -= 1
        yield lines[number]


SPEC_WITH_COMMENTS = """\
name: train
profile: narval
account: def-someprof
kind: threaded
resources:
  # 8 cores: one per OpenMP thread
  cpus_per_task: 8
  mem: 16G      # 16G measured last spring
  time: 3h
launch:
  command: ./solver
"""


def test_apply_drops_the_comments_that_describe_the_values_it_rewrites(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(SPEC_WITH_COMMENTS)
    assert contradictions(SPEC_WITH_COMMENTS) == []
    tips = [efficiency.Tip("cpu", "less", "...", 4, 8), efficiency.Tip("memory", "less", "...", 4096, 16384)]
    used = {"time": 3000, "mem": 2000.0, "cpus_per_task": 3.4, "gpus": 0, "gpu_mem": 0.0}
    _, after, _ = rightsize.rewritten(path, "9", tips, used, {}, load_profile("narval"))
    assert contradictions(after) == [], after
    assert "  cpus_per_task: 4  # slurmkit report 9: 3.4 cores busy\n" in after
    assert "  mem: 4G       # slurmkit report 9: peak 2G\n" in after   # at the column of the comment it replaced
    assert "  time: 3h\n" in after and "8 cores" not in after and "16G measured" not in after


def test_a_comment_that_does_not_state_the_old_value_is_kept(tmp_path):
    text = SPEC_WITH_COMMENTS.replace("  # 8 cores: one per OpenMP thread\n", "  # one per OpenMP thread\n")
    path = tmp_path / "job.yaml"
    path.write_text(text)
    used = {"time": 3000, "mem": 2000.0, "cpus_per_task": 3.4, "gpus": 0, "gpu_mem": 0.0}
    _, after, _ = rightsize.rewritten(path, "9", [efficiency.Tip("cpu", "less", "...", 4, 8)], used, {}, load_profile("narval"))
    assert "  # one per OpenMP thread\n  cpus_per_task: 4  # slurmkit report 9" in after
    assert "  mem: 16G      # 16G measured last spring\n" in after     # not rewritten: its comment stays


NIAGARA_MPI_TEXT = """\
name: mpi
profile: niagara
kind: mpi
resources:
  # 4 nodes of 40 cores, 80 ranks each with Hyper-Threading
  nodes: 4
  tasks_per_node: 80   # 80 ranks per node
  time: 12h
environment:
  modules: [NiaEnv/2019b, intel, openmpi]
launch:
  command: ./a.out
  launcher: mpirun
"""


def test_port_repack_drops_the_comments_that_describe_the_old_shape():
    from slurmkit.port.retarget import choose_target, port_spec, ported_text

    data = yaml.safe_load(NIAGARA_MPI_TEXT)
    source = load_profile("niagara")
    ported = port_spec(data, spec_from_mapping(data), source, choose_target(source, None, load_profile), repack=True)
    text = ported_text(ported, NIAGARA_MPI_TEXT, data)
    assert contradictions(NIAGARA_MPI_TEXT) == [] and contradictions(text) == [], text
    assert "  nodes: 2\n  tasks_per_node: 160\n" in text
    assert "--repack: the same 320 ranks" in text      # the header says what moved, and why


@pytest.mark.parametrize("old, new, comment, stale", [
    (8, 4, "8 cores: one per thread", True),
    (8, 4, "18 cores elsewhere", False),
    ("16G", "4G", "16 GB measured", True),
    ("16G", "4G", "16GiB", True),
    ("16G", "4G", "1.6G", False),
    ("v100:2", "h100:2", "two V100s", True),
    ("v100:2", "h100:2", "2 GPUs", False),
    ("v100:2", "v100:1", "2 GPUs", True),
    ("3h", "1h", "measured: 2h40", False),
    ("3h", "1h", "3h is plenty", True),
])
def test_what_a_comment_says_of_a_rewritten_value(old, new, comment, stale):
    from slurmkit.core.roundtrip import stale_patterns

    assert any(re.search(p, comment, re.IGNORECASE) for p in stale_patterns(old, new)) is stale


# ------------------------------------------------------------------ words of each band

def _job(**changes) -> JobEfficiency:
    base = JobEfficiency(job_id="7", state="COMPLETED", exit_code=0, signal=0, elapsed_s=3000, timelimit_s=3600,
                         cpu_s=2900.0, cores=1, nodes=1, req_mem_mib=1024.0, peak_mib=700.0, peak_estimated=False,
                         gpus=0, steps=("batch",))
    return base._replace(**changes)


@pytest.mark.parametrize("peak, said", [
    (3092.0, "peak 3G of 1G (302%), over the limit: ask 4G"),     # a sampled or estimated peak past the request
    (1024.0, "peak 1G of 1G, at the limit: ask 2G"),
    (980.0, "peak 980M of 1G, close to the limit: ask 2G"),
    (700.0, None),                                               # fits: nothing to say
])
def test_each_band_of_memory_use_is_worded_truly(peak, said):
    memory = [t.text for t in efficiency.tips(_job(peak_mib=peak)) if t.resource == "memory"]
    assert memory == ([said] if said else [])


def test_memory_far_below_the_request_is_told_to_ask_less():
    assert efficiency.advice(_job(req_mem_mib=16384.0, peak_mib=3000.0)) == ["asked 16G, peak 2.9G: ask 4G"]


@pytest.mark.parametrize("elapsed, said", [
    (3700, "used 1h2m of 1h (103%), over the limit: ask 2h"),   # a time limit's grace
    (3600, "used 1h of 1h, at the limit: ask 2h"),
    (3300, "used 55m of 1h, close to the limit: ask 2h"),
    (2400, None),
    (600, "asked 1h, used 10m: ask 15m"),
])
def test_each_band_of_time_use_is_worded_truly(elapsed, said):
    time = [t.text for t in efficiency.tips(_job(elapsed_s=elapsed, cpu_s=elapsed * 0.9)) if t.resource == "time"]
    assert time == ([said] if said else [])


@pytest.mark.parametrize("changes, said", [
    ({"steps": (), "elapsed_s": 0, "cpu_s": 0.0}, "CPU Utilized: none, it never ran"),
    ({"steps": ("batch", "extern"), "elapsed_s": 0, "cpu_s": 0.0}, "CPU Utilized: too short to measure"),
    ({"state": "RUNNING", "elapsed_s": 0}, "CPU Utilized: not known until the job ends"),
])
def test_a_job_that_ran_too_short_to_measure_is_not_said_never_to_have_run(changes, said):
    assert said in efficiency.format_report([_job(**changes)])


def test_no_advice_says_where_the_figures_are():
    """The advice is printed after the figures (and over --json, nowhere near them): it does not say where they are."""
    for state in ("FAILED", "CANCELLED"):
        for text in efficiency.advice(_job(state=state, exit_code=3)):
            assert " below" not in text and " above" not in text, text


def test_the_report_of_a_registered_job_advises_within_what_check_accepts_of_its_spec(tmp_path, monkeypatch):
    """``report`` reads the spec the job was submitted from: 500M of peak on one H100 is advised
    4G (what a PyTorch process holds), and --apply writes that, about which check says nothing."""
    import subprocess

    from click.testing import CliRunner

    from slurmkit.cli.main import main
    from slurmkit.slurm import registry, slurmcli

    sacct = ("51|COMPLETED|0:0|3000|180|00:50:00|1|32G||billing=1,cpu=1,gres/gpu=1,mem=32G,node=1|1||\n"
             "51.batch|COMPLETED|0:0|3000||00:50:00|1||500M|cpu=1,gres/gpu=1,mem=32G,node=1|1|1||\n")
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "jobs.jsonl"))
    monkeypatch.setattr(slurmcli, "run_slurm", lambda argv, **kw: subprocess.CompletedProcess(argv, 0, sacct, ""))
    spec = tmp_path / "job.yaml"
    spec.write_text("name: t\nprofile: nibi\naccount: def-someprof\nkind: gpu\nresources:\n  gpus: h100:1\n  mem: 32G\n  time: 3h\n"
                    "environment:\n  venv: {packages: [torch]}\nlaunch: python train.py\n")
    registry.record(registry.Submission(job_id="51", name="t", folder=str(tmp_path), profile="nibi",
                                        submitted="2026-11-26T20:00:00+00:00", spec=str(spec)))
    result = CliRunner().invoke(main, ["report", "51", "--apply", "--yes"])
    assert result.exit_code == 0, result.output
    assert "  - asked 32G, peak 500M: ask 4G (4G of host memory per GPU process)\n" in result.output, result.output
    assert re.search(r"\n  mem: 4G +# slurmkit report 51: peak 500M", spec.read_text()), spec.read_text()
    checked = CliRunner().invoke(main, ["check", str(spec)])
    assert "resources.mem" not in checked.output, checked.output


def test_a_ddp_job_with_an_idle_gpu_is_not_told_to_run_on_one():
    """check warns that kind ddp on one GPU pays for communication it does not need: the report
    does not advise it, and says why it keeps the two."""
    from slurmkit.report.gpuuse import GpuUse, JobGpus, report_tips

    spec = {"name": "t", "profile": "nibi", "account": "def-someprof", "kind": "ddp",
            "resources": {"gpus": "h100:2", "time": "3h"}, "environment": {"venv": {"packages": ["torch"]}},
            "launch": {"command": "python train.py"}}
    profile = load_profile("nibi")
    limits = floors(spec_from_mapping(spec, "job.yaml"), profile)
    gpus = tuple(GpuUse("n1", i, f"GPU-{i}", "GPU", 100, 0.0 if i else 90.0, 90.0, 1000.0, 16000.0, 100.0) for i in range(2))
    eff = _eff(spec, 2400, 3000.0, 1.0)._replace(gpus=2)
    [gpu] = [t for t in report_tips(eff, JobGpus("9", gpus), profile, limits) if t.resource == "gpu"]
    assert gpu.direction is None and "keep 2 (kind 'ddp' on one GPU pays for communication it does not need)" in gpu.text, gpu.text
    [told] = [t for t in report_tips(eff, JobGpus("9", gpus), profile) if t.resource == "gpu"]   # without the spec: as before
    assert told.direction == "less" and told.suggest == 1


def test_apply_drops_a_comment_that_says_the_old_value_in_words(tmp_path):
    """'# eight cores', '# sixteen gigabytes': the old value in words is as stale as in figures;
    a comment that says no amount of the field's kind stays."""
    text = (SPEC_WITH_COMMENTS.replace("  # 8 cores: one per OpenMP thread\n", "  # eight cores, one per thread\n")
            .replace("# 16G measured last spring", "# sixteen gigabytes, to be safe"))
    path = tmp_path / "job.yaml"
    path.write_text(text)
    tips = [efficiency.Tip("cpu", "less", "...", 4, 8), efficiency.Tip("memory", "less", "...", 4096, 16384)]
    used = {"time": 3000, "mem": 2000.0, "cpus_per_task": 3.4, "gpus": 0, "gpu_mem": 0.0}
    _, after, _ = rightsize.rewritten(path, "9", tips, used, {}, load_profile("narval"))
    assert "eight cores" not in after and "sixteen gigabytes" not in after
    kept = SPEC_WITH_COMMENTS.replace("  # 8 cores: one per OpenMP thread\n", "  # two nodes would be faster\n")
    path.write_text(kept)
    _, after, _ = rightsize.rewritten(path, "9", [efficiency.Tip("memory", "less", "...", 4096, 16384)], used, {},
                                      load_profile("narval"))
    assert "# two nodes would be faster" in after       # over cpus_per_task, which did not change


def test_apply_writes_memory_advice_per_core_where_the_spec_asks_mem_per_cpu(tmp_path):
    """A spec with mem_per_cpu used to get "not applied ... set it by hand" and then "nothing to
    change": the advice per node is shared over the cores each node had, rounded up."""
    spec = {"name": "t", "profile": "fir", "account": "def-someprof", "kind": "threaded",
            "resources": {"cpus_per_task": 8, "mem_per_cpu": "4G", "time": "3h"}, "launch": {"command": "python run.py"}}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    used = {"time": 2400, "mem": 900.0, "cpus_per_task": 7.5, "gpus": 0, "gpu_mem": 0.0, "cores_per_node": 8}
    tip = efficiency.Tip("memory", "less", "ask 2G", 2048, 32768)
    _, after, skipped = rightsize.rewritten(path, "9", [tip], used, {}, load_profile("fir"))
    assert skipped == []
    assert yaml.safe_load(after)["resources"]["mem_per_cpu"] == "256M" and "mem:" not in after
    _, after, skipped = rightsize.rewritten(path, "9", [tip], {**used, "cores_per_node": 0}, {}, load_profile("fir"))
    assert "mem_per_cpu: 4G" in after and skipped and "sacct did not say how many cores" in skipped[0]
