"""The names a spec gives that only the site can judge (its profile, its GPU model), checked
even when the spec has other errors.

Reading a spec checks its keys and values, but whether ``profile: fri`` names a profile, or
``gpus: h101:1`` a GPU of that profile, is known only once the profile is loaded, which a spec
with a misspelt key never reached: three typos took three runs. ``name_errors`` looks at those
two names in the raw file, each on its own, so that ``check`` and ``submit`` list them beside
the schema's errors, each with its line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Mapping, Optional

from slurmkit.core.errors import NoProfileDetected, ProfileNotFound, SlurmkitError, SpecError, SpecErrors, SpecProfileNotFound
from slurmkit.core.yamlfile import KeyPath, line_of, read_yaml_file
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


def name_errors(data: Any, lines: Mapping[KeyPath, int], source: Optional[str]) -> List[SpecError]:
    """The profile's name, then the GPU model, judged on the site; [] when either is absent."""
    if not isinstance(data, Mapping):
        return []
    name = data.get("profile")
    if isinstance(name, str) and name.strip():
        missing = profile_error(name, source, line_of(dict(lines), ("profile",)))
        if missing:
            return [missing]
    resources = data.get("resources")
    gpus = resources.get("gpus") if isinstance(resources, Mapping) else None
    if gpus is None:
        return []
    try:
        profile, _ = select_profile(name if isinstance(name, str) else None, warn_retired=False)
    except (ProfileNotFound, NoProfileDetected):
        return []
    return gpu_errors(gpus, profile, source, line_of(dict(lines), ("resources", "gpus")))


def with_name_errors(error: SpecError, path: Path) -> SpecError:
    """``error`` (one or several schema errors of the spec at ``path``) with the errors of its
    site names added, in file order; ``error`` itself when they add nothing."""
    try:
        _, (data, lines, _) = read_yaml_file(path, SpecError)
    except SpecError:   # not YAML: the error already says so
        return error
    known = list(getattr(error, "errors", (error,)))
    said = {found.keypath for found in known}
    added = [found for found in name_errors(data, lines, str(path)) if found.keypath not in said]
    if not added:
        return error
    return SpecErrors(sorted(known + added, key=lambda found: found.line or 0))
