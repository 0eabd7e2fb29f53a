"""What each GPU of a job did, from the samples the job script wrote, and advice that fits the site.

The sampler in the rendered script (contract: docs/job-spec.md, "monitor") appends
``nvidia-smi --query-gpu=timestamp,index,uuid,name,utilization.gpu,memory.used,memory.total,
power.draw --format=csv,noheader,nounits`` lines to ``<key>.gpu.<host>.csv`` in the job's log
folder (one file per node; ``<key>`` is the exit file's stem, ``123`` or ``123_4``) and, when it
stops, one line to ``<key>.gpu.<host>.state``: ``stopped <epoch> interval=<N>`` or
``unavailable <reason>``.

Reading them:

- each file is streamed, line by line, never more than MAX_SAMPLE_BYTES of it (the sampler takes
  about 300 samples over the time limit, at most one a minute: a week on 8 GPUs writes about
  10 MiB; sampled each second by hand, about 50 MiB), and no line longer than MAX_LINE_BYTES;
  ``report --remote`` copies each file over ssh up to the same cap, in memory;
  what is kept per GPU is a handful of sums and a 101-bin histogram of utilisation (for the
  95th percentile), so memory does not grow with the file;
- ``[N/A]`` and ``[Not Supported]`` (power on some cards, MIG instances) are missing figures,
  a line that does not parse is skipped, and a last line without its newline (the job was killed
  mid-write) is ignored;
- no file at all is never an error: the report says "no GPU samples: ..." and why (the state
  file's reason, or that no sampler ran).

A GPU is idle when its mean utilisation is below IDLE_UTIL_PCT (5 %): a GPU that only holds a
CUDA context, or one the program never touched, reads 0 %; one fed now and then reads more.

Advice (:func:`gpu_tips`) is :class:`efficiency.Tip` records, merged with the CPU, memory and
time advice by ``efficiency.consistent`` so that no report moves a resource both ways:

- fewer GPUs where some stayed idle, rounded up to a count the site takes (Trillium: 1 or a
  multiple of 4, profile ``scheduling.whole_node.gpu_counts``), never below the GPUs that worked;
- a MIG slice (the cluster's own gres spelling, from the node type's ``mig:`` list) for one GPU
  used lightly (mean below LOW_GPU_UTILISATION) whose peak memory plus MEMORY_MARGIN fits the
  slice: the smallest such slice; only where the profile lists MIG, never for several GPUs;
- more cores where the GPUs wait (mean below LOW_GPU_UTILISATION) while the cores are saturated
  (CPU efficiency at least BUSY_CPU_EFFICIENCY): twice the cores, within the site's cores per GPU;
  the reverse (GPUs busy, cores idle: fewer cores) is efficiency.py's CPU advice, which already
  says it and which this module leaves standing.
"""

from __future__ import annotations

import glob
import re
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from slurmkit.core.records import Record
from slurmkit.report.efficiency import (
    CPU_ADVICE_MIN_S,
    LOW_GPU_UTILISATION,
    MEMORY_MARGIN,
    JobEfficiency,
    Tip,
    counted_noun,
    floored,
    format_mem,
)
from slurmkit.report.timeline import IDLE_UTIL_PCT, Timeline, timestamp  # IDLE_UTIL_PCT: below it a GPU (or a sample) is idle

#: at or above this CPU efficiency the cores are saturated (they cannot feed the GPUs faster).
BUSY_CPU_EFFICIENCY = 0.9
#: the most of one sample file that is read.
MAX_SAMPLE_BYTES = 32 << 20
#: a longer line is no nvidia-smi line: skipped.
MAX_LINE_BYTES = 4096
#: the most of a state file that is read.
MAX_STATE_BYTES = 4096

_MISSING = ("[n/a]", "[not supported]", "n/a", "")


