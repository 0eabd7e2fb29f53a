"""How well a finished job used what it asked for, from one ``sacct`` call, with plain advice.

Like ``seff``: elapsed against the time limit, CPU time against cores x elapsed, peak memory
against the request, and the GPUs allocated; then sentences a user can act on ("asked 32G,
peak 2.1G: ask 4G"). An array gives one record per task and a summary with one combined advice.

What sacct says, and how it is read here (checked on Slurm 22.05):

- the allocation row (``123``, ``123_4``) holds the request: ``TimelimitRaw`` (minutes),
  ``NCPUS``, ``ReqMem`` (the whole job's memory since 21.08; older releases wrote ``4000Mc``
  per core or ``4000Mn`` per node), ``AllocTRES`` (``gres/gpu=1``) and ``TotalCPU`` summed over
  its steps;
- ``MaxRSS`` is only on step rows (``.batch``, ``.extern``, ``.0``) and is the largest *task* of
  the step, so a step's memory is estimated as ``MaxRSS x NTasks`` (seff does the same and says
  "estimated"); the job's peak is the largest step's;
- steps get their figures when they end: a running job has no ``MaxRSS`` and no ``TotalCPU`` yet;
- a requeued job (Lightning's auto-requeue, a node failure, a preemption) keeps its id: plain
  sacct shows only its last run, ``-D`` (``--duplicates``) every run, each allocation row followed
  by its steps. The report is of the last run and names the runs before it, so the time a job
  took over all its runs is never hidden.

GPU utilisation is in sacct only where the site gathers it (``AcctGatherGpu``/NVML, Slurm 21.08
and later): ``gres/gpuutil`` (percent) in a step's ``TRESUsageInAve`` and ``gres/gpumem`` in its
``TRESUsageInMax``. Where they are missing (the local 22.05 cluster has no GPUs to gather from),
the report says so and never invents a figure.

Advice comes as :class:`Tip` records (which resource, which way, how much) and is made
consistent before it is worded: no report says "ask more memory" and "ask 4G" together.
"""

from __future__ import annotations

import math
import re
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from slurmkit.core.errors import UnitError
from slurmkit.core.kinds import first_kind
from slurmkit.core.records import Record
from slurmkit.core.units import format_duration, format_size, parse_duration
from slurmkit.slurm.monitor import REQUEUED_STATES, TERMINAL, outputs_words, state_word
from slurmkit.slurm.monitor import int_or_none as _int

SACCT_FIELDS = ("JobID", "State", "ExitCode", "ElapsedRaw", "TimelimitRaw", "TotalCPU", "NCPUS", "ReqMem",
                "MaxRSS", "AllocTRES", "NNodes", "NTasks", "TRESUsageInAve", "TRESUsageInMax")
#: the fields a row must have; those after them (NTasks, the TRES usage) may be missing from
#: text captured before slurmkit asked for them.
_REQUIRED_FIELDS = 11

#: Alliance's DefMemPerCPU: a job that asks for no memory gets this much per core.
DEFAULT_MEM_PER_CPU_MIB = 256

MEMORY_MARGIN = 1.25      # suggest the peak plus a quarter
TIME_MARGIN = 1.5         # suggest the elapsed time plus a half
TIME_FLOOR_S = 15 * 60    # never suggest less than this
CLOSE_TO_LIMIT = 0.9      # at or above this fraction of a limit, a completed job had too little headroom
CPU_ADVICE_MIN_S = 60     # CPU efficiency of a shorter job is mostly start-up noise
LOW_CPU_EFFICIENCY = 0.5
LOW_GPU_UTILISATION = 0.5

#: Sizes worth asking for, in MiB: past 2G each step is x1.5 or x1.33 (4G, 6G, 8G, 12G, ...).
_MEM_LADDER = (256, 512, 1024, 2048) + tuple(int(g * 1024) for k in range(2, 12) for g in (2 ** k, 1.5 * 2 ** k))
#: Time limits worth asking for, in seconds (3h, 12h, 24h, 3d and 7d are Alliance partition edges).
_TIME_LADDER = tuple(m * 60 for m in (15, 30, 60, 120, 180, 240, 360, 480, 720, 960, 1440, 2160, 2880, 4320, 5760,
                                      7200, 10080))

_SIZE_RE = re.compile(r"^(\d+(?:\.\d+)?)([KMGTP]?)([cn]?)$", re.IGNORECASE)
_SIZE_FACTORS = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 ** 2, "P": 1024 ** 3}
_CPU_TIME_RE = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)$")


class EarlierRun(Record):
    """A run of a requeued job before the one reported (sacct -D): how it ended and how long it took."""

    state: str                        # REQUEUED, PREEMPTED, NODE_FAIL, ...
    exit_code: Optional[int]
    elapsed_s: int
    cpu_s: float




class SoFar(Record):
    """A running job's use until now, from sstat (live.py): never final, always said "so far"."""

    cpu_s: float                      # CPU time of the steps running now, all their tasks
    peak_mib: Optional[float]         # the largest running step's memory (MaxRSS x tasks)
    peak_estimated: bool              # True when that multiplies MaxRSS by several tasks
    steps: Tuple[str, ...]            # the steps sstat answered for: batch, extern, 0, ...


