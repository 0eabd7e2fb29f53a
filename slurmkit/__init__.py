"""slurmkit: correct, efficient sbatch scripts for the Alliance clusters.

Importing this package is cheap on purpose: the CLI imports it on every call, so heavy
modules (submitit, rich, jinja2) are imported only by the stages that need them.
"""

__version__ = "0.1.0"


def __getattr__(name):
    """``from slurmkit import Job`` without importing the pipeline for ``slurmkit --help``."""
    if name == "Job":
        from .job import Job

        return Job
    raise AttributeError(f"module 'slurmkit' has no attribute {name!r}")
