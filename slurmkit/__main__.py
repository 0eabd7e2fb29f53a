"""``python -m slurmkit``: the ``slurmkit`` command, where the console script is not on PATH."""

if __name__ == "__main__":
    from slurmkit.cli.main import run

    run()