class JobEfficiency(Record):
    """One job, or one array task: what it asked for and what it used."""

    job_id: str                       # "123", or "123_4" for an array task
    state: str                        # COMPLETED, FAILED, TIMEOUT, RUNNING, ... ("CANCELLED by 0" -> CANCELLED)
    exit_code: Optional[int]
    signal: Optional[int]
    elapsed_s: int
    timelimit_s: Optional[int]        # None: unlimited or not known
    cpu_s: float                      # TotalCPU: user + system time of all steps
    cores: int                        # NCPUS of the allocation
    nodes: int
    req_mem_mib: Optional[float]      # the whole job's memory request
    peak_mib: Optional[float]         # the largest step's memory (MaxRSS x tasks); None: not recorded
    peak_estimated: bool              # True when that figure multiplies MaxRSS by several tasks
    gpus: int
    steps: Tuple[str, ...] = ()       # step names: batch, extern, 0, 1, ...
    saved: Tuple[str, ...] = ()       # from the job's exit file: outputs that arrived whole
    unsaved: Tuple[str, ...] = ()     # ... and "DEST: REASON" for those that did not
    gpu_util_pct: Optional[float] = None   # gres/gpuutil of the busiest step (percent, all its GPUs); None: not gathered
    gpu_mem_mib: Optional[float] = None    # gres/gpumem: the most GPU memory a step used
    earlier_runs: Tuple[EarlierRun, ...] = ()   # a requeued job's runs before this one, oldest first
    tasks: int = 1                    # the most tasks of a step but extern's (an srun step's NTasks); 1: one seen
    so_far: Optional[SoFar] = None    # a RUNNING job's use until now (sstat); None: ended, or not asked
    partial: bool = False             # accounting's row lacks the request (no TimelimitRaw, a ReqMem like "16?"): see settled_report

    @property
    def cores_per_task(self) -> Optional[int]:
        """NCPUS over the tasks seen, where they divide evenly (cpus_per_task is per task); None otherwise."""
        return self.cores // self.tasks if self.tasks >= 1 and self.cores % self.tasks == 0 else None

    @property
    def done(self) -> bool:
        return self.state in TERMINAL

    @property
    def all_elapsed_s(self) -> int:
        """Wall-clock over every run: what a requeued job took in all."""
        return self.elapsed_s + sum(run.elapsed_s for run in self.earlier_runs)

    @property
    def cpu_efficiency(self) -> Optional[float]:
        """CPU time over cores x elapsed; None while running or when nothing ran."""
        if not self.done or self.elapsed_s <= 0 or self.cores <= 0:
            return None
        return self.cpu_s / (self.cores * self.elapsed_s)

    @property
    def memory_efficiency(self) -> Optional[float]:
        if self.peak_mib is None or not self.req_mem_mib:
            return None
        return self.peak_mib / self.req_mem_mib

    @property
    def time_fraction(self) -> Optional[float]:
        if not self.timelimit_s:
            return None
        return self.elapsed_s / self.timelimit_s

    @property
    def gpu_utilisation(self) -> Optional[float]:
        """Average GPU utilisation over the allocated GPUs (0 to 1); None where sacct has none.
        ``gres/gpuutil`` adds the percentages of a step's GPUs, hence the division by the count."""
        if self.gpu_util_pct is None or not self.gpus:
            return None
        return min(1.0, self.gpu_util_pct / (100.0 * self.gpus))


class ArraySummary(Record):
    """Several tasks of one array at a glance: counts, (min, median, max) of each figure, one advice."""

    job_id: str                                         # the array's id, "123"
    tasks: int
    states: Dict[str, int]
    elapsed_s: Optional[Tuple[float, float, float]]
    cpu_efficiency: Optional[Tuple[float, float, float]]
    peak_mib: Optional[Tuple[float, float, float]]
    advice: List[str]


def sacct_command(job_id: str) -> List[str]:
    """The one sacct call that answers for a job, an array (every task) or one task (``123_4``)."""
    return ["sacct", "-n", "-P", "-D", "-o", ",".join(SACCT_FIELDS), "-j", str(job_id)]


# --------------------------------------------------------------------------------- parsing

def parse(text: str) -> List[JobEfficiency]:
    """``sacct -n -P [-D]`` lines (fields as SACCT_FIELDS) -> one record per job or array task, in
    sacct's order: its last run, with the requeued runs before it (:func:`_runs_before`)."""
    runs: Dict[str, List[Tuple[Dict[str, str], List[Dict[str, str]]]]] = {}
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < _REQUIRED_FIELDS:
            continue
        row = dict(zip(SACCT_FIELDS, parts + [""] * (len(SACCT_FIELDS) - len(parts))))
        job, dot, step = row["JobID"].partition(".")
        if not dot:
            runs.setdefault(job, []).append((row, []))
        elif job in runs:      # a step belongs to the run whose allocation row came last
            runs[job][-1][1].append(dict(row, step=step))
    return [_record(job, *job_runs[-1])._replace(earlier_runs=_runs_before(job_runs)) for job, job_runs in runs.items()]


def _runs_before(job_runs) -> Tuple[EarlierRun, ...]:
    """The requeued runs just before the last, oldest first. An older row of the id that did not
    end requeued, or asked another time limit (a requeue keeps the request), is another job's.
    A limit accounting does not show yet (the last run's row, just after it starts or ends, can
    have none for a moment on Slurm 22.05) compares with any: the requeued state decides."""
    earlier: List[EarlierRun] = []
    limit = job_runs[-1][0]["TimelimitRaw"]
    for row, steps in reversed(job_runs[:-1]):
        state = state_word(row["State"])
        if state not in REQUEUED_STATES or (limit and row["TimelimitRaw"] and row["TimelimitRaw"] != limit):
            break
        cpu = parse_cpu_time(row["TotalCPU"])
        earlier.append(EarlierRun(state=state, exit_code=_int(row["ExitCode"].partition(":")[0]), elapsed_s=_int(row["ElapsedRaw"]) or 0,
                                  cpu_s=cpu if cpu is not None else sum(parse_cpu_time(step["TotalCPU"]) or 0.0 for step in steps)))
    return tuple(reversed(earlier))


def _record(job: str, row: Dict[str, str], steps: List[Dict[str, str]]) -> JobEfficiency:
    code, _, signal = row["ExitCode"].partition(":")
    cores, nodes = _int(row["NCPUS"]) or 0, _int(row["NNodes"]) or 1
    peak, estimated = None, False
    for step in steps:
        rss = parse_size(step["MaxRSS"], default_unit="K")
        if rss is None:
            continue
        tasks = _int(step.get("NTasks", "")) or 1
        if peak is None or rss * tasks > peak:
            peak, estimated = rss * tasks, tasks > 1
    gpu_util = _most(tres_value(step["TRESUsageInAve"], "gres/gpuutil") for step in steps)
    gpu_mem = _most(tres_size(step["TRESUsageInMax"], "gres/gpumem") for step in steps)
    cpu = parse_cpu_time(row["TotalCPU"])
    if cpu is None:
        cpu = sum(parse_cpu_time(step["TotalCPU"]) or 0.0 for step in steps)
    limit = _int(row["TimelimitRaw"])
    tasks = max((_int(step.get("NTasks", "")) or 1 for step in steps if step["step"] != "extern"), default=1)
    return JobEfficiency(
        job_id=job,
        state=state_word(row["State"]),
        exit_code=_int(code),
        signal=_int(signal),
        elapsed_s=_int(row["ElapsedRaw"]) or 0,
        timelimit_s=limit * 60 if limit is not None else None,
        cpu_s=cpu,
        cores=cores,
        nodes=nodes,
        req_mem_mib=parse_req_mem(row["ReqMem"], cores, nodes),
        peak_mib=peak,
        peak_estimated=estimated,
        gpus=gpu_count(row["AllocTRES"]),
        steps=tuple(step["step"] for step in steps),
        gpu_util_pct=gpu_util,
        gpu_mem_mib=gpu_mem,
        tasks=tasks,
        partial=not row["TimelimitRaw"].strip() and parse_size(row["ReqMem"]) is None,
    )


def _most(values) -> Optional[float]:
    known = [value for value in values if value is not None]
    return max(known) if known else None


