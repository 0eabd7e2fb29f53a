"""What the submit host knows when a script is rendered that the spec does not say, for the
site rules that need it (slurmkit/resolve/siterules.py): the bytes the staged inputs take on a node's
disk (the --tmp Rorqual needs for them), and the content of a requirements file (the key of an
environment built on the login node: slurmkit/resolve/loginenv.py). resolve() takes these as an input and still reads
nothing itself, so the same spec, profile and facts always give the same script; Job gathers
them (job.py), only for a site whose rules use them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Optional, Tuple

from slurmkit.core.records import Record

if TYPE_CHECKING:   # imported where a site's rules measure staged inputs (gather): render's start-up does not pay for it
    from slurmkit.resolve.localdisk import StagedSize


class LocalFacts(Record):
    staged: Tuple[StagedSize, ...] = ()     # each staged input on the node's disk (localdisk.py)
    requirements_digest: Optional[str] = None   # sha256 of the venv's requirements file, where envs are built on the login node
    building_env: bool = False              # the plan is for slurmkit env build on the login node, not for the job
    #: the submit shell's SBATCH_* and SLURM_* variables: sbatch reads some as options (the account
    #: it charges, options that replace the script's), so the plan's findings depend on them
    environment: Tuple[Tuple[str, str], ...] = ()


def submit_environment(environ: Mapping[str, str]) -> Tuple[Tuple[str, str], ...]:
    """The variables of ``environ`` that sbatch or the job's account read, sorted (the same shell gives the same facts)."""
    return tuple(sorted((name, value) for name, value in environ.items() if name.startswith(("SBATCH_", "SLURM_"))))


def gather(spec, profile, base_dir: Path) -> LocalFacts:
    """The facts ``profile``'s rules use, read from this host for ``spec`` (relative paths from ``base_dir``)."""
    staged: Tuple[StagedSize, ...] = ()
    if profile.rules.tmp_request and spec.stage:
        from slurmkit.resolve.localdisk import staged_sizes

        staged = staged_sizes(spec, base_dir)
    digest = None
    if profile.rules.env_build:
        from slurmkit.resolve.loginenv import requirements_digest

        digest = requirements_digest(spec, base_dir)
    return LocalFacts(staged=staged, requirements_digest=digest, environment=submit_environment(os.environ))
