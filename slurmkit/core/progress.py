"""A progress bar where a person waits at a terminal (``pack``, rsync), and nothing elsewhere.

Long steps take a ``Meter``: ``start(total)``, ``advance(n)``, ``reach(done)``. ``meter(what)``
gives a rich.progress bar on stderr when stderr is a terminal and ``-q`` was not given, else
``NO_METER``, which does nothing: a pipe, a log file or a batch job gets no bar and no escape
codes. rich is imported only when a bar is drawn, so that commands stay quick to start.
"""

import contextlib
import re
import sys
from typing import IO, Iterator, Optional


class Meter:
    """What a step reports as it goes; this one ignores it (a pipe, ``-q``)."""

    def start(self, total: int) -> None:
        """The amount of work, once known (bytes, files, percent)."""

    def advance(self, amount: int) -> None:
        """``amount`` more of it done."""

    def reach(self, done: int) -> None:
        """``done`` of it done in all."""


NO_METER = Meter()


class _Bar(Meter):
    def __init__(self, progress, task) -> None:
        self.progress, self.task = progress, task

    def start(self, total: int) -> None:
        self.progress.update(self.task, total=total)
        self.progress.start_task(self.task)

    def advance(self, amount: int) -> None:
        self.progress.advance(self.task, amount)

    def reach(self, done: int) -> None:
        self.progress.update(self.task, completed=done)


def shows_progress(stream: Optional[IO[str]] = None) -> bool:
    """A bar only for a person: ``stream`` (stderr) is a terminal and output is not quietened."""
    from slurmkit.core.verbosity import quiet

    stream = stream if stream is not None else sys.stderr
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not quiet()


@contextlib.contextmanager
def meter(what: str, unit: str = "bytes", stream: Optional[IO[str]] = None) -> Iterator[Meter]:
    """A Meter for ``what`` (``packing data``); ``unit`` ``bytes`` shows sizes and speed, else counts."""
    stream = stream if stream is not None else sys.stderr
    if not shows_progress(stream):
        yield NO_METER
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    # columns rich 12.0 (the floor) has: its TaskProgressColumn and MofNCompleteColumn came later
    amounts = (DownloadColumn(), TransferSpeedColumn()) if unit == "bytes" else \
        (TextColumn("{task.percentage:>3.0f}%"),) if unit == "percent" else (TextColumn("{task.completed}/{task.total}"),)
    with Progress(TextColumn("{task.description}"), BarColumn(), *amounts, TimeRemainingColumn(),
                  console=Console(file=stream), transient=True) as progress:
        yield _Bar(progress, progress.add_task(what, total=0, start=False))   # pulses until the total is known


#: rsync --info=progress2's line: ``  1,234,567  45%  1.23MB/s    0:00:01 (xfr#3, to-chk=5/10)``.
_RSYNC_PERCENT = re.compile(r"\s(\d{1,3})%\s")


def rsync_percent(line: str) -> Optional[int]:
    """The percent done of an rsync ``--info=progress2`` line, or None for any other line."""
    match = _RSYNC_PERCENT.search(f" {line} ")
    return int(match.group(1)) if match else None