def tres_value(tres: str, name: str) -> Optional[float]:
    """The number of ``name`` in a TRES string (``cpu=00:00:01,gres/gpuutil=87``); None if absent."""
    for item in tres.split(","):
        key, _, value = item.partition("=")
        if key == name:
            try:
                return float(value)
            except ValueError:
                return None
    return None


def tres_size(tres: str, name: str) -> Optional[float]:
    """A size in a TRES string (``gres/gpumem=1234M``; a bare number is bytes there) in MiB."""
    for item in tres.split(","):
        key, _, value = item.partition("=")
        if key == name:
            return parse_size(value, default_unit="M") if value[-1:].isalpha() else (
                float(value) / 2 ** 20 if value.isdigit() else None)
    return None


def parse_size(text: str, default_unit: str = "M") -> Optional[float]:
    """``96976K``, ``1G``, ``256M`` -> MiB; a bare number is in ``default_unit``; empty -> None."""
    match = _SIZE_RE.match(text.strip())
    if not match:
        return None
    number, unit, _ = match.groups()
    return float(number) * _SIZE_FACTORS[(unit or default_unit).upper()]


def parse_req_mem(text: str, cores: int, nodes: int) -> Optional[float]:
    """ReqMem -> the whole job's MiB: ``1G`` (22.05: already the total), ``4000Mc`` (per core), ``4000Mn`` (per node)."""
    size = parse_size(text)
    if size is None:
        return None
    per = text.strip()[-1:].lower()
    if per == "c":
        return size * max(cores, 1)
    if per == "n":
        return size * max(nodes, 1)
    return size


def parse_cpu_time(text: str) -> Optional[float]:
    """TotalCPU -> seconds: ``00:01.234`` (MM:SS.mmm), ``01:02:03``, ``1-02:03:04``; anything else -> None."""
    match = _CPU_TIME_RE.match(text.strip())
    if not match:
        return None
    days, hours, minutes, seconds = match.groups()
    return ((int(days or 0) * 24 + int(hours or 0)) * 60 + int(minutes)) * 60 + float(seconds)


def gpu_count(tres: str) -> int:
    """GPUs in an AllocTRES string: ``gres/gpu=2``, or the sum of typed entries (``gres/gpu:a100=2``) alone."""
    total, typed = None, 0
    for item in tres.split(","):
        name, _, value = item.partition("=")
        if name == "gres/gpu":
            total = _int(value) or 0
        elif name.startswith("gres/gpu:"):
            typed += _int(value) or 0
    return total if total is not None else typed


# --------------------------------------------------------------------------------- advice

class Tip(Record):
    """One piece of advice: what it is about, which way it moves the request, and how far."""

    resource: str                 # state | time | cpu | memory | gpu
    direction: Optional[str]      # "more" | "less" | None (it tells, it asks no change)
    text: str
    suggest: Optional[float] = None   # what it asks: seconds, cores, MiB per node; None: no figure
    asked: Optional[float] = None     # the request it moves, in the same unit
    value: Optional[str] = None       # what to write in the spec where no number says it (a MIG gres, gpuuse.py)


def advice(eff: JobEfficiency, default_mem_per_cpu_mib: Optional[int] = DEFAULT_MEM_PER_CPU_MIB) -> List[str]:
    """Plain sentences about the job's end, then its time, cores, memory and GPUs; [] when all looks right."""
    return [tip.text for tip in tips(eff, default_mem_per_cpu_mib)]


def tips(eff: JobEfficiency, default_mem_per_cpu_mib: Optional[int] = DEFAULT_MEM_PER_CPU_MIB, floors=None) -> List[Tip]:
    """The advice for one record, made consistent (:func:`consistent`). ``floors`` (resolve.Floors
    of the job's spec; None: not known) are what check accepts: no figure is advised below them,
    so that check never warns about what the report advised."""
    said = _state_advice(eff)
    if eff.state in ("PENDING", "RUNNING", "REQUEUED", "SUSPENDED", "RESIZING") or not (eff.steps or eff.elapsed_s):
        return said
    return consistent(said + _time_advice(eff, floors) + _cpu_advice(eff, floors)
                      + _memory_advice(eff, default_mem_per_cpu_mib, floors) + _gpu_advice(eff))


def limit_words(fraction: float) -> str:
    """How a use of ``fraction`` of its request is said, at or past CLOSE_TO_LIMIT: close to the
    limit below it, at it, over it above (sacct can record a peak or an elapsed time past what was
    asked: a sampled or estimated peak, a time limit's grace)."""
    if fraction > 1:
        return f" ({fraction:.0%}), over the limit"
    return ", at the limit" if fraction == 1 else ", close to the limit"


def floored(suggest: float, floors, resource: str) -> Tuple[float, str]:
    """``suggest`` raised to the floor check accepts (resolve.Floors), and the words that say why
    where it was raised ("" where it was not)."""
    floor = {"time": "time_s", "memory": "mem_mib", "cpu": "cpus", "gpu": "gpus"}.get(resource)
    least = getattr(floors, floor, 0) if floors is not None and floor else 0
    if suggest < least:
        return least, f" ({floors.reason(resource)})"
    most = {"time": "max_time_s", "memory": "max_mem_mib", "cpu": "max_cpus"}.get(resource)
    ceiling = getattr(floors, most, None) if floors is not None and most else None
    if ceiling is not None and suggest > ceiling:
        return ceiling, f" (the most {'a node here has' if resource == 'memory' else 'the site allows'})"
    return suggest, ""


def consistent(said: Sequence[Tip]) -> List[Tip]:
    """At most one way for each resource, said once: the first tip that moves a resource wins
    over a later one that moves it the other way (a task that ran out of memory outweighs a
    task that left memory unused); of two that move it the same way, the one that asks more
    is kept when asking more, less when asking less; a tip that only tells about a resource
    ("no memory advice") gives way to one that moves it."""
    chosen: Dict[str, Tip] = {}
    for tip in said:
        if tip.direction is None or tip.resource == "state":
            continue
        held = chosen.get(tip.resource)
        if held is None:
            chosen[tip.resource] = tip
        elif held.direction == tip.direction and tip.suggest is not None and (
                held.suggest is None or (tip.suggest > held.suggest) == (tip.direction == "more")):
            chosen[tip.resource] = tip
    kept: List[Tip] = []
    for tip in said:
        if tip.resource == "state" or (tip.direction is None and tip.resource not in chosen):
            kept.append(tip)
        elif chosen.get(tip.resource) is tip:
            kept.append(tip)
    return kept


