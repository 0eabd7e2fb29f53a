"""A job written for another cluster than the one this host is on: refused before sbatch.

sbatch sends a job to the cluster of the host it runs on, whatever cluster the spec names
(``profile: nibi``): there it is refused, or waits for ever for partitions, GPUs and an account
that are not there. So ``check`` and ``submit`` compare the spec's profile with the cluster
here, told as profile detection tells it (``detect_profile``: ``$CC_CLUSTER``, which the
Alliance sets on every cluster, then ``$SLURM_CLUSTER_NAME``, then the hostname), with the
ClusterName of SLURM's configuration before the hostname. ``--profile`` and
``$SLURMKIT_PROFILE`` say which profile the user wants, not where they are: they are not asked.

Any cluster a profile claims is a verdict: an Alliance cluster, and as much the project's local
test cluster (``ClusterName=lab``, the ``local`` profile), where a ``profile: nibi`` spec would
pend for ever as surely as on fir. Where nothing tells the cluster (a laptop, a cluster no
profile describes) nothing is refused. A profile that names no cluster (``generic``, no detect
rules) fits every cluster, and two profiles are one cluster when one extends the other (a user's
``fir-gpu`` on fir).
"""

import os
import re
import shlex
from pathlib import Path
from typing import List, Mapping, Optional, Sequence, Union

from slurmkit.core.errors import NoProfileDetected, SlurmkitError
from slurmkit.core.findings import Finding
from slurmkit.sites.profiles import MAX_EXTENDS, Detection, ProfileCatalog, SiteProfile, detect_profile

#: where SLURM reads its configuration when $SLURM_CONF is unset.
DEFAULT_SLURM_CONF = "/etc/slurm/slurm.conf"
#: the most of slurm.conf read for its ClusterName (it comes near the top).
CONF_READ_BYTES = 1 << 20
_CLUSTER_NAME = re.compile(r"^[ \t]*ClusterName[ \t]*=[ \t]*([^\s#]+)", re.IGNORECASE | re.MULTILINE)

Dirs = Optional[Sequence[Union[str, Path]]]


def conf_cluster_name(env: Mapping[str, str]) -> Optional[str]:
    """The ClusterName of SLURM's configuration ($SLURM_CONF, else SLURM's own place), or None."""
    path = env.get("SLURM_CONF") or DEFAULT_SLURM_CONF
    if not os.path.isfile(path):   # a pipe would block the read; a folder or nothing has no name
        return None
    try:
        with open(path, "rb") as handle:
            text = handle.read(CONF_READ_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    match = _CLUSTER_NAME.search(text)
    return match.group(1) if match else None


def cluster_here(env: Optional[Mapping[str, str]] = None, hostname: Optional[str] = None, dirs: Dirs = None) -> Optional[Detection]:
    """The cluster this host is on, as a profile name and how it was told; None when nothing
    tells which (no variable, no ClusterName, no hostname that a profile claims)."""
    env = os.environ if env is None else env
    signals = {name: env[name] for name in ("CC_CLUSTER", "SLURM_CLUSTER_NAME") if env.get(name)}
    from_conf = None
    if "SLURM_CLUSTER_NAME" not in signals:
        from_conf = conf_cluster_name(env)
        if from_conf:
            signals["SLURM_CLUSTER_NAME"] = from_conf
    try:
        here = detect_profile(None, signals, hostname, dirs)
    except NoProfileDetected:
        return None
    if from_conf and here.reason == f"$SLURM_CLUSTER_NAME={from_conf}":
        here = here._replace(reason=f"ClusterName={from_conf} in {env.get('SLURM_CONF') or DEFAULT_SLURM_CONF}")
    return here


def lineage(catalog: ProfileCatalog, name: str) -> List[str]:
    """``name`` and every profile it extends, nearest first (``fir``, ``alliance``), followed as
    the catalog merges them (a user's ``fir.yaml`` that extends fir: the next ``fir`` down)."""
    names: List[str] = []
    try:
        found = catalog.find(name)
        for _ in range(MAX_EXTENDS + 1):
            names.append(found.name)
            extends = catalog.parsed(found.path).data.get("extends")
            if not isinstance(extends, str):
                break
            below = [pf for pf in catalog.files.get(extends, []) if extends != found.name or pf.layer > found.layer]
            if not below:
                break
            found = below[0]
    except SlurmkitError:   # a broken file: what was followed so far
        pass
    return names


def for_another_cluster(profile: SiteProfile, here: Detection, dirs: Dirs = None) -> bool:
    """Whether a job for ``profile`` cannot run on the cluster ``here``: the profile names a
    cluster (it has detect rules) and neither profile extends the other."""
    detect = profile.detect
    if not (detect.cc_cluster or detect.slurm_cluster_name or detect.hostnames):
        return False   # generic: any cluster
    catalog = ProfileCatalog(dirs)
    shared = set(lineage(catalog, profile.name)) & set(lineage(catalog, here.name))
    return not {name for name in shared if catalog.parsed(catalog.find(name).path).data.get("abstract") is not True}


def wrong_cluster_message(profile: SiteProfile, here: Detection, spec_file: Optional[str]) -> str:
    """The one line that refuses the job, with the ways on: port it, take this cluster's profile
    as it is, or (where the profile's cluster is in service and has login hosts) send it there."""
    spec = shlex.quote(spec_file or "JOB.yaml")
    ways = [f"move it with `slurmkit port {spec} --to {here.name} -o {here.name}.yaml`",
            f"submit it here as it is with `--profile {here.name}` if it asks only what {here.name} has"]
    if not profile.is_retired and profile.raw.get("login_hosts"):
        ways.append(f"send it to {profile.name} with `--remote {profile.name}`")
    return (f"this job is for {profile.name}, but this host is on {here.name} ({here.reason}): sbatch would send it to "
            f"{here.name}, which would refuse it or leave it pending for ever; " + ", ".join(ways[:-1]) + f", or {ways[-1]}")


def cluster_findings(profile: SiteProfile, spec_file: Optional[str], env: Optional[Mapping[str, str]] = None,
                     hostname: Optional[str] = None, dirs: Dirs = None) -> List[Finding]:
    """An error on ``profile`` when this host is on another cluster; none otherwise."""
    here = cluster_here(env, hostname, dirs)
    if here is None or not for_another_cluster(profile, here, dirs):
        return []
    return [Finding("error", "profile", wrong_cluster_message(profile, here, spec_file))]
