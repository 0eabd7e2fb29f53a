"""Which modules a cluster's software stack has: ``slurmkit port`` checks each module a spec
loads against the target's catalogue (``software.catalogue`` of its profile).

Old scripts pin the versions of their day (``gcc/9.3.0``, ``cuda/11.4``, ``python/3.8``,
``intel/2019u4``, ``scipy-stack/2019a``); under StdEnv/2023 those modules do not exist, and the
ported job would die at ``module load``. A module of a family the catalogue lists is kept when
its version is there, and otherwise rewritten to the nearest version that is, with the reason;
one newer than every listed version is kept with a warning (the catalogue lists documented
versions only, so a newer install may exist). A pinned version of a family listed without
versions is kept with a warning too: the catalogue cannot say it loads under the new StdEnv.
A module of a family the catalogue does not list is kept with a warning (the catalogue holds only
the families a source documents for the stack), naming the closest family name where one is
close: a typo then reads as one.

Where the profile lists every version of a family the cluster has installed, of any StdEnv
(``software.installed``, from the site's module list), a pin is settled from it: a version not
installed there does not exist, and is rewritten (to the nearest StdEnv version the catalogue
documents, else to the nearest installed one, with a to-do to try it under the StdEnv); an
installed version the catalogue does not document for the StdEnv is kept with a to-do that names
the command that tells.

Lmod matches a version by prefix: ``python/3.11`` loads the site's 3.11.x, so it is available
when any listed version starts with ``3.11.``.
"""

from __future__ import annotations

import re
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from slurmkit.core.errors import closest
from slurmkit.core.records import Record
from slurmkit.sites.profiles import SiteProfile


class ModuleCheck(Record):
    """What the port does with one module: ``module`` as written, ``new`` what the ported spec
    loads (the same when kept), ``why`` the reason of a rewrite, ``warning`` what the user must check;
    ``absent``: the site's module list shows that the version is not installed there at all."""

    module: str
    new: str
    why: Optional[str] = None
    warning: Optional[str] = None
    absent: bool = False


def families(catalogue: Sequence[str]) -> Dict[str, List[str]]:
    """``{family: [versions]}`` of a catalogue written as ``family/version`` names, in its order."""
    table: Dict[str, List[str]] = {}
    for name in catalogue:
        family, _, version = name.partition("/")
        table.setdefault(family, [])
        if version:
            table[family].append(version)
    return table


def _version_key(version: str) -> Tuple:
    """Orders versions as numbers (``3.10`` after ``3.9``; ``2019u4`` as 2019, 4; ``2023b`` after ``2023a``).
    Each part is tagged, numbers before words, so that any two versions compare: a version
    written with words where another has a number (``cudnn/cuda12-8.8.0``) sorts after it."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.findall(r"\d+|[a-z]+", version.lower()))


def is_available(version: str, versions: Sequence[str]) -> bool:
    """Lmod's match: the version itself, or a prefix of one ending at a dot."""
    return any(v == version or v.startswith(version + ".") for v in versions)


def nearest_version(version: str, versions: Sequence[str]) -> str:
    """The oldest listed version not older than ``version`` (what replaced it), else the newest."""
    ordered = sorted(versions, key=_version_key)
    wanted = _version_key(version)
    newer = [v for v in ordered if _version_key(v) >= wanted]
    return newer[0] if newer else ordered[-1]