class GpuUse(Record):
    """One GPU of one node over the job: utilisation (percent), memory (MiB), power (W)."""

    host: str
    # mypy: a field named index overrides tuple.index, which nothing calls on a record; namedtuple
    # allows the name, and mypy itself types use.index as int.
    index: int  # type: ignore[assignment]
    uuid: str
    name: str
    samples: int
    mean_util: Optional[float]      # None: the card never reported it
    p95_util: Optional[float]
    peak_mem_mib: Optional[float]
    mem_total_mib: Optional[float]
    mean_power_w: Optional[float]
    span_s: Optional[float] = None          # first sample to last (timeline.py: the shape over time)
    idle_start_s: Optional[float] = None    # idle before the first busy sample
    idle_end_s: Optional[float] = None      # idle after the last busy sample
    stalls: Tuple[Tuple[float, float], ...] = ()   # (offset, length) of each idle run between busy samples
    stall_count: int = 0                    # every stall, kept or not (timeline.MAX_STALLS)
    series: Tuple[Tuple[float, Optional[float], Optional[float]], ...] = ()   # (offset, mean util %, peak MiB)

    @property
    def shape(self) -> List[str]:
        """The idle start, the stalls and the idle end in words (timeline.shape_words)."""
        from slurmkit.report.timeline import shape_words

        return shape_words(self.idle_start_s, self.stalls, self.stall_count, self.idle_end_s, busy=not self.idle)

    @property
    def idle(self) -> bool:
        return self.mean_util is not None and self.mean_util < IDLE_UTIL_PCT

    @property
    def label(self) -> str:
        return f"GPU {self.index} on {self.host}"


class JobGpus(Record):
    """The GPUs of one job or array task, or why there are none to show."""

    job_id: str
    gpus: Tuple[GpuUse, ...]
    missing: Optional[str] = None           # why there are no samples (None when there are)
    cut_short: Tuple[str, ...] = ()         # files read only up to MAX_SAMPLE_BYTES

    @property
    def mean_util(self) -> Optional[float]:
        known = [g.mean_util for g in self.gpus if g.mean_util is not None]
        return sum(known) / len(known) if known else None


# --------------------------------------------------------------------------------- reading

class _Tally:
    """The running figures of one GPU: sums and a utilisation histogram, never the samples."""

    def __init__(self, host: str, index: int, uuid: str, name: str):
        self.host, self.index, self.uuid, self.name = host, index, uuid, name
        self.samples = self.util_n = self.power_n = 0
        self.util_sum = self.power_sum = 0.0
        self.histogram = [0] * 101
        self.peak_mem: Optional[float] = None
        self.total_mem: Optional[float] = None
        self.timeline = Timeline()

    def add(self, util, used, total, power, when: Optional[float] = None) -> None:
        self.samples += 1
        self.timeline.add(when, util, used)
        if util is not None:
            self.util_n += 1
            self.util_sum += util
            self.histogram[max(0, min(100, int(round(util))))] += 1
        if used is not None:
            self.peak_mem = used if self.peak_mem is None else max(self.peak_mem, used)
        if total is not None:
            self.total_mem = total
        if power is not None:
            self.power_n += 1
            self.power_sum += power

    def use(self) -> GpuUse:
        line = self.timeline
        return GpuUse(self.host, self.index, self.uuid, self.name, self.samples,
                      self.util_sum / self.util_n if self.util_n else None, self._p95(),
                      self.peak_mem, self.total_mem, self.power_sum / self.power_n if self.power_n else None,
                      line.span_s, line.idle_start_s, line.idle_end_s, tuple(line.stalls), line.stall_count, line.series())

    def _p95(self) -> Optional[float]:
        """The nearest-rank 95th percentile, from the histogram (whole percents)."""
        if not self.util_n:
            return None
        rank, seen = 0.95 * self.util_n, 0
        for value, count in enumerate(self.histogram):
            seen += count
            if seen >= rank:
                return float(value)
        return 100.0


