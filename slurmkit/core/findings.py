"""Findings: what a check says of a spec, at one of two levels, about one spec field.

Errors are what the scheduler would reject or what could never run; warnings are what would
run badly. Every check (resolve, the site rules, the limits, port) speaks in these, so the CLI
prints them one way: ``error: resources.gpus: ...``.
"""

from __future__ import annotations

from slurmkit.core.records import Record


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