def check_module(module: str, catalogue: Sequence[str], target: str, oldest_python: Optional[str] = None,
                 stdenv: Optional[str] = None, installed: Optional[Mapping[str, Sequence[str]]] = None) -> ModuleCheck:
    """Keep, rewrite or warn about ``module`` on ``target`` (whose catalogue is ``catalogue``); a
    python is rewritten to one not older than ``oldest_python``, the oldest the site still serves.
    ``installed`` (family: every version there, any StdEnv) settles what the catalogue cannot."""
    table = families(catalogue)
    family, _, version = module.partition("/")
    there = (installed or {}).get(family)
    if there and version:
        return settled_pin(module, table.get(family, []), there, target, stdenv or f"{target}'s standard environment")
    if family not in table:
        return _unknown_family(module, table, target)
    versions = table[family]
    if version and not versions:
        return _unlisted_version(module, stdenv or f"{target}'s standard environment")
    if not version or is_available(version, versions):
        return ModuleCheck(module, module)
    if _version_key(version) > max(map(_version_key, versions)):
        return ModuleCheck(module, module, warning=f"{module} is newer than the {family} versions of {target}'s module catalogue "
                           f"({', '.join(versions)}), which lists only documented ones: check that it exists there "
                           f"('module spider {module}'), or use {family}/{nearest_version(version, versions)}")
    served = [v for v in versions if family != "python" or not oldest_python or _version_key(v) >= _version_key(oldest_python)]
    new = f"{family}/{nearest_version(version, served or versions)}"
    which = f" of those it builds wheels for (python/{oldest_python} and newer)" if served and served != versions else ""
    return ModuleCheck(module, new, why=f"{module} is not in {target}'s stack, which has {family} "
                       f"{', '.join(versions)}; {new} is the nearest{which}")


def _unknown_family(module: str, table: Dict[str, List[str]], target: str) -> ModuleCheck:
    """A family the catalogue does not list: kept, with the closest family name where one is close."""
    family = module.partition("/")[0]
    like = closest(family, table)
    hint = f" (did you mean {like!r}: {', '.join(f'{like}/{v}' for v in table[like]) or like}?)" if like else ""
    return ModuleCheck(module, module, warning=f"{module}: {family!r} is not in {target}'s module catalogue{hint}; "
                       f"check that it exists there ('module spider {family}') before submitting")


def settled_pin(module: str, documented: Sequence[str], there: Sequence[str], target: str, stdenv: str) -> ModuleCheck:
    """A pinned version of a family whose installed versions the profile lists (``there``, any
    StdEnv) and whose ``stdenv`` versions the catalogue documents (``documented``, maybe none).
    Not installed: it does not exist on ``target``, so it is rewritten, to the nearest documented
    version, else to the nearest installed one (which may be of an older StdEnv: a to-do says how
    to try it). Installed and documented: kept. Installed, not documented: rewritten to the
    nearest documented version where it is older than one (the StdEnv's own build replaced it,
    as for gcc or python), else kept with the one command that tells whether it loads."""
    family, _, version = module.partition("/")
    documented = [v for v in documented if is_available(v, there)]   # a page's version this cluster's build lacks (AVX2) cannot load
    listing = f"{target}'s {family} versions (any StdEnv) are {', '.join(there)}"
    if is_available(version, documented):
        return ModuleCheck(module, module)
    if not is_available(version, there):
        if documented:
            new = f"{family}/{nearest_version(version, documented)}"
            return ModuleCheck(module, new, why=f"{module} is not installed on {target}: {listing}; {new} is the nearest "
                               f"documented for {stdenv}", absent=True)
        new = f"{family}/{installed_replacement(version, there)}"
        return ModuleCheck(module, new, why=f"{module} is not installed on {target}: {listing}; {new} is the nearest "
                           f"({_replacement_rule(version, there)})", warning=try_under(new, target, stdenv), absent=True)
    if documented and _version_key(version) < max(map(_version_key, documented)):
        new = f"{family}/{nearest_version(version, documented)}"
        return ModuleCheck(module, new, why=f"{module} is installed on {target} but not documented for {stdenv}, "
                           f"which has {family} {', '.join(documented)}; {new} is the nearest")
    return ModuleCheck(module, module, warning=try_under(module, target, stdenv))


def installed_replacement(version: str, there: Sequence[str]) -> str:
    """What replaces a pin that is not installed: the newest build of its own series (java
    1.8.0_121 -> 1.8.0_292: same release, later update), else the oldest newer version (cmake
    3.17.3 -> 3.18.4: the least change that exists), else the newest."""
    series = [v for v in there if _same_series(v, version)]
    if series:
        return max(series, key=_version_key)
    return nearest_version(version, there)


