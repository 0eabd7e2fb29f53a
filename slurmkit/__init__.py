"""slurmkit: correct, efficient sbatch scripts for the Alliance clusters.

Importing this package is cheap on purpose: the CLI imports it on every call, so heavy
modules (submitit, rich, jinja2) are imported only by the stages that need them.
"""

__version__ = "0.1.0"


#: what ``slurmkit.NAME`` gives, and the module it is imported from on first use.
_LAZY = {
    "Job": "job",
    "submit_function": "functions",
    "as_completed": "handles", "tracked": "handles", "Handle": "handles", "JobFailed": "handles", "WaitTimeout": "handles",
    "JobHandle": "submit", "SweepHandle": "submit", "ChainHandle": "submit",
    "JobStatus": "monitor",
}
__all__ = sorted(_LAZY)


def __getattr__(name):
    """``from slurmkit import Job`` without importing the pipeline for ``slurmkit --help``."""
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'slurmkit' has no attribute {name!r}")
