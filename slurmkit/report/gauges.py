"""The report's gauges: how much of each thing a job asked for it used, as bars on a terminal
(what seff and Princeton's jobstats users look at) and as the same fields in ``--json``.

A gauge is a fraction of the request: time (elapsed of the limit), CPU (CPU time of cores x
elapsed), memory (peak of the request) and GPU (average utilisation, only where sacct has
``gres/gpuutil``). For an array, each gauge is spread over the tasks (min, median, max) and
the tasks far from the rest are named: outliers by Tukey's fences (below Q1 - 1.5 IQR or above
Q3 + 1.5 IQR), which need at least four tasks to mean anything, and which must also be half as
much again as the median (or a third less): when most tasks agree to the second, the IQR is
nearly nought and Tukey alone would name a task that started a few seconds late.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from slurmkit.core.records import Record
from slurmkit.report.efficiency import JobEfficiency, clock_time, format_mem, format_request

#: a bar's width in characters.
BAR_WIDTH = 30
#: fewer tasks than this and no task is called an outlier.
OUTLIER_MIN_TASKS = 4
#: an outlier is at least this many times the median (high), or at most the median over it (low).
OUTLIER_MIN_RATIO = 1.5


class Gauge(Record):
    name: str                  # time | cpu | memory | gpu
    used: Optional[float]      # fraction of the request; None: not known
    text: str                  # the figures: "0:25:00 of 8:00:00"


def gauges(eff: JobEfficiency, live: bool = False) -> List[Gauge]:
    """The gauges of one job or task (GPU only when it has GPUs); ``live``: a running job's CPU
    and memory so far (efficiency.SoFar) where it has them, marked so (``--json``'s stay final)."""
    if live and eff.so_far is not None:
        return _live_gauges(eff, eff.so_far)
    found = [
        Gauge("time", eff.time_fraction,
              f"{clock_time(eff.elapsed_s)} of {clock_time(eff.timelimit_s)}" if eff.timelimit_s
              else f"{clock_time(eff.elapsed_s)}, no limit"),
        Gauge("cpu", eff.cpu_efficiency,
              f"{eff.cpu_s / eff.elapsed_s:.1f} of {eff.cores} cores busy" if eff.cpu_efficiency is not None else "not known"),
        Gauge("memory", eff.memory_efficiency,
              f"{format_mem(eff.peak_mib)} of {format_request(eff.req_mem_mib)}"
              if eff.peak_mib is not None and eff.req_mem_mib else "not recorded"),
    ]
    if eff.gpus:
        used = eff.gpu_utilisation
        found.append(Gauge("gpu", used, f"{used:.0%} average over {eff.gpus} GPU(s)" if used is not None
                           else f"{eff.gpus} GPU(s); utilisation not recorded by sacct"))
    return found


def _live_gauges(eff: JobEfficiency, now) -> List[Gauge]:
    from slurmkit.report.efficiency import so_far_json

    figures = so_far_json(eff) or {}
    cpu, memory = figures.get("cpu_efficiency"), figures.get("memory_efficiency")
    found = gauges(eff)
    found[1] = Gauge("cpu", cpu, f"{now.cpu_s / eff.elapsed_s:.1f} of {eff.cores} cores busy so far" if cpu is not None
                     else "not known yet")
    found[2] = Gauge("memory", memory, f"{format_mem(now.peak_mib)} of {format_request(eff.req_mem_mib)} so far"
                     if memory is not None and eff.req_mem_mib else "not known yet")
    return [g._replace(text=g.text + " so far") if g.name in ("time", "gpu") else g for g in found]


class Spread(Record):
    name: str
    low: float
    median: float
    high: float
    outliers: Tuple[Tuple[str, float, str], ...]   # (task id, value, "high" | "low")


def spreads(effs: Sequence[JobEfficiency]) -> List[Spread]:
    """Each gauge over the tasks of an array that ran (min, median, max, and the outliers)."""
    ran = [eff for eff in effs if eff.done and eff.steps]
    found = []
    for name in ("time", "cpu", "memory", "gpu"):
        values = [(eff.job_id, value) for eff in ran
                  for value in [next((g.used for g in gauges(eff) if g.name == name), None)] if value is not None]
        if values:
            ordered = sorted(v for _, v in values)
            found.append(Spread(name, ordered[0], _quantile(ordered, 0.5), ordered[-1], outliers(values)))
    return found


def outliers(values: Sequence[Tuple[str, float]]) -> Tuple[Tuple[str, float, str], ...]:
    """The tasks outside Tukey's fences and half as far again from the median, the farthest first."""
    if len(values) < OUTLIER_MIN_TASKS:
        return ()
    ordered = sorted(v for _, v in values)
    q1, q3, median = _quantile(ordered, 0.25), _quantile(ordered, 0.75), _quantile(ordered, 0.5)
    high = max(q3 + 1.5 * (q3 - q1), median * OUTLIER_MIN_RATIO)
    low = min(q1 - 1.5 * (q3 - q1), median / OUTLIER_MIN_RATIO)
    out = [(job, value, "high" if value > high else "low") for job, value in values if value > high or value < low]
    return tuple(sorted(out, key=lambda item: -abs(item[1] - median)))


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default)."""
    position = (len(ordered) - 1) * q
    below = int(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


# ------------------------------------------------------------------------------------ output

def as_json(effs: Sequence[JobEfficiency]) -> Dict[str, object]:
    """The gauges for ``--json``: a list per job, and the spread for an array."""
    out: Dict[str, object] = {"gauges": {eff.job_id: [g._asdict() for g in gauges(eff)] for eff in effs}}
    if len(effs) > 1:
        out["spread"] = [dict(s._asdict(), outliers=[{"job_id": j, "value": v, "side": side} for j, v, side in s.outliers])
                         for s in spreads(effs)]
    return out


LABELS = {"time": "Time", "cpu": "CPU", "memory": "Memory", "gpu": "GPU"}


def bar(used: Optional[float], width: int = BAR_WIDTH) -> str:
    """``█████░░░░░`` for the fraction used (full past 1); blank when not known."""
    if used is None:
        return " " * width
    filled = max(0, min(width, round(used * width)))
    return "█" * filled + "░" * (width - filled)


def colour(name: str, used: Optional[float]) -> str:
    """Green where the request fits the use, yellow where much is left idle, red at the limit."""
    if used is None:
        return "dim"
    if used >= 0.9 and name in ("time", "memory"):
        return "red"
    return "green" if used >= 0.5 else "yellow"


def rich_report(effs: Sequence[JobEfficiency], summary_lines: List[str], advice: List[str],
                gpu_rows: Sequence[Tuple[str, Optional[float], str]] = (), sparks: Sequence = ()):
    """A rich renderable: the report's first lines, the gauges (or the spread), one gauge per
    sampled GPU (``gpu_rows``: label, mean utilisation, figures; gpuuse.py), each GPU over time
    (``sparks``: gpuuse.SparkRow), the advice."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(show_header=len(effs) > 1, box=None, padding=(0, 1))
    table.add_column("")
    table.add_column("median" if len(effs) > 1 else "")
    table.add_column("", justify="right")
    table.add_column("")
    if len(effs) == 1:
        for g in gauges(effs[0], live=True):
            table.add_row(LABELS[g.name], Text(bar(g.used), style=colour(g.name, g.used)), _percent(g.used), g.text)
        for label, used, text in gpu_rows:
            table.add_row(f"  {label}", Text(bar(used), style=colour("gpu", used)), _percent(used), text)
    else:
        for s in spreads(effs):
            shown = ", ".join(f"{job} ({value:.0%})" for job, value, _ in s.outliers[:5])
            table.add_row(LABELS[s.name], Text(bar(s.median), style=colour(s.name, s.median)), _percent(s.median),
                          f"min {s.low:.0%}, max {s.high:.0%}" + (f"; outliers: {shown}" if shown else ""))
    said = [Text("Advice:", style="bold")] + [Text(f"  - {line}") for line in advice] if advice else \
        [Text("Advice: none, the request fits the use", style="green")]
    return Group(*(Text(line) for line in summary_lines), table, *spark_lines(sparks), *said)


def spark_lines(sparks: Sequence) -> list:
    """``GPU 0 on ng31  util ▁▁▁███▁██`` and ``mem ▂▂▂▅▅▅▅▅``, with its shape in words below, a GPU
    each (gpuuse.SparkRow), under a line saying the time they span."""
    from rich.table import Table
    from rich.text import Text

    if not sparks:
        return []
    width = max(len(row.label) for row in sparks)
    lines = [Text(f"GPU use over time (first sample to last, {clock_time(sparks[0].span_s)}; "
                  f"one column is {clock_time(sparks[0].span_s / max(len(sparks[0].util), 1))}):", style="bold")]
    table = Table(show_header=False, box=None, padding=(0, 1))
    for _ in range(3):
        table.add_column("", no_wrap=True)
    for row in sparks:
        table.add_row(row.label.ljust(width), "util", Text(row.util, style="green"))
        table.add_row("", "mem", Text(row.memory, style="cyan"))
        if row.words:
            table.add_row("", "", Text(row.words, style="yellow"))
    return [*lines, table]


def _percent(used: Optional[float]) -> str:
    return "" if used is None else f"{used:.0%}"