def _replacement_rule(version: str, there: Sequence[str]) -> str:
    """Which rule of installed_replacement chose, said in the port's reason."""
    if any(_same_series(v, version) for v in there):
        return "the newest build of the same series"
    if _version_key(version) < max(map(_version_key, there)):
        return "the oldest newer version installed"
    return "the newest version installed"


def _same_series(one: str, other: str) -> bool:
    """Both versions are the same but for their last part (1.8.0_121 and 1.8.0_292; 3.17.3 and
    3.17.1); a one-part version (``7``) has no series."""
    series = _version_key(other)[:-1]
    return bool(series) and _version_key(one)[:-1] == series


def try_under(module: str, target: str, stdenv: str) -> str:
    """The to-do for a version installed on ``target`` that no source places under ``stdenv``."""
    family = module.partition("/")[0]
    return (f"{module} is installed on {target}, but no source says whether it loads under {stdenv}: run "
            f"'module load {stdenv} {module}' on a {target} login node; if Lmod refuses it, load one that "
            f"'module avail {family}' lists there")


def _unlisted_version(module: str, stdenv: str) -> ModuleCheck:
    """A pinned version of a family the catalogue lists without versions: the stack has the
    family, but no source says which versions load under its StdEnv (``perl/5.30.2`` was a
    StdEnv/2020 build); kept, with what the user must check, since a version of the old stack
    would stop the job at ``module load``."""
    return ModuleCheck(module, module, warning=f"check that {module} loads under {stdenv}: module spider {module} "
                       "(the catalogue lists the family, not its versions)")


def catalogue_checks(profile: SiteProfile, modules: Sequence[str]) -> List[ModuleCheck]:
    """Each module checked against ``profile``'s catalogue (none without one): what ``port``
    rewrites and warns, and what ``check`` reports, come from this one place."""
    catalogue = profile.software.catalogue
    if not catalogue:
        return []
    oldest = profile.rules.oldest_python.version if profile.rules.oldest_python else None
    return [check_module(m, catalogue, profile.name, oldest, profile.software.stdenv, profile.software.installed) for m in modules]


def lacking_versions(profile: SiteProfile, modules: Sequence[str]) -> List[str]:
    """What ``check`` says of each module whose family the catalogue lists without its version
    (``gcc/9.3.0`` on a StdEnv/2023 cluster): the job would die at ``module load``. A family the
    catalogue does not list is not reported (the catalogue holds documented families only), nor is
    a retired cluster's spec (its catalogue is today's stack, not the one the cluster had)."""
    if profile.is_retired:
        return []
    checks = [c for c in catalogue_checks(profile, modules) if c.why]
    if profile.software.stdenv in modules:
        return [_load_instead(c) if c.absent else undocumented(c, profile) for c in checks]
    return [_load_instead(c) for c in checks]


def _load_instead(check: ModuleCheck) -> str:
    """What ``check`` says of a module it would rewrite: the reason, and what to load."""
    return (f"{check.why}: load it instead ('module spider {check.module.partition('/')[0]}' lists them; "
            f"slurmkit port rewrites it)")


def undocumented(check: ModuleCheck, profile: SiteProfile) -> str:
    """A spec that pins the site's own StdEnv may load a version the stack has and no page
    documents (r/4.3.1 under StdEnv/2023; the catalogue lists r/4.4.0 and r/4.5.0), and port
    keeps it (a user's R or Julia library is built for it): said as a question, not as missing."""
    family = check.module.partition("/")[0]
    documented = ", ".join(families(profile.software.catalogue)[family])
    return (f"{check.module} is not among the {family} versions documented for {profile.software.stdenv} ({documented}): "
            f"check that it loads ('module spider {check.module}')")
