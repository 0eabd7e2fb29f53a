"""The names a spec gives that only the site can judge (its profile, its GPU model), checked
even when the spec has other errors.

Reading a spec checks its keys and values, but whether ``profile: fri`` names a profile, or
``gpus: h101:1`` a GPU of that profile, whether the spec is for the cluster this host is on,
and whether its account is the user's, is known only once the profile is loaded, which a spec
with a misspelt key never reached: three typos took three runs. ``name_errors`` looks at those
in the raw file, each on its own, so that ``check`` and ``submit`` list them beside the
schema's errors, each with its line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, List, Mapping, Optional, Sequence

from slurmkit.core.errors import NoProfileDetected, ProfileNotFound, SlurmkitError, SpecError, SpecErrors, SpecProfileNotFound
from slurmkit.core.findings import Finding
from slurmkit.core.yamlfile import KeyPath, line_of, read_yaml_file
from slurmkit.sites.elsewhere import cluster_findings
from slurmkit.sites.profiles import SiteProfile, select_profile
from slurmkit.spec.spec import spec_from_mapping


def profile_error(name: str, source: Optional[str], line: Optional[int]) -> Optional[SpecError]:
    """``profile: NAME`` that names no profile, as an error on the spec's line; else None."""
    try:
        select_profile(name, warn_retired=False)
    except ProfileNotFound as error:
        return SpecProfileNotFound(source, line, "profile", error.message)
    return None


def gpu_errors(gpus: Any, profile: SiteProfile, source: Optional[str], line: Optional[int]) -> List[SpecError]:
    """The resolver's errors on ``resources.gpus`` alone (no GPU of that name, a retired one)."""
    from slurmkit.resolve.resolve import resolve

    probe = {"name": "probe", "resources": {"time": "1h", "gpus": gpus}, "launch": {"command": ["true"]}}   # the least spec
    try:
        resolution = resolve(spec_from_mapping(probe, source), profile)
    except SlurmkitError:   # the value itself is malformed: the schema's error says so
        return []
    return [SpecError(source, line, "resources.gpus", f.message) for f in resolution.findings
            if f.level == "error" and f.field == "resources.gpus"]


SiteCheck = Callable[[SiteProfile, Mapping[str, Any]], List[Finding]]


def name_errors(data: Any, lines: Mapping[KeyPath, int], source: Optional[str], more: Sequence[SiteCheck] = ()) -> List[SpecError]:
    """The profile's name, then what needs the profile (the cluster here, the GPU model, and
    ``more``: checks of the raw spec on the site, such as the account), judged on the site."""
    if not isinstance(data, Mapping):
        return []
    name = data.get("profile")
    where = lambda *path: line_of(dict(lines), path)  # noqa: E731 - a line lookup, nothing more
    if isinstance(name, str) and name.strip():
        missing = profile_error(name, source, where("profile"))
        if missing:
            return [missing]
    try:
        profile, _ = select_profile(name if isinstance(name, str) else None, warn_retired=False)
    except (ProfileNotFound, NoProfileDetected):
        return []
    elsewhere = [SpecError(source, where("profile"), "profile", f.message) for f in cluster_findings(profile, source)]
    found = list(elsewhere)
    resources = data.get("resources")
    gpus = resources.get("gpus") if isinstance(resources, Mapping) else None
    if gpus is not None:
        found += gpu_errors(gpus, profile, source, where("resources", "gpus"))
    for check in more if not elsewhere else ():   # another cluster's job: its accounts are not asked here
        found += [SpecError(source, where(*f.field.split(".")), f.field, f.message) for f in check(profile, data) if f.level == "error"]
    return found


def with_name_errors(error: SpecError, path: Path, more: Sequence[SiteCheck] = ()) -> SpecError:
    """``error`` (one or several schema errors of the spec at ``path``) with the errors of its
    site names added, in file order; ``error`` itself when they add nothing."""
    try:
        _, (data, lines, _) = read_yaml_file(path, SpecError)
    except SpecError:   # not YAML: the error already says so
        return error
    known = list(getattr(error, "errors", (error,)))
    said = {found.keypath for found in known}
    added = [found for found in name_errors(data, lines, str(path), more) if found.keypath not in said]
    if not added:
        return error
    return SpecErrors(sorted(known + added, key=lambda found: found.line or 0))
