"""The Python face of slurmkit: ``Job`` ties a spec to a profile, resolves and renders it.

    from slurmkit import Job
    job = Job(name="train", profile="nibi", account="def-me",
              resources={"time": "3h", "gpus": "h100:1", "cpus_per_task": 8, "mem": "32G"},
              launch="python train.py")
    print(job.render())

``Job(...)`` takes the same keys as ``job.yaml`` and checks them the same way.
"""

from pathlib import Path
from typing import Any, Callable, Optional, Tuple

from .errors import SpecError
from .profiles import SiteProfile, select_profile
from .render import render
from .resolve import Finding, Resolution, resolve
from .spec import JobSpec, load_spec, spec_from_mapping


class Job:
    def __init__(self, spec: Optional[JobSpec] = None, **fields: Any):
        if spec is not None and fields:
            raise TypeError("give a JobSpec or keyword fields, not both")
        self.spec = spec if spec is not None else spec_from_mapping(fields, source="Job(...)")

    @classmethod
    def from_yaml(cls, path) -> "Job":
        return cls(load_spec(Path(path)))

    def profile(self, profile: Optional[str] = None) -> SiteProfile:
        """The site profile: ``profile`` if given, else the spec's, else the detected one."""
        return select_profile(profile or self.spec.profile, warn_retired=False)[0]

    def resolve(self, profile: Optional[str] = None) -> Resolution:
        return resolve(self.spec, self.profile(profile))

    def check(self, profile: Optional[str] = None) -> Tuple[Finding, ...]:
        """Every error and warning for this job on its cluster."""
        return self.resolve(profile).findings

    def render(self, profile: Optional[str] = None, warn: Optional[Callable[[Finding], None]] = None) -> str:
        """The sbatch script; raises SpecError naming the first problem if there are errors.

        ``warn`` is called with each warning (a retired cluster's among them), which are
        otherwise dropped: see check() for all findings.
        """
        resolution = self.resolve(profile)
        for finding in resolution.warnings if warn else ():
            warn(finding)
        if resolution.plan is None:
            first = resolution.errors[0]
            raise SpecError(self.spec.source, self.spec.line_of(first.field), first.field, first.message)
        return render(resolution.plan)
