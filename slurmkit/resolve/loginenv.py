"""Python environments built on the login node, where a site says jobs should only activate
them (the profile's ``rules.env_build``).

Trillium: "it is recommended to create virtual environments from a login node in HOME and
source it in your job script", and "Do not create your virtual environment under $SCRATCH as it
may get partially deleted" (https://docs.alliancecan.ca/wiki/Python/en); its compute nodes have
no internet, and $HOME is read-only inside jobs, so a job could not make one there anyway.

So, on such a site:

- the environment lives at ``<rules.env_build.path>/<key>``, the key a hash of what makes it
  (the profile, the modules the job loads, the virtualenv command, the packages, the
  requirements file's path and content, the builds): a job that changes none of them reuses the
  environment, one that changes any gets a new one, never a stale one. A spec's own
  ``venv.path`` is used as it is (one under ``$SLURM_TMPDIR`` stays the job's own, made in the job);
- ``slurmkit env build SPEC`` on the login node loads the job's modules and makes it there, with
  the job's own venv and build blocks (templates/envbuild.sh.j2), then writes the key into
  ``.slurmkit-env-key`` inside it, last: a build that stopped half way has no key;
- the job activates it and installs nothing; without the key it stops at once with one line
  naming the ``slurmkit env build`` command, and ``slurmkit check``/``submit`` say the same first.
"""

import hashlib
import json
import shlex
from pathlib import Path
from typing import Optional

from slurmkit.core.errors import InputError
from slurmkit.core.files import read_bytes_bounded

#: The file inside a built environment that holds its key: written last (the job reads it too:
#: templates/base.sbatch.j2's venv block names it).
KEY_FILE = ".slurmkit-env-key"
#: Present while a build runs (or after one that failed): such a folder is slurmkit's to replace.
PARTIAL_FILE = ".slurmkit-env-partial"
#: What made the environment, for a person who finds the folder.
ABOUT_FILE = "slurmkit-env.txt"
KEY_LENGTH = 16


def env_key(profile_name: str, modules, venv, requirements_digest: Optional[str], builds) -> str:
    """The key of an environment: the same inputs always give the same key, any change a new one."""
    inputs = {"profile": profile_name, "modules": list(modules), "create": list(venv.create),
              "pip_options": list(venv.pip_options), "packages": list(venv.packages),
              "requirements": venv.requirements, "requirements_sha256": requirements_digest,
              "builds": [b.requirement for b in builds]}
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:KEY_LENGTH]


def on_login_node(plan, spec, profile, modules, local):
    """``plan`` (resolve's VenvPlan) as the site's rule has it: unchanged where jobs make their
    own environment; else the environment built on the login node, which the job only
    activates, or (``local.building_env``) the plan ``slurmkit env build`` runs there."""
    rule = profile.rules.env_build
    asked = spec.environment.venv.path
    if rule is None or (asked and asked.startswith(("$SLURM_TMPDIR", "${SLURM_TMPDIR}"))):
        return plan
    key = env_key(profile.name, modules, plan, local.requirements_digest if local else None, spec.environment.builds)
    path = asked or f"{rule.path.rstrip('/')}/{key}"
    if local is not None and local.building_env:   # made here, once, the wheelhouse's pip first (the Python page's recipe)
        return plan._replace(path=path, reuse_existing=True, upgrade_pip="--no-index" in plan.pip_options, nodes=1)
    source = profile.rules.env_build.source[0] if profile.rules.env_build and profile.rules.env_build.source else ""
    return plan._replace(path=path, reuse_existing=True, prebuilt_key=key, build_command=build_command(spec, profile),
                         build_source=source)


def build_command(spec, profile) -> str:
    """The command that builds the job's environment, as check, submit and the job's
    missing-environment line show it: the spec as it was named (``myjob/job.yaml``, not
    ``job.yaml``), so that the command works from where the user ran check or submit."""
    source = spec.source or ""
    if not source.endswith((".yaml", ".yml")):
        return "Job(...).build_env()"
    other = f" --profile {profile.name}" if spec.profile != profile.name else ""
    return f"slurmkit env build {shlex.quote(source)}{other}"


#: the largest requirements file slurmkit reads (a few KiB in practice; pip's own files stay far below)
MAX_REQUIREMENTS_BYTES = 4 << 20


def requirements_digest(spec, base_dir: Path) -> Optional[str]:
    """The sha256 of the venv's requirements file as it is here; None when there is none or it cannot be read."""
    venv = spec.environment.venv
    if venv is None or not venv.requirements:
        return None
    from slurmkit.core.userpaths import on_submit_host  # ~ and $HOME as the job reads them

    path = on_submit_host(venv.requirements, base_dir)
    if path is None:
        return None
    try:
        return hashlib.sha256(read_bytes_bounded(path, MAX_REQUIREMENTS_BYTES)).hexdigest()
    except OSError:
        return None


def built_key(path) -> Optional[str]:
    """The key of the environment built at ``path``; None when none was built whole there."""
    try:
        return read_bytes_bounded(Path(path, KEY_FILE), 1 << 16).decode("utf-8", "replace").strip() or None
    except OSError:
        return None


def refuse_build_job(spec, profile) -> None:
    """``slurmkit build`` makes a build job; where environments are built on the login node,
    the builds run there, with the environment (a build job would only find no environment)."""
    if profile.rules.env_build is not None:
        raise InputError(spec.source, None, "environment.builds", f"{profile.name} builds Python environments on its login "
                         "nodes, and the builds with them: run 'slurmkit env build SPEC' there (the job's spec, with its "
                         "builds) instead of a build job")
