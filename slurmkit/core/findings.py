"""Findings: what a check says of a spec, at one of two levels, about one spec field.

Errors are what the scheduler would reject, what could never run, and what a finding says the
job will fail of (``predicts_failure``: ``submit`` refuses it rather than fail in 0 s on the
node); warnings are what would run badly or may fail, for reasons slurmkit cannot see.
Every check (resolve, the site rules, the limits, port) speaks in these, so the CLI prints them
one way: ``error: resources.gpus: ...``.
"""

from __future__ import annotations

from slurmkit.core.records import Record

#: the words of a finding that say the job will fail, not may: such a finding is an error. A test
#: (tests/unit/test_failure_levels.py) fails on a warning of any check that says one of them.
CERTAIN_FAILURE = ("the job stops with", "this job stops with", "the job would stop at once", "the job stops at once",
                   "stops the job")
#: what turns a will into a may: the failure is avoided by what slurmkit cannot see from here.
HEDGES = ("unless ",)


def predicts_failure(message: str) -> bool:
    """Whether ``message`` says the job will fail (CERTAIN_FAILURE's words, no hedge)."""
    return any(words in message for words in CERTAIN_FAILURE) and not any(hedge in message for hedge in HEDGES)


def level_of(message: str) -> str:
    """``error`` for a finding that says the job will fail, else ``warning``."""
    return "error" if predicts_failure(message) else "warning"


class Finding(Record):
    level: str      # "error" | "warning"
    field: str      # the spec key path it is about, e.g. "resources.gpus"
    message: str

    def __str__(self) -> str:
        return f"{self.level}: {self.field}: {self.message}"


class Findings(list):
    """The findings a check collects, in the order it found them."""

    def error(self, field: str, message: str) -> None:
        self.append(Finding("error", field, message))

    def warn(self, field: str, message: str) -> None:
        self.append(Finding("warning", field, message))