def number(text: str) -> Optional[float]:
    """A field of nvidia-smi's csv: a number, or None for ``[N/A]``, ``[Not Supported]``, junk."""
    text = text.strip()
    if text.lower() in _MISSING:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value and value not in (float("inf"), float("-inf")) and value >= 0 else None


def parse_line(line: str) -> Optional[Tuple[int, str, str, Optional[float], Optional[float], Optional[float], Optional[float]]]:
    """``2026/11/26 20:00:01.123, 0, GPU-8f1c..., NVIDIA H100 80GB HBM3, 97, 40123, 81559, 612.34`` ->
    (index, uuid, name, util %, memory used MiB, memory total MiB, power W); None: not a sample."""
    fields = [field.strip() for field in line.split(",")]
    if len(fields) != 8 or not fields[1].isdigit() or not fields[0]:
        return None
    util, used, total, power = (number(field) for field in fields[4:])
    return int(fields[1]), fields[2], fields[3], util, used, total, power


def read_samples_file(path: Path, host: str) -> Tuple[List[GpuUse], bool]:
    """The GPUs of one node's file, and whether it was cut short at MAX_SAMPLE_BYTES (streamed)."""
    from slurmkit.core.files import open_regular

    tallies: Dict[Tuple[int, str], _Tally] = {}
    read = 0
    with open_regular(path) as handle:
        while read < MAX_SAMPLE_BYTES:
            raw = handle.readline(MAX_LINE_BYTES)
            if not raw:
                break
            read += len(raw)
            if not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):   # skip the rest of an over-long line
                    raw = handle.readline(MAX_LINE_BYTES)
                    read += len(raw)
                continue                                 # ... or the partial last line
            text = raw.decode("utf-8", "replace")
            sample = parse_line(text)
            if sample is None:
                continue
            index, uuid, name, util, used, total, power = sample
            tally = tallies.get((index, uuid))
            if tally is None:
                tally = tallies[(index, uuid)] = _Tally(host, index, uuid, name)
            tally.add(util, used, total, power, timestamp(text.partition(",")[0]))
        cut = read >= MAX_SAMPLE_BYTES and bool(handle.read(1))
    return [t.use() for t in sorted(tallies.values(), key=lambda t: (t.index, t.uuid))], cut


