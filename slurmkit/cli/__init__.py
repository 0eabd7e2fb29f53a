"""The slurmkit command: thin click layers over the Python API.

``slurmkit = slurmkit.cli:run`` is the console script; the group lives in main."""

from slurmkit.cli.main import run

__all__ = ["run"]
