"""Builds ahead of time: a small job that fills the build cache for a job's builds.

A job with ``environment.builds`` builds its wheels itself the first time (resolve.py plans
it, the runtime's ``slurmkit_build`` does it under a lock). ``slurmkit build`` runs the same step
as its own short job beforehand, with the same modules, python, framework and GPU request as
the job that will use it, so that the cache key matches and that job starts in seconds.
"""

from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from slurmkit.core.errors import SpecError
from slurmkit.core.kinds import DEFAULT_KIND, ONE, first_kind
from slurmkit.resolve.resolve import build_frameworks
from slurmkit.spec.spec import BUILDS, Build, JobSpec, spec_from_mapping

FRAMEWORK_PACKAGES = {"pytorch": "torch", "tensorflow": "tensorflow"}
BUILD_JOB_TIME = "2h"      # a Horovod build with CUDA takes tens of minutes on a few cores
BUILD_JOB_CPUS = 4

#: a job.yaml mapping (or one of its sections) as spec_from_mapping reads it
SpecData = Dict[str, Any]
#: one item of environment.builds: a requirement (``horovod==0.28.1``) or an NCCL tarball
BuildEntry = Union[str, Dict[str, str]]


def build_spec(names: Sequence[str], spec: Optional[JobSpec] = None, profile: Optional[str] = None, account: Optional[str] = None,
               gpus: Optional[str] = None, framework: Optional[str] = None, modules: Sequence[str] = (),
               build_cache: Optional[str] = None) -> JobSpec:
    """The build job for ``names`` (default: all of ``spec``'s builds), from a job spec or from options."""
    base: SpecData = _from_job(spec) if spec is not None else {"name": "build", "resources": {}, "environment": {}}
    source = spec.source if spec is not None else "slurmkit build"
    known = {b.name: b for b in spec.environment.builds} if spec is not None else {}
    wanted = list(names) or list(known)
    if not wanted:
        raise SpecError(source, None, "environment.builds", f"nothing to build: name one of {', '.join(BUILDS)}")
    job_framework = base.pop("framework", None)   # decided for launch, never a key of the build job's spec
    framework = framework or job_framework
    _set_environment(base["environment"], _build_entries(wanted, known, spec), modules, build_cache, framework)
    gpu = _set_resources(base["resources"], gpus, profile or base.get("profile"))
    data = dict(base, name="build-" + "-".join(wanted), kind=_build_kind(gpu),
                launch={"command": ["python", "-c", _CHECK], **({"framework": framework} if framework else {})})
    if profile:
        data["profile"] = profile
    if account:
        data["account"] = account
    return spec_from_mapping(data, source=source)


def _build_entries(wanted: List[str], known: Mapping[str, Build], spec: Optional[JobSpec]) -> List[BuildEntry]:
    """environment.builds of the build job: each build as the job pins it, and the NCCL tarball
    where Horovod is built (it compiles against that NCCL)."""
    builds: List[BuildEntry] = [known[name].requirement if name in known else name for name in wanted]
    nccl = spec.environment.nccl if spec is not None else None
    if nccl and "horovod" in wanted:
        builds.append({"nccl": nccl.path, "version": nccl.version})
    return builds


def _set_environment(environment: SpecData, builds: List[BuildEntry], modules: Sequence[str],
                     build_cache: Optional[str], framework: Optional[str]) -> None:
    """The build job's environment: the job's, with the builds, the extra modules and cache,
    and a virtualenv with the framework where the job has none."""
    environment["builds"] = builds
    if modules:
        environment["modules"] = list(dict.fromkeys([*environment.get("modules", []), *modules]))
    if build_cache:
        environment["build_cache"] = build_cache
    environment.setdefault("venv", {"packages": [FRAMEWORK_PACKAGES[framework or "pytorch"]]})


def _set_resources(resources: SpecData, gpus: Optional[str], profile: Optional[str]) -> bool:
    """The build job's resources: the job's GPUs (or ``gpus``), a few cores, one node for
    BUILD_JOB_TIME. Whether it asks for GPUs."""
    if gpus:
        resources["gpus"] = gpus
    gpu = bool(resources.get("gpus"))
    resources.setdefault("cpus_per_task", _build_cpus(profile, gpu))
    resources.update(time=BUILD_JOB_TIME, nodes=1)
    return gpu


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
    fitting = [t.cores for t in site.node_types if t.cores and bool(t.gpus) == gpu] or [t.cores for t in site.node_types if t.cores]
    return min([BUILD_JOB_CPUS, *fitting])


def _from_job(spec: JobSpec) -> SpecData:
    """The parts of a job that decide the build's cache key: profile, account, modules, venv,
    GPUs (CUDA and NCCL modules come with them) and framework."""
    environment: SpecData = {"modules": list(spec.environment.modules)}
    if spec.environment.venv is not None:
        v = spec.environment.venv
        venv = (("path", v.path), ("requirements", v.requirements), ("packages", list(v.packages)))
        environment["venv"] = {key: value for key, value in venv if value}
    if spec.environment.build_cache:
        environment["build_cache"] = spec.environment.build_cache
    resources: SpecData = {}
    if spec.resources.gpus:
        g = spec.resources.gpus
        resources["gpus"] = {"model": g.model, "count": 1} if g.model else 1
    if spec.resources.mem_mb:
        resources["mem"] = f"{spec.resources.mem_mb}M"
    # The framework the job's Horovod is for (its check imports horovod.torch or horovod.tensorflow):
    # the build job must decide the same, whatever kind it is.
    frameworks = build_frameworks(spec)
    data: SpecData = {"resources": resources, "environment": environment, "framework": frameworks[0] if len(frameworks) == 1 else None}
    for key in ("profile", "account"):
        if getattr(spec, key):
            data[key] = getattr(spec, key)
    return data