#: exit codes of a task killed by SIGUSR1 (srun returns the signal's number, bash 128 + it): the
#: time-limit signal of kind lightning and of a copy back, which a program that does not catch it dies of
_USR1_DEATH = {code: f" ({code} is also what {who} returns for a program that SIGUSR1 killed, the signal a job is sent before "
                     f"its time limit: under kind {first_kind(requeues_on_signal=True).name}, is the Trainer's SLURM auto-requeue on?)"
               for code, who in ((10, "srun"), (138, "bash"))}


def _state_advice(eff: JobEfficiency) -> List[Tip]:
    state = eff.state
    if state == "COMPLETED":
        return []
    if state == "PENDING" and eff.earlier_runs:
        return [Tip("state", None, f"is queued to run again (run {len(eff.earlier_runs) + 1}): "
                                   "the runs so far are listed with the figures")]
    if state == "PENDING":
        return [Tip("state", None, "has not started yet: nothing to report")]
    if state == "REQUEUE_HOLD":
        return [Tip("state", None, f"was requeued and is held: `scontrol release {eff.job_id}` lets it run again "
                                   "(submitting it again would run it twice)")]
    if state.startswith("REQUEUE"):
        return [Tip("state", None, "was requeued and waits to run again: the figures are of the run that ended")]
    if state == "RUNNING" and eff.so_far is not None:
        return [Tip("state", None, "is still running: the figures above are so far, not final; "
                                   "advice on its request comes when it ends")]
    if state == "RUNNING":
        return [Tip("state", None, "is still running: sacct records memory and CPU time when each step ends (sstat shows them now)")]
    if state == "TIMEOUT":
        return [Tip("time", "more", f"hit its time limit{_of_limit(eff)}: ask more time or checkpoint", asked=eff.timelimit_s)]
    if state == "OUT_OF_MEMORY":
        return [_out_of_memory(eff, "ran out of memory")]
    if state == "FAILED":
        code = f" with exit code {eff.exit_code}" if eff.exit_code else ""
        usr1 = _USR1_DEATH.get(eff.exit_code, "") if eff.exit_code is not None else ""   # None: sacct gave no exit code
        return [Tip("state", None, f"failed{code}: read its output file; the figures may not show a full run" + usr1)]
    if state == "CANCELLED" and not (eff.steps or eff.elapsed_s):
        return [Tip("state", None, "was cancelled before it started: nothing to report")]
    if state == "CANCELLED":
        return [Tip("state", None, "was cancelled: the figures cover only the part that ran")]
    return [Tip("state", None, f"ended as {state}, not by its own doing: resubmit it")]


def _out_of_memory(eff: JobEfficiency, said: str) -> Tip:
    """Twice what it had, per node, on the ladder of sizes worth asking."""
    nodes = max(eff.nodes, 1)
    asked = (eff.req_mem_mib or eff.peak_mib or 0) / nodes
    if not asked:
        return Tip("memory", "more", f"{said}: ask more memory or make it use less")
    suffix = " per node" if nodes > 1 else ""
    suggest = _round_up(asked * 2, _MEM_LADDER)
    return Tip("memory", "more", f"{said} at {format_request(asked)}{suffix}: ask {format_size(suggest)}{suffix} "
                                 f"or make it use less", suggest, asked)


def _of_limit(eff: JobEfficiency) -> str:
    return f" of {format_duration(eff.timelimit_s)}" if eff.timelimit_s else ""


def _time_advice(eff: JobEfficiency, floors=None) -> List[Tip]:
    """Against what the job took over all its runs: a requeued job's last run is only its end."""
    if eff.state != "COMPLETED" or not eff.timelimit_s:
        return []
    took = eff.all_elapsed_s
    suggest, why = floored(_round_up(max(took * TIME_MARGIN, TIME_FLOOR_S), _TIME_LADDER), floors, "time")
    asked, used = format_duration(eff.timelimit_s), short_duration(took)
    if eff.earlier_runs and took > eff.timelimit_s:   # a job that checkpoints and requeues: no figure to write
        runs = len(eff.earlier_runs) + 1
        return [Tip("time", None, f"took {used} over {runs} runs of at most {asked}, each requeue waiting in the queue again: "
                                  f"a limit of {format_duration(int(suggest))} would run it in one where the cluster allows that; "
                                  "else keep checkpointing")]
    over = f" over {len(eff.earlier_runs) + 1} runs" if eff.earlier_runs else ""
    if suggest * 2 <= eff.timelimit_s:
        return [Tip("time", "less", f"asked {asked}, used {used}{over}: ask {format_duration(int(suggest))}{why}",
                    suggest, eff.timelimit_s)]
    if took >= CLOSE_TO_LIMIT * eff.timelimit_s:
        return [Tip("time", "more", f"used {used}{over} of {asked}{limit_words(took / eff.timelimit_s)}: "
                                    f"ask {format_duration(int(suggest))}{why}", suggest, eff.timelimit_s)]
    return []


def _cpu_advice(eff: JobEfficiency, floors=None) -> List[Tip]:
    """Fewer cores where the program kept few busy: ``cpus_per_task`` is per task, so a job of
    several tasks is told per task where sacct shows them, and by no figure where it cannot."""
    efficiency = eff.cpu_efficiency
    if efficiency is None or eff.elapsed_s < CPU_ADVICE_MIN_S or eff.cores < 2 or efficiency >= LOW_CPU_EFFICIENCY:
        return []
    used = max(1, round(eff.cpu_s / eff.elapsed_s))
    head = f"{eff.cores} cores at {efficiency:.0%} CPU efficiency"
    per_task = eff.cores_per_task
    if eff.tasks > 1 and per_task:
        busy = eff.cpu_s / eff.elapsed_s
        each, why = floored(max(1, round(busy / eff.tasks)), floors, "cpu")
        if each >= per_task:
            return []
        return [Tip("cpu", "less", f"{head}: its {eff.tasks} tasks kept about {busy:.1f} cores busy in all, {busy / eff.tasks:.1f} "
                                   f"each of their {per_task}: ask cpus_per_task: {each:.0f} (per task){why} or make them use "
                                   "more threads", each, per_task)]
    if eff.tasks > 1 or eff.nodes > 1:
        over = f" over {eff.nodes} nodes" if eff.nodes > 1 else ""
        return [Tip("cpu", "less", f"{head}{over}: its processes kept about {counted_noun(used, 'core')} busy in all: ask fewer cores per "
                                   f"task or fewer tasks, or make them use more threads")]
    more = "" if used == 1 else " more"
    ask, why = floored(used, floors, "cpu")
    if ask >= eff.cores:
        return []
    return [Tip("cpu", "less", f"{head}: the program uses about "
                               f"{counted_noun(used, 'core')}; ask cpus_per_task: {ask:.0f}{why} or make it use{more} threads",
                ask, eff.cores)]


