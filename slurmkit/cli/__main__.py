"""``python -m slurmkit.cli``: the console script, for tests and for a checkout without an install."""

if __name__ == "__main__":
    from slurmkit.cli.main import run

    run()
