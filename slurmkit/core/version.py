"""The version of slurmkit, here so that the plan (which stamps it into every script) and the
CLI read it from the floor rather than from the package above them."""

__version__ = "0.1.0"
