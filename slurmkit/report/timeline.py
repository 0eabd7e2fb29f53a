"""One GPU over the job's time, from its samples in order: a short series for a sparkline and
``--json``, and the idle start, the stalls and the idle end, said in words.

A mean and a 95th percentile hide the shape of a run: a job idle for its first 10 minutes and
stalled every 5 minutes reads "mean 64 %, p95 99 %", like a steady one. Here each sample is
busy (utilisation at or above the idle threshold) or not, and the runs of idle samples are
named by where they fall:

- before the first busy sample: the idle start (loading data, building the model), named when
  it lasts at least NAMED_IDLE_S;
- between busy samples: a stall (the GPU waited on input, a checkpoint, a collective), its
  length from its first idle sample to the next busy one; named when there are two or more, or
  one of at least NAMED_IDLE_S;
- after the last busy sample: the idle end, named like the start.

Stalls are "about every N" where there are at least MIN_PERIODIC of them and every gap between
their starts is within SAME_WITHIN of the median gap; their length is "N each" where every
length is within SAME_WITHIN of the median, else the mean and the longest.

The file is streamed and memory does not grow with it: the series keeps at most
2 x SERIES_POINTS points (each time it would pass that, neighbours are merged pairwise), and
at most MAX_STALLS stalls are kept one by one (past that they are counted).
"""

from __future__ import annotations

from datetime import datetime
from typing import Dict, List, Optional, Sequence, Tuple

#: below this utilisation (percent) a sample is idle (gpuuse.IDLE_UTIL_PCT, which imports it).
IDLE_UTIL_PCT = 5.0
#: an idle start or end, or a lone stall, is named from this long (seconds): shorter is start-up.
NAMED_IDLE_S = 120.0
#: the series keeps between this many points and twice as many.
SERIES_POINTS = 240
#: stalls kept one by one; past these, counted.
MAX_STALLS = 10_000
#: this many stalls or more can be "about every N".
MIN_PERIODIC = 3
#: gaps (or lengths) within this fraction of their median are "the same".
SAME_WITHIN = 0.25
#: the sparkline's blocks, lowest to highest.
BLOCKS = "▁▂▃▄▅▆▇█"

#: (offset from the first sample in seconds, mean utilisation % or None, peak memory MiB or None)
Point = Tuple[float, Optional[float], Optional[float]]
#: (offset of its first idle sample in seconds, length in seconds)
Stall = Tuple[float, float]

_DAYS: Dict[str, float] = {}


def timestamp(text: str) -> Optional[float]:
    """nvidia-smi's ``2026/11/26 20:00:01.123`` -> seconds (local time, as an epoch would be in
    UTC: only differences are used); None when it is not one. The date is parsed once a day."""
    date, _, clock = text.strip().partition(" ")
    day = _DAYS.get(date)
    if day is None:
        try:
            day = datetime.strptime(date, "%Y/%m/%d").toordinal() * 86400.0
        except ValueError:
            return None
        if len(_DAYS) < 1000:
            _DAYS[date] = day
    parts = clock.split(":")
    try:
        hours, minutes, seconds = int(parts[0]), int(parts[1]), float(parts[2])
    except (ValueError, IndexError):
        return None
    return day + hours * 3600 + minutes * 60 + seconds


class Timeline:
    """The running shape of one GPU's samples (in the order written)."""

    def __init__(self) -> None:
        self.first: Optional[float] = None
        self.last: Optional[float] = None
        self.first_busy: Optional[float] = None
        self.idle_since: Optional[float] = None
        self.stalls: List[Stall] = []
        self.stall_count = 0
        self.points: List[List] = []        # [offset, util sum, util count, peak memory, samples]
        self.per_point = 1                  # samples a point holds once full

    def add(self, when: Optional[float], util: Optional[float], used: Optional[float]) -> None:
        if when is None or (self.last is not None and when < self.last):
            return                          # no time, or a clock that went back: kept out of the shape
        if self.first is None:
            self.first = when
        self.last = when
        self._point(when - self.first, util, used)
        if util is None:
            return
        if util < IDLE_UTIL_PCT:
            if self.idle_since is None:
                self.idle_since = when
            return
        if self.first_busy is None:
            self.first_busy = when
        elif self.idle_since is not None:
            self.stall_count += 1
            if len(self.stalls) < MAX_STALLS:
                self.stalls.append((self.idle_since - self.first, when - self.idle_since))
        self.idle_since = None

    def _point(self, offset: float, util: Optional[float], used: Optional[float]) -> None:
        point = self.points[-1] if self.points and self.points[-1][4] < self.per_point else None
        if point is None:
            point = [offset, 0.0, 0, None, 0]
            self.points.append(point)
        point[4] += 1
        if util is not None:
            point[1] += util
            point[2] += 1
        if used is not None:
            point[3] = used if point[3] is None else max(point[3], used)
        if len(self.points) > 2 * SERIES_POINTS:
            odd = self.points[-1:] if len(self.points) % 2 else []
            self.points = [_merged(a, b) for a, b in zip(self.points[::2], self.points[1::2])] + odd
            self.per_point *= 2

    @property
    def span_s(self) -> Optional[float]:
        return None if self.first is None or self.last is None else self.last - self.first

    @property
    def idle_start_s(self) -> Optional[float]:
        """Idle from the first sample to the first busy one (all of it where none was busy)."""
        if self.first is None:
            return None
        return (self.first_busy if self.first_busy is not None else self.last or self.first) - self.first

    @property
    def idle_end_s(self) -> Optional[float]:
        if self.first_busy is None or self.last is None:
            return None
        return self.last - self.idle_since if self.idle_since is not None else 0.0

    def series(self) -> Tuple[Point, ...]:
        return tuple((p[0], p[1] / p[2] if p[2] else None, p[3]) for p in self.points)


