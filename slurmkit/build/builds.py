"""Builds ahead of time: a small job that fills the build cache for a job's builds.

A job with ``environment.builds`` builds its wheels itself the first time (resolve.py plans
it, the template's ``_sk_build`` does it under a lock). ``slurmkit build`` runs the same step
as its own short job beforehand, with the same modules, python, framework and GPU request as
the job that will use it, so that the cache key matches and that job starts in seconds.
"""

from typing import Optional, Sequence

from slurmkit.core.errors import SpecError
from slurmkit.core.kinds import DEFAULT_KIND, ONE, first_kind
from slurmkit.resolve.resolve import build_frameworks
from slurmkit.spec.spec import BUILDS, JobSpec, spec_from_mapping

FRAMEWORK_PACKAGES = {"pytorch": "torch", "tensorflow": "tensorflow"}
BUILD_JOB_TIME = "2h"      # a Horovod build with CUDA takes tens of minutes on a few cores
BUILD_JOB_CPUS = 4


def build_spec(names: Sequence[str], spec: Optional[JobSpec] = None, profile: Optional[str] = None, account: Optional[str] = None,
               gpus: Optional[str] = None, framework: Optional[str] = None, modules: Sequence[str] = (),
               build_cache: Optional[str] = None) -> JobSpec:
    """The build job for ``names`` (default: all of ``spec``'s builds), from a job spec or from options."""
    base = _from_job(spec) if spec is not None else {"name": "build", "resources": {}, "environment": {}}
    known = {b.name: b for b in spec.environment.builds} if spec is not None else {}
    wanted = list(names) or list(known)
    if not wanted:
        raise SpecError(spec.source if spec else "slurmkit build", None, "environment.builds", f"nothing to build: name one of {', '.join(BUILDS)}")
    environment = base["environment"]
    environment["builds"] = [known[n].requirement if n in known else n for n in wanted]
    if spec is not None and spec.environment.nccl and "horovod" in wanted:   # the NCCL Horovod compiles against
        nccl = spec.environment.nccl
        environment["builds"].append({"nccl": nccl.path, "version": nccl.version})
    if modules:
        environment["modules"] = list(dict.fromkeys([*environment.get("modules", []), *modules]))
    if build_cache:
        environment["build_cache"] = build_cache
    framework = framework or base.pop("framework", None)
    environment.setdefault("venv", {"packages": [FRAMEWORK_PACKAGES[framework or "pytorch"]]})
    resources = base["resources"]
    if gpus:
        resources["gpus"] = gpus
    resources.setdefault("cpus_per_task", _build_cpus(profile or base.get("profile"), bool(resources.get("gpus"))))
    resources.update(time=BUILD_JOB_TIME, nodes=1)
    data = dict(base, name="build-" + "-".join(wanted), kind=_build_kind(bool(resources.get("gpus"))),
                launch={"command": ["python", "-c", _CHECK], **({"framework": framework} if framework else {})})
    if profile:
        data["profile"] = profile
    if account:
        data["account"] = account
    return spec_from_mapping(data, source=spec.source if spec else "slurmkit build")


#: what the build job runs once the wheels are built and installed: their versions.
_CHECK = ("import importlib.metadata as m\n"
          "for name in ('horovod', 'mpi4py'):\n"
          "    try:\n"
          "        print(name, m.version(name), 'installed from the build cache')\n"
          "    except m.PackageNotFoundError:\n"
          "        pass")


def _build_kind(gpu: bool) -> str:
    """The build job's kind: one process, on a GPU node where the build needs one."""
    return first_kind(gpu_required=True, processes=ONE).name if gpu else DEFAULT_KIND


def _build_cpus(profile: Optional[str], gpu: bool) -> int:
    """A few cores to compile with, no more than the site's smallest fitting node has."""
    from slurmkit.sites.profiles import select_profile

    site = select_profile(profile, warn_retired=False)[0]
    whole = site.scheduling.whole_node
    if whole and whole.cores and not gpu:
        return whole.cores        # a whole-node site gives (and asks for) every core
    fitting = [t for t in site.node_types if t.cores and bool(t.gpus) == gpu] or [t for t in site.node_types if t.cores]
    return min([BUILD_JOB_CPUS, *(t.cores for t in fitting)])


def _from_job(spec: JobSpec) -> dict:
    """The parts of a job that decide the build's cache key: profile, account, modules, venv,
    GPUs (CUDA and NCCL modules come with them) and framework."""
    environment = {"modules": list(spec.environment.modules)}
    if spec.environment.venv is not None:
        v = spec.environment.venv
        environment["venv"] = {k: val for k, val in (("path", v.path), ("requirements", v.requirements), ("packages", list(v.packages))) if val}
    if spec.environment.build_cache:
        environment["build_cache"] = spec.environment.build_cache
    resources = {}
    if spec.resources.gpus:
        g = spec.resources.gpus
        resources["gpus"] = {"model": g.model, "count": 1} if g.model else 1
    if spec.resources.mem_mb:
        resources["mem"] = f"{spec.resources.mem_mb}M"
    # The framework the job's Horovod is for (its check imports horovod.torch or horovod.tensorflow):
    # the build job must decide the same, whatever kind it is.
    frameworks = build_frameworks(spec)
    data = {"resources": resources, "environment": environment, "framework": frameworks[0] if len(frameworks) == 1 else None}
    for key in ("profile", "account"):
        if getattr(spec, key):
            data[key] = getattr(spec, key)
    return data
