"""slurmkit: correct, efficient sbatch scripts for the Alliance clusters.

Importing this package is cheap on purpose: the CLI imports it on every call, so heavy
modules (submitit, rich, jinja2) are imported only by the stages that need them.
"""

from slurmkit.core.version import __version__ as __version__

#: True to type checkers only (as typing.TYPE_CHECKING is, without importing typing here).
TYPE_CHECKING = False
if TYPE_CHECKING:
    # What _LAZY gives at run time, so that type checkers and IDEs see the real classes and
    # functions; ``import X as X`` marks each one as exported.
    from slurmkit.api.functions import gather as gather
    from slurmkit.api.functions import map_array as map_array
    from slurmkit.api.functions import submit_function as submit_function
    from slurmkit.api.job import Job as Job
    from slurmkit.slurm.handles import Handle as Handle
    from slurmkit.slurm.handles import JobFailed as JobFailed
    from slurmkit.slurm.handles import WaitTimeout as WaitTimeout
    from slurmkit.slurm.handles import as_completed as as_completed
    from slurmkit.slurm.handles import tracked as tracked
    from slurmkit.slurm.monitor import JobStatus as JobStatus
    from slurmkit.slurm.submit import ChainHandle as ChainHandle
    from slurmkit.slurm.submit import JobHandle as JobHandle
    from slurmkit.slurm.submit import SweepHandle as SweepHandle

#: what ``slurmkit.NAME`` gives, and the module it is imported from on first use.
_LAZY = {
    "Job": "slurmkit.api.job",
    "submit_function": "slurmkit.api.functions", "map_array": "slurmkit.api.functions", "gather": "slurmkit.api.functions",
    "as_completed": "slurmkit.slurm.handles", "tracked": "slurmkit.slurm.handles", "Handle": "slurmkit.slurm.handles",
    "JobFailed": "slurmkit.slurm.handles", "WaitTimeout": "slurmkit.slurm.handles",
    "JobHandle": "slurmkit.slurm.submit", "SweepHandle": "slurmkit.slurm.submit", "ChainHandle": "slurmkit.slurm.submit",
    "JobStatus": "slurmkit.slurm.monitor",
}
__all__ = sorted(_LAZY)

if not TYPE_CHECKING:   # hidden from type checkers, so that a misspelt name is an error to them, not an Any
    def __getattr__(name: str) -> object:
        """``from slurmkit import Job`` without importing the pipeline for ``slurmkit --help``."""
        if name in _LAZY:
            from importlib import import_module

            return getattr(import_module(_LAZY[name]), name)
        raise AttributeError(f"module 'slurmkit' has no attribute {name!r}")