def _merged(a: List, b: List) -> List:
    peaks = [m for m in (a[3], b[3]) if m is not None]
    return [a[0], a[1] + b[1], a[2] + b[2], max(peaks) if peaks else None, a[4] + b[4]]


# ------------------------------------------------------------------------------------ words

def spoken(seconds: float) -> str:
    """``40 s``, ``10 min``, ``2 h 5 min``: a length as a person says it."""
    seconds = int(round(seconds))
    if seconds < 90:
        return f"{seconds} s"
    minutes = int(round(seconds / 60))
    if minutes < 90:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h" + (f" {minutes} min" if minutes else "")


def shape_words(idle_start_s: Optional[float], stalls: Sequence[Stall], stall_count: int,
                idle_end_s: Optional[float], busy: bool = True) -> List[str]:
    """``idle for the first 10 min``, ``stalled 6 times, about every 5 min, 40 s each``,
    ``idle for the last 3 min``: what is worth saying of a GPU's run, in that order."""
    if not busy:
        return []                            # never busy: the report already calls it IDLE
    said = []
    if idle_start_s is not None and idle_start_s >= NAMED_IDLE_S:
        said.append(f"idle for the first {spoken(idle_start_s)}")
    stall = stall_words(stalls, stall_count)
    if stall:
        said.append(stall)
    if idle_end_s is not None and idle_end_s >= NAMED_IDLE_S:
        said.append(f"idle for the last {spoken(idle_end_s)}")
    return said


def stall_words(stalls: Sequence[Stall], count: int) -> str:
    """The stalls in one phrase, or "" when there is nothing worth naming."""
    if not stalls or (count < 2 and stalls[0][1] < NAMED_IDLE_S):
        return ""
    if count == 1:
        return f"stalled once, for {spoken(stalls[0][1])}, {spoken(stalls[0][0])} in"
    words = f"stalled {count} times"
    gaps = [b[0] - a[0] for a, b in zip(stalls, stalls[1:])]
    if len(stalls) >= MIN_PERIODIC and _alike(gaps):
        words += f", about every {spoken(_median(gaps))}"
    lengths = [length for _, length in stalls]
    if _alike(lengths):
        return words + f", {spoken(_median(lengths))} each"
    return words + f", {spoken(sum(lengths) / len(lengths))} on average, the longest {spoken(max(lengths))}"


def _alike(values: Sequence[float]) -> bool:
    middle = _median(values)
    return bool(values) and all(abs(v - middle) <= SAME_WITHIN * middle for v in values)


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    half = len(ordered) // 2
    return ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2


# ------------------------------------------------------------------------------------ sparkline

def columns(series: Sequence[Point], span_s: float, width: int) -> Tuple[List[Optional[float]], List[Optional[float]]]:
    """The series over ``width`` equal slices of ``span_s``: each slice's mean utilisation and
    peak memory; a slice where no sample falls holds the one before it (the GPU stayed so
    until the next sample)."""
    utils: List[List[float]] = [[] for _ in range(width)]
    mems: List[Optional[float]] = [None] * width
    for offset, util, mem in series:
        column = min(width - 1, int(offset / span_s * width)) if span_s > 0 else 0
        if util is not None:
            utils[column].append(util)
        if mem is not None:
            mems[column] = mem if mems[column] is None else max(mems[column] or 0.0, mem)
    means: List[Optional[float]] = [sum(u) / len(u) if u else None for u in utils]
    return _carried(means), _carried(mems)


def _carried(values: List[Optional[float]]) -> List[Optional[float]]:
    out: List[Optional[float]] = []
    for value in values:
        out.append(value if value is not None or not out else out[-1])
    return out


def sparkline(values: Sequence[Optional[float]], top: float) -> str:
    """``▁▁▁█▇█▁█`` for values from 0 to ``top``; a blank where a value is missing."""
    if top <= 0:
        return "".join(" " if v is None else BLOCKS[0] for v in values)
    last = len(BLOCKS) - 1
    return "".join(" " if v is None else BLOCKS[max(0, min(last, int(v / top * last + 0.5)))] for v in values)
