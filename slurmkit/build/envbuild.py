"""``slurmkit env build``: make, on the login node, the Python environment that a site's jobs
only activate (the profile's ``rules.env_build``; slurmkit/resolve/loginenv.py decides where it
lives and under which key).
"""

import os
from pathlib import Path
from typing import Optional, Tuple

from slurmkit.core.errors import ClusterError, InputError, SpecError
from slurmkit.resolve.loginenv import ABOUT_FILE, KEY_FILE, PARTIAL_FILE, built_key


def expanded(word: str, env=None) -> Optional[Path]:
    """A plan's path word ($HOME/...) as a path here; None when it reads a variable that is not set."""
    from slurmkit.resolve.siterules import expand_variables

    text = expand_variables(word, os.environ if env is None else env)
    return Path(text) if text else None


# ----------------------------------------------------------------------------- the build

def build(job, profile: Optional[str] = None, force: bool = False) -> Tuple[Path, bool]:
    """Build ``job``'s environment here (the login node); returns its path and whether it was
    built now (False: it was already built, with the same key). The build's own output (pip's)
    goes to this process's stdout and stderr."""
    from slurmkit.resolve.localfacts import gather
    from slurmkit.resolve.resolve import resolve

    site, spec, base_dir = job.profile(profile), job.spec, job.base_dir()
    _check_can_build(spec, site)
    facts = gather(spec, site, base_dir)
    job_venv = _plan(spec, site, facts, resolve).venv
    if job_venv is None or not job_venv.prebuilt_key:
        raise SpecError(spec.source, spec.line_of("environment.venv.path"), "environment.venv.path",
                        "the virtualenv is in $SLURM_TMPDIR: the job makes it itself, on its node; nothing to build here")
    if spec.environment.venv.requirements and facts.requirements_digest is None:
        raise SpecError(spec.source, spec.line_of("environment.venv.requirements"), "environment.venv.requirements",
                        f"{spec.environment.venv.requirements} cannot be read here (from {base_dir}): the environment is built from it")
    path = expanded(job_venv.path)
    if path is None:
        raise InputError(spec.source, None, "environment.venv.path", f"{job_venv.path} reads a variable that is not set here")
    path = path if path.is_absolute() else base_dir / path   # relative: from the spec's folder, where the job starts
    building = _plan(spec, site, facts._replace(building_env=True), resolve)
    from slurmkit.build.sources import fetch_sources

    fetch_sources(building.builds, {**os.environ, "SLURM_SUBMIT_DIR": str(base_dir)})   # the builds' sources, from the index
    return path, _build_at(path, job_venv.prebuilt_key, building, base_dir, force)


def _check_can_build(spec, site) -> None:
    if site.rules.env_build is None:
        raise InputError(spec.source, None, "profile", f"{site.name} jobs make their own virtualenv (its profile has no "
                         "rules.env_build): there is nothing to build on the login node; submit the job as it is")
    if os.environ.get("SLURM_JOB_ID"):
        raise InputError(spec.source, None, "", "slurmkit env build runs on the login node, not inside a job "
                         f"(SLURM_JOB_ID={os.environ['SLURM_JOB_ID']} is set): {site.name} jobs only activate the environment")
    if spec.environment.venv is None:
        raise SpecError(spec.source, spec.line_of("environment"), "environment.venv",
                        "the job has no virtualenv to build: add environment.venv (e.g. venv: {requirements: requirements.txt})")


def _plan(spec, site, facts, resolve):
    resolution = resolve(spec, site, facts)
    if resolution.plan is None:
        first = resolution.errors[0]
        raise SpecError(spec.source, spec.line_of(first.field), first.field, first.message)
    return resolution.plan


def _build_at(path: Path, key: str, plan, base_dir: Path, force: bool) -> bool:
    """Build under a lock (two builds of one environment at once would mix); a folder that
    slurmkit did not make is never removed."""
    import fcntl
    import shutil

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if built_key(path) == key and not force:
            return False
        if path.exists():
            if not (path / KEY_FILE).exists() and not (path / PARTIAL_FILE).exists():
                raise InputError(None, None, "environment.venv.path", f"{path} exists and was not built by slurmkit env build: "
                                 "remove it, or set environment.venv.path to another folder")
            shutil.rmtree(path)
        path.mkdir()
        (path / PARTIAL_FILE).write_text(key + "\n", encoding="utf-8")
        _run(plan, path, base_dir)
        from slurmkit.core.files import write_atomic

        write_atomic(path / ABOUT_FILE, _about(plan, key))
        write_atomic(path / KEY_FILE, key + "\n")
        (path / PARTIAL_FILE).unlink()
    return True


def _run(plan, path: Path, base_dir: Path) -> None:
    import subprocess

    from slurmkit.render.render import render_env_build

    script = render_env_build(plan)
    result = subprocess.run(["bash", "-c", script, "slurmkit-env-build"], cwd=str(base_dir))
    if result.returncode != 0:
        raise ClusterError(f"the build of {path} failed (exit {result.returncode}; its output is above): the folder is kept "
                           "to look at, and the next slurmkit env build starts it again")


def _about(plan, key: str) -> str:
    venv = plan.venv
    lines = [f"built by slurmkit env build for profile {plan.profile}", f"key: {key}", f"modules: {' '.join(plan.modules)}",
             f"requirements: {venv.requirements or ''}", f"packages: {' '.join(venv.packages)}",
             f"builds: {' '.join(b.name for b in plan.builds)}"]
    return "\n".join(lines) + "\n"
