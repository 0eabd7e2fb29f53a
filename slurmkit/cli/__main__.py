"""``python -m slurmkit.cli``: the console script, for tests and for a checkout without an install."""

from slurmkit.cli.main import run

run()