def read_state(path: Path) -> Optional[str]:
    """The first line of a state file; None when there is none or it cannot be read."""
    from slurmkit.core.files import read_bytes_bounded

    try:
        text = read_bytes_bounded(path, MAX_STATE_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    return (text.splitlines() or [""])[0].strip()


def read_job(job_id: str, folder: Optional[str], shown: Optional[str] = None) -> JobGpus:
    """Every node's samples for one job or array task (``job_id`` is the exit file's stem);
    ``shown`` names the folder in messages (``--remote``: the cluster's, not the local copy's)."""
    if not folder:
        return JobGpus(job_id, (), "slurmkit has no log folder for this job (it did not submit it)")
    base = Path(folder)
    gpus: List[GpuUse] = []
    cut: List[str] = []
    problems: List[str] = []
    for path in sorted(base.glob(glob.escape(job_id) + ".gpu.*.csv")):
        host = path.name[len(job_id) + 5:-4]
        try:
            found, short = read_samples_file(path, host)
        except OSError as error:
            problems.append(f"{path.name}: {error.strerror or error}")
            continue
        gpus += found
        if short:
            cut.append(path.name)
    if gpus:
        return JobGpus(job_id, tuple(gpus), None, tuple(cut))
    return JobGpus(job_id, (), _why_none(base, job_id, problems, shown or str(base)))


def _why_none(base: Path, job_id: str, problems: List[str], shown: str) -> str:
    states = []
    for path in sorted(base.glob(glob.escape(job_id) + ".gpu.*.state")):
        line = read_state(path)
        host = path.name[len(job_id) + 5:-6]
        if line and line.startswith("unavailable"):
            states.append(f"{host}: {line[len('unavailable'):].strip() or 'no nvidia-smi'}")
        elif line and line.startswith("stopped"):
            states.append(f"{host}: the sampler stopped without a complete sample (a job shorter than one interval?)")
    if problems or states:
        return "; ".join(problems + states)
    if any(base.glob(glob.escape(job_id) + ".gpu.*.csv")):
        return "the sample files hold no complete line"
    return f"no {job_id}.gpu.*.csv in {shown} (the sampler did not run: monitor.gpu off, or a script from before GPU sampling)"


def with_gpu_samples(effs: Sequence[JobEfficiency], folder: Optional[str],
                     shown: Optional[str] = None) -> Tuple[List[JobEfficiency], Dict[str, JobGpus]]:
    """Each record with its GPU figures from the samples where there are some (they are better
    than sacct's ``gres/gpuutil``, which most sites do not gather), and each job's GPUs."""
    out, found = [], {}
    for eff in effs:
        job = read_job(eff.job_id, folder, shown)
        if job.gpus:
            known = [g.mean_util for g in job.gpus if g.mean_util is not None]
            peaks = [g.peak_mem_mib for g in job.gpus if g.peak_mem_mib is not None]
            eff = eff._replace(gpus=max(eff.gpus, len(job.gpus)),
                               gpu_util_pct=sum(known) if known else eff.gpu_util_pct,
                               gpu_mem_mib=max(peaks) if peaks else eff.gpu_mem_mib)
        if job.gpus or eff.gpus:
            found[eff.job_id] = job
        out.append(eff)
    return out, found


# --------------------------------------------------------------------------------- advice

def node_type_for(profile, gpus: Sequence[GpuUse]):
    """The profile's GPU node type the job ran on, from the card's name (``NVIDIA A100-SXM4-40GB``
    -> the type whose model is a100); the only GPU type when the name says nothing; else None."""
    if profile is None:
        return None
    types = [t for t in profile.node_types if t.gpus]
    for gpu in gpus:
        name = re.sub(r"[^a-z0-9]", "", gpu.name.lower())
        for node_type in types:
            if re.sub(r"[^a-z0-9]", "", node_type.gpus.model.lower()) in name:
                return node_type
    return types[0] if len(types) == 1 else None


def allowed_gpu_count(profile, wanted: int) -> int:
    """The smallest GPU count at or above ``wanted`` the site takes: Trillium takes 1 or a
    multiple of 4 (``whole_node.gpu_counts: [1, 4]``: 1, or whole nodes of 4)."""
    whole = profile.scheduling.whole_node if profile is not None else None
    counts = sorted(whole.gpu_counts) if whole and whole.gpu_counts else []
    if not counts or wanted in counts[:-1]:
        return wanted
    per_node = counts[-1]
    for count in counts:
        if count >= wanted:
            return count
    return -(-wanted // per_node) * per_node


def gpu_tips(eff: JobEfficiency, job: JobGpus, profile=None, floors=None) -> List[Tip]:
    """Advice from the samples of one job: idle GPUs, a MIG slice, the cores that feed them;
    never fewer GPUs than check accepts of the job's spec (``floors``, resolve.Floors)."""
    if not job.gpus or eff.state != "COMPLETED":
        return []
    asked = max(eff.gpus, len(job.gpus))
    feeding = _feeding_tips(eff, job, asked, profile)
    said = _idle_tips(job, asked, profile, floors)
    if not said and not feeding:      # GPUs that wait for the cores are fed, not cut to a slice
        said = _mig_tips(job, asked, profile)
    return said + feeding


def _idle_tips(job: JobGpus, asked: int, profile, floors=None) -> List[Tip]:
    idle = [g for g in job.gpus if g.idle]
    if not idle:
        return []
    named = ", ".join(g.label for g in idle[:3]) + (f" and {len(idle) - 3} more" if len(idle) > 3 else "")
    head = f"asked {counted_noun(asked, 'GPU')}, {named} stayed idle (under {IDLE_UTIL_PCT:.0f}% utilisation)"
    if asked < 2:
        if idle[0].p95_util:   # busy now and then: mostly idle, not unused (a MIG slice, or feed it: _mig_tips)
            return []
        return [Tip("gpu", None, f"{head}: the program did not use it; check that it runs on the GPU")]
    fewest, why = floored(max(1, asked - len(idle)), floors, "gpu")
    wanted = allowed_gpu_count(profile, int(fewest))
    if wanted >= asked and why:
        return [Tip("gpu", None, f"{head}: keep {asked}{why} and spread the work over them, or use a kind of one process")]
    if wanted >= asked:
        return [Tip("gpu", None, f"{head}; {_site(profile)} takes {_counts(profile)} GPUs: keep {asked} and spread the work over them")]
    return [Tip("gpu", "less", f"{head}: ask {wanted}{why}", wanted, asked)]


def _mig_tips(job: JobGpus, asked: int, profile) -> List[Tip]:
    if asked != 1 or len(job.gpus) != 1:
        return []
    gpu = job.gpus[0]
    if gpu.mean_util is None or gpu.mean_util >= LOW_GPU_UTILISATION * 100 or "mig" in gpu.name.lower():
        return []
    node_type = node_type_for(profile, job.gpus)
    slices = sorted((m for m in (node_type.gpus.mig if node_type else ()) if m.memory_mib),
                    key=lambda m: m.memory_mib)
    if gpu.peak_mem_mib is None or not slices:
        return [Tip("gpu", None, f"1 GPU at {gpu.mean_util:.0f}% average utilisation: feed it faster "
                                 f"(more data-loader workers, data staged in $SLURM_TMPDIR)")]
    need = gpu.peak_mem_mib * MEMORY_MARGIN
    fits = [m for m in slices if m.memory_mib >= need]
    if not fits:
        return []
    mig = fits[0]
    of = f" of {format_mem(gpu.mem_total_mib)}" if gpu.mem_total_mib else ""
    return [Tip("gpu", "less", f"1 GPU at {gpu.mean_util:.0f}% average utilisation, peak memory {format_mem(gpu.peak_mem_mib)}{of}: "
                               f"a MIG slice is enough: ask gpus: {mig.gres}:1 ({mig.profile})", 1, 1, f"{mig.gres}:1")]


def _feeding_tips(eff: JobEfficiency, job: JobGpus, asked: int, profile) -> List[Tip]:
    """The GPUs that worked (idle ones are _idle_tips' business) waiting on saturated cores."""
    working = [g.mean_util for g in job.gpus if g.mean_util is not None and not g.idle]
    mean, busy = (sum(working) / len(working) if working else None), eff.cpu_efficiency
    if mean is None or busy is None or eff.elapsed_s < CPU_ADVICE_MIN_S:
        return []
    if mean >= LOW_GPU_UTILISATION * 100 or busy < BUSY_CPU_EFFICIENCY:
        return []
    node_type = node_type_for(profile, job.gpus)
    per_gpu = node_type.gpus.max_cores_per_gpu if node_type and node_type.gpus.max_cores_per_gpu else None
    head = (f"GPUs at {mean:.0f}% average utilisation while the {counted_noun(eff.cores, 'core')} were {busy:.0%} busy: "
            "the GPUs wait for data")
    # cpus_per_task is per task: a job of several tasks (one per GPU) is advised per task
    tasks, have = eff.tasks, eff.cores_per_task
    if have is None:
        return [Tip("cpu", "more", f"{head}: ask more cores per task and as many data-loader workers")]
    wanted = have * 2 if per_gpu is None else min(have * 2, per_gpu * asked // tasks)
    if wanted <= have:
        most = f" ({per_gpu} per GPU)" if per_gpu else ""
        return [Tip("cpu", None, f"{head}; {have} cores per task is the most here{most}: make the data loading cheaper")]
    each = f" (per task; {tasks} tasks)" if tasks > 1 else ""
    return [Tip("cpu", "more", f"{head}: ask cpus_per_task: {wanted}{each} and as many data-loader workers", wanted, have)]


def _site(profile) -> str:
    return profile.name.capitalize() if profile is not None else "this site"


def _counts(profile) -> str:
    counts = sorted(profile.scheduling.whole_node.gpu_counts)
    return " or ".join([str(c) for c in counts[:-1]] + [f"a multiple of {counts[-1]}"])


def report_tips(eff: JobEfficiency, job: Optional[JobGpus], profile=None, floors=None) -> List[Tip]:
    """The whole advice of one job: efficiency.py's, with the samples' GPU advice in place of the
    sacct-based one where there are samples, made consistent."""
    from slurmkit.report.efficiency import consistent, tips

    base = tips(eff, floors=floors)
    if job is None or not job.gpus or not (eff.steps or eff.elapsed_s):   # accounting has not its steps yet
        return base
    return consistent([t for t in base if t.resource != "gpu"] + gpu_tips(eff, job, profile, floors))


# --------------------------------------------------------------------------------- output

class GpuReport(Record):
    """A report with the GPU samples: the records (GPU figures from the samples), each job's
    GPUs, the figures' lines and the advice (one job's, or the array's). A record, not text:
    each front end formats it (plain, gauges on a terminal, JSON)."""

    effs: Tuple[JobEfficiency, ...]
    jobs: Dict[str, JobGpus]
    advice: Tuple[Tip, ...]
    figures: Tuple[str, ...]        # the lines before the advice, the GPU lines among them

    @property
    def text(self) -> str:
        """The plain report: the figures, then the advice."""
        from slurmkit.report.efficiency import advice_lines

        return "\n".join([*self.figures, *advice_lines([t.text for t in self.advice])]) + "\n"


def full_report(effs: Sequence[JobEfficiency], folder: Optional[str], profile=None, shown: Optional[str] = None,
                floors=None) -> GpuReport:
    """The one report ``report``, ``watch`` and ``submit --wait`` print: efficiency.py's, with
    the GPU lines before the advice and the GPU advice in it; ``floors`` (resolve.Floors of the
    job's spec) are what check accepts, never advised below."""
    from slurmkit.report.efficiency import array_tips, figure_lines, summarize

    effs, jobs = with_gpu_samples(effs, folder, shown)
    if len(effs) == 1:
        said = report_tips(effs[0], jobs.get(effs[0].job_id), profile, floors)
        extra = gpu_lines(jobs[effs[0].job_id], live=effs[0].state == "RUNNING") if effs[0].job_id in jobs else []
    else:
        said = array_tips(effs, summarize(effs).states, floors=floors)
        extra = array_lines(jobs)
    return GpuReport(tuple(effs), jobs, tuple(said), (*figure_lines(effs), *extra))


def gpu_lines(job: JobGpus, live: bool = False) -> List[str]:
    """One line per GPU (or why there are none), for the plain report; ``live``: the job runs
    on, its sample file is still being written, and the figures are so far."""
    so_far = " so far" if live else ""
    if not job.gpus:
        return [f"GPU use{so_far}: no GPU samples: {job.missing}"]
    lines = [f"GPU use{so_far} ({counted_noun(len(job.gpus), 'GPU')}, idle under {IDLE_UTIL_PCT:.0f}%"
             + ("; the live sample file, not final" if live else "") + "):"]
    for g in job.gpus:
        lines.append(f"  {describe(g)}")
        if g.shape:
            lines.append(f"    over time: {'; '.join(g.shape)}")
    lines += [f"  {name}: read only its first {MAX_SAMPLE_BYTES >> 20} MiB" for name in job.cut_short]
    return lines


def describe(gpu: GpuUse) -> str:
    """``GPU 0 on cdr2543 (NVIDIA H100 80GB HBM3, GPU-8f1c...): utilisation mean 97%, p95 99%; ...``"""
    util = ("utilisation not reported" if gpu.mean_util is None
            else f"utilisation mean {gpu.mean_util:.0f}%, p95 {gpu.p95_util:.0f}%")
    memory = memory_text(gpu)
    power = "" if gpu.mean_power_w is None else f"; power mean {gpu.mean_power_w:.0f} W"
    return f"{gpu.label} ({gpu.name}, {gpu.uuid}): {util}; {memory}{power}" + ("  IDLE" if gpu.idle else "")


def memory_text(gpu: GpuUse) -> str:
    if gpu.peak_mem_mib is None:
        return "memory not reported"
    if gpu.mem_total_mib:
        return f"memory peak {format_mem(gpu.peak_mem_mib)} of {format_mem(gpu.mem_total_mib)} ({gpu.peak_mem_mib / gpu.mem_total_mib:.0%})"
    return f"memory peak {format_mem(gpu.peak_mem_mib)}"


#: a sparkline's width in characters: the job's time in this many equal slices.
SPARK_WIDTH = 60


class SparkRow(Record):
    """One GPU over the job's time, for a terminal: its label, utilisation and memory sparklines
    (SPARK_WIDTH slices of the time between its first and last sample) and its shape in words."""

    label: str
    util: str
    memory: str
    words: str
    span_s: float


def spark_rows(job: JobGpus, width: int = SPARK_WIDTH) -> List[SparkRow]:
    """A SparkRow per GPU sampled over some time (one sample draws no line)."""
    from slurmkit.report.timeline import columns, sparkline

    rows = []
    for gpu in job.gpus:
        if not gpu.series or not gpu.span_s:
            continue
        utils, mems = columns(gpu.series, gpu.span_s, min(width, len(gpu.series)))
        top = gpu.mem_total_mib or max((m for m in mems if m is not None), default=0.0)
        rows.append(SparkRow(gpu.label, sparkline(utils, 100.0), sparkline(mems, top), "; ".join(gpu.shape), gpu.span_s))
    return rows


def array_lines(jobs: Dict[str, JobGpus]) -> List[str]:
    """For an array: how many tasks were sampled, and the idle GPUs of each task."""
    sampled = [job for job in jobs.values() if job.gpus]
    lines = [f"GPU samples: {len(sampled)} of {counted_noun(len(jobs), 'task')}"
             + ("" if sampled or not jobs else f" ({next(iter(jobs.values())).missing})")] if jobs else []
    idle = [f"{job.job_id} {g.label}" for job in sampled for g in job.gpus if g.idle]
    if idle:
        lines.append("Idle GPUs: " + ", ".join(idle[:10]) + (f" and {len(idle) - 10} more" if len(idle) > 10 else ""))
    return lines


def as_json(jobs: Dict[str, JobGpus]) -> Dict[str, object]:
    """``gpu_use`` for ``--json``: per job, its GPUs with the idle flag, or why there are none."""
    return {"gpu_use": {job_id: {"gpus": [gpu_json(g) for g in job.gpus], "missing": job.missing,
                                 "cut_short": list(job.cut_short), "idle_below_pct": IDLE_UTIL_PCT}
                        for job_id, job in jobs.items()}}


def gpu_json(gpu: GpuUse) -> Dict[str, object]:
    """One GPU for ``--json``: its figures, ``idle``, its ``shape`` in words; ``stalls`` as
    ``[offset_s, length_s]`` and ``series`` as ``[offset_s, util_pct, mem_mib]`` lists."""
    return dict(gpu._asdict(), idle=gpu.idle, shape=gpu.shape, stalls=[list(s) for s in gpu.stalls],
                series=[list(p) for p in gpu.series])