def _memory_advice(eff: JobEfficiency, default_mem_per_cpu_mib: Optional[int], floors=None) -> List[Tip]:
    if eff.state == "OUT_OF_MEMORY" or not eff.req_mem_mib or (floors is not None and not floors.asks_memory):
        return []
    if floors is not None and floors.max_mem_mib is not None and floors.mem_mib > floors.max_mem_mib:
        return [Tip("memory", None, f"no memory advice: its GPU processes hold {format_size(floors.mem_mib)} on a node "
                                    f"({floors.reason('memory')}), more than a node here has ({format_size(floors.max_mem_mib)})")]
    if eff.peak_mib is None:
        return [Tip("memory", None, "no peak memory recorded (steps shorter than the sampling interval leave none): no memory advice")]
    if eff.state != "COMPLETED":
        return []
    per_node = eff.nodes > 1
    asked, peak = eff.req_mem_mib / eff.nodes, eff.peak_mib / eff.nodes
    suffix = " per node" if per_node else ""
    suggest, why = floored(_round_up(peak * MEMORY_MARGIN, _MEM_LADDER), floors, "memory")
    default = (default_mem_per_cpu_mib or 0) * max(eff.cores, 1)
    peak_text = ("about " if eff.peak_estimated else "") + format_mem(peak)
    if peak <= asked / 2 and eff.req_mem_mib > default and suggest < asked:
        return [Tip("memory", "less", f"asked {format_request(asked)}{suffix}, peak {peak_text}{suffix}: "
                                      f"ask {format_size(int(suggest))}{suffix}{why}", suggest, asked)]
    if peak >= CLOSE_TO_LIMIT * asked:
        return [Tip("memory", "more", f"peak {peak_text}{suffix} of {format_request(asked)}{limit_words(peak / asked)}: "
                                      f"ask {format_size(int(suggest))}{suffix}{why}", suggest, asked)]
    if why and asked < suggest:   # below the floor whatever the peak: check warns of it
        return [Tip("memory", "more", f"asked {format_request(asked)}{suffix}, peak {peak_text}{suffix}: "
                                      f"ask {format_size(int(suggest))}{suffix}{why}", suggest, asked)]
    return []


def _gpu_advice(eff: JobEfficiency) -> List[Tip]:
    if not eff.gpus:
        return []
    used = eff.gpu_utilisation
    if used is None:
        return [Tip("gpu", None, f"{counted_noun(eff.gpus, 'GPU')} allocated: sacct does not record GPU utilisation; "
                                 f"watch it with nvidia-smi on the node while the job runs")]
    if eff.state != "COMPLETED" or used >= LOW_GPU_UTILISATION:
        return []
    if eff.gpus > 1 and round(used * eff.gpus) < eff.gpus:
        fewer = max(1, round(used * eff.gpus))
        return [Tip("gpu", "less", f"{counted_noun(eff.gpus, 'GPU')} at {used:.0%} average utilisation: ask {counted_noun(fewer, 'GPU')}, "
                                   f"or feed them faster (more data-loader workers, data staged in $SLURM_TMPDIR)",
                    fewer, eff.gpus)]
    return [Tip("gpu", None, f"1 GPU at {used:.0%} average utilisation: feed it faster (more data-loader workers, "
                             f"data staged in $SLURM_TMPDIR) or try a MIG slice")]


def _round_up(value: float, ladder: Sequence[int]) -> int:
    """The first ladder step at or above ``value`` (past the top: ``value`` rounded up)."""
    for step in ladder:
        if step >= value:
            return step
    return int(math.ceil(value))


