"""slurmkit: correct, efficient sbatch scripts for the Alliance clusters.

Importing this package is cheap on purpose: the CLI imports it on every call, so heavy
modules (submitit, rich, jinja2) are imported only by the stages that need them.
"""

from slurmkit.core.version import __version__

#: what ``slurmkit.NAME`` gives, and the module it is imported from on first use.
_LAZY = {
    "Job": "slurmkit.api.job",
    "submit_function": "slurmkit.api.functions",
    "as_completed": "slurmkit.slurm.handles", "tracked": "slurmkit.slurm.handles", "Handle": "slurmkit.slurm.handles",
    "JobFailed": "slurmkit.slurm.handles", "WaitTimeout": "slurmkit.slurm.handles",
    "JobHandle": "slurmkit.slurm.submit", "SweepHandle": "slurmkit.slurm.submit", "ChainHandle": "slurmkit.slurm.submit",
    "JobStatus": "slurmkit.slurm.monitor",
}
__all__ = sorted(_LAZY)


def __getattr__(name):
    """``from slurmkit import Job`` without importing the pipeline for ``slurmkit --help``."""
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'slurmkit' has no attribute {name!r}")