def counted_noun(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def short_duration(seconds: float) -> str:
    """Elapsed time as a person says it: whole minutes past a minute (12m, 3h5m), seconds below,
    and "under 1s" for a job that took no whole second (not "0m", which reads as nothing)."""
    seconds = int(round(seconds))
    if seconds == 0:
        return "under 1s"
    return format_duration(seconds if seconds < 60 else int(round(seconds / 60)) * 60)


def format_request(mib: float) -> str:
    """A requested size, exact when it is whole MiB (``1G``, ``600M``, ``4000M``)."""
    return format_size(int(mib)) if mib == int(mib) and mib >= 1 else format_mem(mib)


def format_mem(mib: float) -> str:
    """A measured size, short: ``2.1G``, ``95M``, ``3.1M``, ``512K``."""
    if mib >= 1024:
        return f"{mib / 1024:.1f}".rstrip("0").rstrip(".") + "G"
    if mib >= 10:
        return f"{mib:.0f}M"
    if mib >= 1:
        return f"{mib:.1f}".rstrip("0").rstrip(".") + "M"
    return f"{mib * 1024:.0f}K"


# --------------------------------------------------------------------------------- arrays

def summarize(effs: Sequence[JobEfficiency], default_mem_per_cpu_mib: Optional[int] = DEFAULT_MEM_PER_CPU_MIB) -> ArraySummary:
    """Tasks of one array: state counts, (min, median, max) figures, and one advice sized for the largest task."""
    if not effs:
        raise ValueError("summarize() needs at least one record")
    states: Dict[str, int] = {}
    for eff in effs:
        states[eff.state] = states.get(eff.state, 0) + task_count(eff.job_id)
    total = sum(states.values())
    finished = [eff for eff in effs if eff.done and eff.steps]
    said = array_tips(effs, states, default_mem_per_cpu_mib)
    return ArraySummary(
        job_id=effs[0].job_id.split("_")[0],
        tasks=total,
        states=dict(sorted(states.items())),
        elapsed_s=_spread([eff.elapsed_s for eff in finished]),
        cpu_efficiency=_spread([eff.cpu_efficiency for eff in finished]),
        peak_mib=_spread([eff.peak_mib for eff in finished]),
        advice=[tip.text for tip in said],
    )


def array_tips(effs: Sequence[JobEfficiency], states: Dict[str, int],
               default_mem_per_cpu_mib: Optional[int] = DEFAULT_MEM_PER_CPU_MIB, floors=None) -> List[Tip]:
    """One advice for an array: the tasks that did not complete first (they weigh most), then
    the advice for the largest completed task, made consistent: an array where one task ran
    out of memory is told to ask more, never also less."""
    total = sum(states.values())
    said = [_tasks_tip(effs, count, total, state) for state, count in sorted(states.items()) if state != "COMPLETED"]
    completed = [eff for eff in effs if eff.state == "COMPLETED"]
    if completed:
        said += tips(_largest(completed), default_mem_per_cpu_mib, floors)
    return consistent(said)


def _tasks_tip(effs: Sequence[JobEfficiency], count: int, total: int, state: str) -> Tip:
    line = _tasks_line(count, total, state)
    if state == "OUT_OF_MEMORY":
        largest = max((eff for eff in effs if eff.state == state), key=lambda eff: eff.req_mem_mib or 0)
        return _out_of_memory(largest, line.partition(":")[0])
    if state == "TIMEOUT":
        return Tip("time", "more", line, asked=effs[0].timelimit_s)
    return Tip("state", None, line)


def task_count(job_id: str) -> int:
    """How many tasks a row stands for: 1, or the size of a pending range such as ``12_[0-9%2]`` (10)."""
    match = re.search(r"_\[([^\]%]*)", job_id)
    if not match:
        return 1
    count = 0
    for item in match.group(1).split(","):
        bounds, _, step = item.partition(":")
        first, _, last = bounds.partition("-")
        if first.isdigit() and (not last or last.isdigit()):
            count += (int(last or first) - int(first)) // (int(step) if step.isdigit() and int(step) else 1) + 1
    return max(count, 1)


def _tasks_line(count: int, total: int, state: str) -> str:
    what = {"TIMEOUT": "hit the time limit: ask more time or checkpoint",
            "OUT_OF_MEMORY": "ran out of memory: ask more memory",
            "FAILED": "failed: read their output files",
            "CANCELLED": "were cancelled",
            "PENDING": "have not started yet",
            "RUNNING": "are still running"}.get(state, f"ended as {state}")
    return f"{count} of {total} tasks {what}"


def _largest(effs: Sequence[JobEfficiency]) -> JobEfficiency:
    """One record that stands for every task: the longest elapsed, the busiest cores, the highest peak."""
    first = effs[0]
    longest = max(effs, key=lambda eff: eff.all_elapsed_s)     # over every run of a requeued task
    busiest = max(effs, key=lambda eff: eff.cpu_efficiency or 0.0)
    peaks = [eff for eff in effs if eff.peak_mib is not None]
    highest = max(peaks, key=lambda eff: eff.peak_mib or 0.0) if peaks else first   # each has a peak: `or` is for mypy
    cpu_s = (busiest.cpu_efficiency or 0.0) * longest.elapsed_s * first.cores
    return first._replace(job_id=first.job_id.split("_")[0], elapsed_s=longest.elapsed_s, earlier_runs=longest.earlier_runs,
                          cpu_s=cpu_s, peak_mib=highest.peak_mib, peak_estimated=highest.peak_estimated)


def _spread(values) -> Optional[Tuple[float, float, float]]:
    values = sorted(value for value in values if value is not None)
    if not values:
        return None
    middle = len(values) // 2
    median = values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2
    return values[0], median, values[-1]


# --------------------------------------------------------------------------------- output

def format_report(effs: Sequence[JobEfficiency], default_mem_per_cpu_mib: Optional[int] = DEFAULT_MEM_PER_CPU_MIB) -> str:
    """Plain text like seff: one block for a job or a task, a summary block for an array."""
    if len(effs) == 1:
        lines, said = _job_lines(effs[0]), advice(effs[0], default_mem_per_cpu_mib)
    else:
        summary = summarize(effs, default_mem_per_cpu_mib)   # once: an array's summary reads every task
        lines, said = _array_lines(effs, summary), summary.advice
    return "\n".join(lines + advice_lines(said)) + "\n"


def figure_lines(effs: Sequence[JobEfficiency], default_mem_per_cpu_mib: Optional[int] = DEFAULT_MEM_PER_CPU_MIB) -> List[str]:
    """The report's figures, the lines before its advice: each front end (plain, rich, --remote) adds to them."""
    if len(effs) == 1:
        return _job_lines(effs[0])
    return _array_lines(effs, summarize(effs, default_mem_per_cpu_mib))


def _job_lines(eff: JobEfficiency) -> List[str]:
    so_far = " (figures so far, not final)" if eff.so_far is not None else ""
    lines = [f"Job ID: {eff.job_id}", f"State: {eff.state}{_exit_text(eff)}{so_far}", f"Nodes: {eff.nodes}", f"Cores: {eff.cores}"]
    efficiency = eff.cpu_efficiency
    if efficiency is None and eff.so_far is not None:
        pass                              # so_far_lines says it, below the wall-clock it is of
    elif efficiency is None:
        lines.append("CPU Utilized: " + _no_cpu_words(eff))
    else:
        lines += [f"CPU Utilized: {clock_time(eff.cpu_s)}",
                  f"CPU Efficiency: {efficiency:.2%} of {clock_time(eff.cores * eff.elapsed_s)} core-walltime"]
    limit = f" of {clock_time(eff.timelimit_s)} time limit ({eff.time_fraction:.1%})" if eff.timelimit_s else ""
    lines.append(f"Wall-clock{' so far' if eff.so_far is not None else ''}: {clock_time(eff.elapsed_s)}{limit}")
    lines += _runs_lines(eff)
    if eff.so_far is not None:
        lines += so_far_lines(eff, eff.so_far)
    elif eff.peak_mib is None:
        lines.append("Memory Utilized: not recorded")
    else:
        lines.append(f"Memory Utilized: {format_mem(eff.peak_mib)}" + (" (estimated maximum)" if eff.peak_estimated else ""))
    if eff.memory_efficiency is not None and eff.req_mem_mib:   # no efficiency without a request: the test is for mypy
        lines.append(f"Memory Efficiency: {eff.memory_efficiency:.2%} of {format_request(eff.req_mem_mib)}")
    lines.append(_gpu_line(eff, "GPUs"))
    if eff.unsaved:
        lines.append("Outputs: " + outputs_words(eff.saved, eff.unsaved))
    elif eff.saved:
        lines.append(f"Outputs: saved ({', '.join(eff.saved)})")
    return lines


def so_far_lines(eff: JobEfficiency, now: SoFar) -> List[str]:
    """A running job's CPU and memory until now (sstat), each marked so far: never final."""
    source = f"sstat, {counted_noun(len(now.steps), 'running step')}; not final"
    lines = []
    if eff.elapsed_s > 0 and eff.cores > 0:
        lines.append(f"CPU so far: {clock_time(now.cpu_s)}, {now.cpu_s / (eff.cores * eff.elapsed_s):.2%} of "
                     f"{clock_time(eff.cores * eff.elapsed_s)} core-walltime ({source})")
    else:
        lines.append(f"CPU so far: {clock_time(now.cpu_s)} ({source})")
    if now.peak_mib is None:
        return lines + [f"Memory so far: not reported ({source})"]
    of = f" of {format_request(eff.req_mem_mib)}, {now.peak_mib / eff.req_mem_mib:.2%}" if eff.req_mem_mib else ""
    estimated = ", estimated maximum" if now.peak_estimated else ""
    return lines + [f"Memory so far: peak {format_mem(now.peak_mib)}{of} ({source}{estimated})"]


def so_far_json(eff: JobEfficiency) -> Optional[dict]:
    """``so_far`` of a job in ``--json``: sstat's figures with the fractions they make; None when there are none."""
    now = eff.so_far
    if now is None:
        return None
    cpu = now.cpu_s / (eff.cores * eff.elapsed_s) if eff.elapsed_s > 0 and eff.cores > 0 else None
    memory = now.peak_mib / eff.req_mem_mib if now.peak_mib is not None and eff.req_mem_mib else None
    return dict(now._asdict(), steps=list(now.steps), elapsed_s=eff.elapsed_s, cpu_efficiency=cpu,
                memory_efficiency=memory, source="sstat")


def _no_cpu_words(eff: JobEfficiency) -> str:
    """Why a job has no CPU efficiency: not ended yet, never started (no steps, no time: sacct
    has nothing of a run), or ran too short for accounting to measure (steps, under a second)."""
    if not eff.done:
        return "not known until the job ends"
    if eff.steps or eff.elapsed_s:
        return "too short to measure (accounting samples a running job, and it ended first)"
    return "none, it never ran"


#: earlier runs listed one by one; past these, a count
_RUNS_SHOWN = 10


def _runs_lines(eff: JobEfficiency) -> List[str]:
    """A requeued job's runs: the report's figures are the last run's, the runs before it and the total are here."""
    if not eff.earlier_runs:
        return []
    runs = len(eff.earlier_runs) + 1
    shown = [f"  run {number}: {run.state} after {clock_time(run.elapsed_s)}"
             for number, run in enumerate(eff.earlier_runs[:_RUNS_SHOWN], 1)]
    if len(eff.earlier_runs) > _RUNS_SHOWN:
        shown.append(f"  ... and {len(eff.earlier_runs) - _RUNS_SHOWN} more")
    cpu = eff.cpu_s + sum(run.cpu_s for run in eff.earlier_runs)
    return ([f"Runs: {runs}, requeued {counted_noun(runs - 1, 'time')} (the figures above and below are of run {runs}, the last)"]
            + shown + [f"All runs: {clock_time(eff.all_elapsed_s)} wall-clock, {clock_time(eff.cores * eff.all_elapsed_s)} core-walltime, "
                       f"{clock_time(cpu)} CPU"])


def _array_lines(effs: Sequence[JobEfficiency], summary: ArraySummary) -> List[str]:
    first = effs[0]
    states = ", ".join(f"{state} {count}" for state, count in summary.states.items())
    lines = [f"Array ID: {summary.job_id}", f"Tasks: {summary.tasks} ({states})",
             f"Per task: {first.nodes} node(s), {first.cores} core(s), "
             f"{format_request(first.req_mem_mib) if first.req_mem_mib else 'default'} memory, "
             f"{clock_time(first.timelimit_s) if first.timelimit_s else 'no'} time limit"]
    lines.append("Wall-clock (min/median/max): " + _triple(summary.elapsed_s, clock_time))
    lines.append("CPU Efficiency (min/median/max): " + _triple(summary.cpu_efficiency, lambda v: f"{v:.2%}"))
    lines.append("Memory Utilized (min/median/max): " + _triple(summary.peak_mib, format_mem))
    lines.append(_gpu_line(first, "GPUs per task", summary_of=effs))
    lost = [eff for eff in effs if eff.unsaved]
    if lost:
        shown = ", ".join(eff.job_id for eff in lost[:10]) + (f" and {len(lost) - 10} more" if len(lost) > 10 else "")
        lines.append(f"Outputs NOT saved by {counted_noun(len(lost), 'task')}: {shown} (first: {lost[0].unsaved[0]})")
    requeued = [eff for eff in effs if eff.earlier_runs]
    if requeued:
        shown = ", ".join(f"{eff.job_id} ({len(eff.earlier_runs) + 1} runs)" for eff in requeued[:10])
        more = f" and {len(requeued) - 10} more" if len(requeued) > 10 else ""
        lines.append(f"Requeued: {counted_noun(len(requeued), 'task')}: {shown}{more} (figures are of each task's last run)")
    unfinished = [eff.job_id for eff in effs if eff.state != "COMPLETED"]
    if unfinished:
        shown = ", ".join(unfinished[:10]) + (f" and {len(unfinished) - 10} more" if len(unfinished) > 10 else "")
        lines.append(f"Not completed: {shown}")
    return lines


def _gpu_line(eff: JobEfficiency, label: str, summary_of: Sequence[JobEfficiency] = ()) -> str:
    """``GPUs: 2 (40% average utilisation)``, or that sacct did not record it."""
    if not eff.gpus:
        return "GPUs: none"
    unknown = f"{label}: {eff.gpus} (utilisation not recorded by sacct)"
    if summary_of:
        spread = _spread([e.gpu_utilisation for e in summary_of])
        if spread is None:
            return unknown
        return f"{label}: {eff.gpus} (average utilisation min/median/max: " + " / ".join(f"{v:.0%}" for v in spread) + ")"
    used = eff.gpu_utilisation
    if used is None:
        return unknown
    return f"{label}: {eff.gpus} ({used:.0%} average utilisation{' so far' if eff.so_far is not None else ''})"


def advice_lines(said: List[str]) -> List[str]:
    return ["Advice:"] + [f"  - {line}" for line in said] if said else ["Advice: none, the request fits the use"]


def _triple(values, show) -> str:
    return " / ".join(show(value) for value in values) if values else "not recorded"


def _exit_text(eff: JobEfficiency) -> str:
    """`` (exit code 3)``; a job a signal ended has no code of its own (SLURM's 0:9 is ``killed by signal 9``)."""
    if eff.exit_code is None or eff.state not in ("COMPLETED", "FAILED"):
        return ""
    if eff.signal and not eff.exit_code:
        return f" (killed by signal {eff.signal})"
    return f" (exit code {eff.exit_code}" + (f", signal {eff.signal}" if eff.signal else "") + ")"


def clock_time(seconds: float) -> str:
    """seff's clock: ``HH:MM:SS``, with ``D-`` in front past a day."""
    days, rest = divmod(int(round(seconds)), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return (f"{days}-" if days else "") + f"{hours:02d}:{minutes:02d}:{secs:02d}"


def as_json(effs: Sequence[JobEfficiency], default_mem_per_cpu_mib: Optional[int] = DEFAULT_MEM_PER_CPU_MIB) -> dict:
    """The report as plain data for ``--json``: every record with its derived figures and advice, and the summary."""
    jobs = [dict(eff._asdict(), steps=list(eff.steps), earlier_runs=[run._asdict() for run in eff.earlier_runs], so_far=so_far_json(eff),
                 all_elapsed_s=eff.all_elapsed_s, cpu_efficiency=eff.cpu_efficiency,
                 memory_efficiency=eff.memory_efficiency, time_fraction=eff.time_fraction,
                 advice=advice(eff, default_mem_per_cpu_mib)) for eff in effs]
    summary = None
    if len(effs) > 1:
        summary = summarize(effs, default_mem_per_cpu_mib)._asdict()
        for key in ("elapsed_s", "cpu_efficiency", "peak_mib"):
            if summary[key] is not None:
                summary[key] = dict(zip(("min", "median", "max"), summary[key]))
    return {"jobs": jobs, "summary": summary}


def report_for(job_id: str, retry_for: float = 15.0) -> List[JobEfficiency]:
    """Ask sacct about ``job_id`` (one call) and parse it; SchedulerError when it cannot answer."""
    from slurmkit.slurm.slurmcli import SchedulerError, run_slurm

    text = run_slurm(sacct_command(job_id), retry_for=retry_for, timeout=10.0, failed=f"sacct could not report on job {job_id}").stdout
    effs = parse(text)
    if not effs:
        raise SchedulerError(f"sacct has no record of job {job_id}: check the id, and that it ran on this cluster")
    return effs


def with_exit_files(effs: Sequence[JobEfficiency], folder: Optional[str]) -> List[JobEfficiency]:
    """Each record completed by its job's files in ``folder`` (the job's log folder): see with_job_files."""
    from slurmkit.slurm.jobfiles import job_file_text

    return with_job_files(effs, lambda job_id, suffix: job_file_text(job_id, folder, suffix))


#: the script submit keeps beside a job's logs, ``<job id>_submission.sh`` (slurm/submit.py).
SCRIPT_SUFFIX = "_submission.sh"
_TIME_LINE = re.compile(r"^#SBATCH[ \t]+(?:--time[= ]|-t[ \t]*)(\S+)", re.MULTILINE)


_MEM_LINE = re.compile(r"^#SBATCH[ \t]+--mem(-per-cpu)?[= ](\S+)", re.MULTILINE)


def script_time_limit(script: Optional[str]) -> Optional[int]:
    """The time limit (s) the job's kept script asked (``#SBATCH --time=``), or None."""
    match = _TIME_LINE.search(script or "")
    if not match:
        return None
    try:
        return parse_duration(match.group(1).strip("'\""))
    except UnitError:
        return None


def script_memory(script: Optional[str], cores: int, nodes: int) -> Optional[float]:
    """The whole job's memory (MiB) the kept script asked (``--mem`` per node, ``--mem-per-cpu``
    per core), or None; ``--mem=0`` (whole nodes) says no figure."""
    match = _MEM_LINE.search(script or "")
    size = parse_size(match.group(2).strip("'\"")) if match else None
    if not size:
        return None
    return size * max(cores if match and match.group(1) else nodes, 1)


def with_script_request(eff: JobEfficiency, script: Optional[str]) -> JobEfficiency:
    """``eff`` with the time limit and memory its kept script asked, where accounting's row lacks
    them: on Slurm 22.05 a job that ended before its pending row was written shows first without
    them (no TimelimitRaw, ReqMem ``16?``), the moment ``submit --wait`` and a quick ``report``
    read it; the job asked what its script says."""
    limit = eff.timelimit_s if eff.timelimit_s is not None else script_time_limit(script)
    memory = eff.req_mem_mib if eff.req_mem_mib is not None else script_memory(script, eff.cores, eff.nodes)
    return eff._replace(timelimit_s=limit, req_mem_mib=memory)


def with_job_files(effs: Sequence[JobEfficiency], read: Callable[[str, str], Optional[str]]) -> List[JobEfficiency]:
    """Each record of a job that ended, completed by its exit and started files (``read(job_id,
    ".exit")``, ``read(job_id, ".started")``: their text or None) as ``status`` completes it
    (monitor.reconcile): the exit code and the outputs of its last run from its exit file,
    TIMEOUT where the script stopped at its time limit (sacct says FAILED 124 when the trap
    saved the outputs first), and outputs NOT saved where the batch shell was killed."""
    from slurmkit.slurm.jobfiles import parse_exit_file, parse_started_file
    from slurmkit.slurm.monitor import JobStatus, with_exit_record

    completed = []
    for eff in effs:
        if eff.timelimit_s is None or eff.req_mem_mib is None:
            eff = with_script_request(eff, read(eff.job_id.split("_")[0], SCRIPT_SUFFIX))
        if not eff.done:
            completed.append(eff)
            continue
        exit_text, started_text = read(eff.job_id, ".exit"), read(eff.job_id, ".started")
        slurm = JobStatus(eff.job_id, eff.state, eff.exit_code, eff.signal, source="sacct", runs=len(eff.earlier_runs) + 1)
        status = with_exit_record(slurm, parse_exit_file(exit_text) if exit_text else None,
                                  parse_started_file(started_text) if started_text else None)
        completed.append(eff._replace(state=status.state, exit_code=status.exit_code, signal=status.signal,
                                      saved=status.saved, unsaved=status.unsaved))
    return completed


#: how long ``settled_report`` waits for accounting to record that a job ended.
SETTLE_S = 20.0


def settled_report(job_id: str, settle_s: float = SETTLE_S, clock=None, sleep=None,
                   report=None) -> Tuple[List[JobEfficiency], bool]:
    """The report of a job that has just ended, and whether accounting has its end.

    slurmdbd records a job's end a few seconds after the exit file says it ended, so a report
    taken at once can say RUNNING under "COMPLETED exit 0"; and on Slurm 22.05 a job that ends
    before its pending row is written shows first as a COMPLETED row without its request (no
    TimelimitRaw, ReqMem ``16?``), which would drop the time limit and the memory advice. Ask again on a Cadence for up to
    ``settle_s`` seconds; past that, the caller prints it marked preliminary. ``report`` asks
    sacct (default ``report_for``; ``--remote`` asks the cluster's over ssh).
    """
    import time

    from slurmkit.slurm.monitor import Cadence
    from slurmkit.slurm.slurmcli import SchedulerError

    clock, sleep = clock or time.monotonic, sleep or time.sleep
    deadline, cadence = clock() + settle_s, Cadence(4.0)
    while True:
        try:
            effs = (report or report_for)(job_id, retry_for=0.0)
        except SchedulerError as error:   # no record yet is lag too; anything else is final
            if not error.message.startswith("sacct has no record") or clock() >= deadline:
                raise
            effs = []
        if effs and all(eff.done and not eff.partial for eff in effs):
            return effs, True
        if effs and clock() >= deadline:
            return effs, False
        sleep(cadence.next())
