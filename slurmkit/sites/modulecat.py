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

Where the site publishes every module it built for the StdEnv (``StdEnv-2023.modules`` beside
the bundled profiles, read from the Alliance's list of installed EasyBuild recipes), a family
found there is known whole: its versions there are the ones that load under that StdEnv, and any
other version of it does not (an older StdEnv's build, or none), so the pin is rewritten to the
nearest one there, with no to-do left to settle by hand.

Lmod matches a version by prefix: ``python/3.11`` loads the site's 3.11.x, so it is available
when any listed version starts with ``3.11.``.
"""

from __future__ import annotations

import functools
import re
from types import MappingProxyType
from typing import Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

from slurmkit.core.bundled import profiles_dir
from slurmkit.core.errors import closest
from slurmkit.core.records import Record
from slurmkit.sites.profiles import SiteProfile

# How alike a family name must be to another to be offered as a typo of it: with the ~700
# families of a StdEnv's builds, difflib's default (0.6) offers 'racon' for 'anaconda'; 0.8
# still finds 'python' for 'pyhton' and 'kent_tools' for 'kentutils'.
FAMILY_LIKENESS = 0.8


class ModuleCheck(Record):
    """What the port does with one module: ``module`` as written, ``new`` what the ported spec
    loads (the same when kept), ``why`` the reason of a rewrite, ``warning`` what the user must check;
    ``absent``: the version cannot load there at all (the site's module list lacks it, or the
    StdEnv's builds of its family do not include it);
    ``before``: a module the ported spec loads just before it (the compiler it was built with);
    ``needs``: one the user must load before it, which port could not add."""

    module: str
    new: str
    why: Optional[str] = None
    warning: Optional[str] = None
    absent: bool = False
    before: Optional[str] = None
    needs: Optional[str] = None

    @property
    def loads(self) -> List[str]:
        """What the ported spec loads in place of ``module``."""
        return [self.before, self.new] if self.before else [self.new]


def families(catalogue: Sequence[str]) -> Dict[str, List[str]]:
    """``{family: [versions]}`` of a catalogue written as ``family/version`` names, in its order."""
    table: Dict[str, List[str]] = {}
    for name in catalogue:
        family, _, version = name.partition("/")
        table.setdefault(family, [])
        if version:
            table[family].append(version)
    return table


def version_key(version: str) -> Tuple:
    """Orders versions as numbers (``3.10`` after ``3.9``; ``2019u4`` as 2019, 4; ``2023b`` after ``2023a``).
    Each part is tagged, numbers before words, so that any two versions compare: a version
    written with words where another has a number (``cudnn/cuda12-8.8.0``) sorts after it."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.findall(r"\d+|[a-z]+", version.lower()))


def is_available(version: str, versions: Sequence[str]) -> bool:
    """Lmod's match: the version itself, or a prefix of one ending at a dot."""
    return any(v == version or v.startswith(version + ".") for v in versions)


def nearest_version(version: str, versions: Sequence[str]) -> str:
    """The oldest listed version not older than ``version`` (what replaced it), else the newest."""
    ordered = sorted(versions, key=version_key)
    wanted = version_key(version)
    newer = [v for v in ordered if version_key(v) >= wanted]
    return newer[0] if newer else ordered[-1]


def check_module(module: str, catalogue: Sequence[str], target: str, oldest_python: Optional[str] = None,
                 stdenv: Optional[str] = None, installed: Optional[Mapping[str, Sequence[str]]] = None,
                 built: FrozenSet[str] = frozenset()) -> ModuleCheck:
    """Keep, rewrite or warn about ``module`` on ``target`` (whose catalogue is ``catalogue``); a
    python is rewritten to one not older than ``oldest_python``, the oldest the site still serves.
    ``installed`` (family: every version there, any StdEnv) settles what the catalogue cannot;
    ``built`` names the families whose every build for the StdEnv the catalogue holds."""
    table = families(catalogue)
    family, _, version = module.partition("/")
    stdenv = stdenv or f"{target}'s standard environment"
    settled = _settled(module, table, (installed or {}).get(family), built, target, stdenv, oldest_python)
    if settled:
        return settled
    if family not in table:
        return _unknown_family(module, table, target)
    versions = table[family]
    if version and not versions:
        return _unlisted_version(module, stdenv)
    if not version or is_available(version, versions):
        return ModuleCheck(module, module)
    if version_key(version) > max(map(version_key, versions)):
        return ModuleCheck(module, module, warning=f"{module} is newer than the {family} versions of {target}'s module catalogue "
                           f"({', '.join(versions)}), which lists only documented ones: check that it exists there "
                           f"('module spider {module}'), or use {family}/{nearest_version(version, versions)}")
    served, which = _served(family, versions, oldest_python)
    new = f"{family}/{nearest_version(version, served or versions)}"
    return ModuleCheck(module, new, why=f"{module} is not in {target}'s stack, which has {family} "
                       f"{', '.join(versions)}; {new} is the nearest{which}")


def _settled(module: str, table: Dict[str, List[str]], there: Optional[Sequence[str]], built: FrozenSet[str],
             target: str, stdenv: str, oldest_python: Optional[str]) -> Optional[ModuleCheck]:
    """A pin settled by what the site lists: every build of its family for the StdEnv
    (``built``), else every installed version (``there``); None where neither lists it."""
    family, _, version = module.partition("/")
    if there is not None and not there:   # the site lists none: not installed there, whatever the catalogue says elsewhere
        return ModuleCheck(module, module, warning=f"{family} is not installed on {target} (its module list has none): run the "
                           f"job on a cluster that has it, or check with 'module spider {family}' on a {target} login node")
    if version and family in built:
        return built_pin(module, table[family], there, target, stdenv, oldest_python)
    if there and version:
        return settled_pin(module, table.get(family, []), there, target, stdenv)
    return None


def _served(family: str, versions: Sequence[str], oldest_python: Optional[str]) -> Tuple[List[str], str]:
    """The versions a pin may move to (a python no older than the oldest the site builds wheels
    for), and the words that say so in the reason where that left some out."""
    served = [v for v in versions if family != "python" or not oldest_python or version_key(v) >= version_key(oldest_python)]
    which = f" of those it builds wheels for (python/{oldest_python} and newer)" if served and served != list(versions) else ""
    return served, which


def _unknown_family(module: str, table: Dict[str, List[str]], target: str) -> ModuleCheck:
    """A family the catalogue does not list: kept, with the closest family name where one is close."""
    family = module.partition("/")[0]
    builds = _other_builds(family, table)
    like = None if builds else closest(family, table, cutoff=FAMILY_LIKENESS)
    versions = _full(sorted(set(table[like]), key=version_key)) if like else []
    hint = f" (did you mean {like!r}: {', '.join(f'{like}/{v}' for v in versions) or like}?)" if like else ""
    if builds:
        hint = " (its builds there: " + "; ".join(
            ", ".join(f"{name}/{v}" for v in _full(sorted(set(table[name]), key=version_key))) or name for name in builds) + ")"
    return ModuleCheck(module, module, warning=f"{module}: {family!r} is not in {target}'s module catalogue{hint}; "
                       f"check that it exists there ('module spider {family}') before submitting")


def _other_builds(family: str, table: Dict[str, List[str]]) -> List[str]:
    """The catalogue's other builds of the same program: ``namd-ucx`` and ``namd-multicore`` for
    ``namd-mpi``, ``lammps-omp`` for ``lammps`` (the stacks name a build program-variant)."""
    stem = family.split("-")[0]
    return sorted(name for name in table if name != family and name.split("-")[0] == stem and "-" in name + family)


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
    if documented and version_key(version) < max(map(version_key, documented)):
        new = f"{family}/{nearest_version(version, documented)}"
        return ModuleCheck(module, new, why=f"{module} is installed on {target} but not documented for {stdenv}, "
                           f"which has {family} {', '.join(documented)}; {new} is the nearest")
    return ModuleCheck(module, module, warning=try_under(module, target, stdenv))


def built_pin(module: str, built: Sequence[str], there: Optional[Sequence[str]], target: str, stdenv: str,
              oldest_python: Optional[str] = None) -> ModuleCheck:
    """A pinned version of a family whose every ``stdenv`` build is known (``built``): one of them
    is kept; any other version does not load under ``stdenv`` and is rewritten to the nearest
    build (of those ``target`` has, where its module list is known; a python not older than the
    oldest the site serves). Nothing is left to check by hand."""
    family, _, version = module.partition("/")
    built = sorted(set(built), key=version_key)
    here = [v for v in built if not there or is_available(v, there)] or built
    if is_available(version, here):
        return ModuleCheck(module, module)
    full = _full(here)
    if version_key(version) > max(map(version_key, full)):
        return ModuleCheck(module, module, warning=f"{module} is newer than the {family} builds for {stdenv} that slurmkit "
                           f"knows ({', '.join(full)}): check that it exists there ('module spider {module}'), "
                           f"or use {family}/{full[-1]}")
    served, which = _served(family, full, oldest_python)
    new = f"{family}/{_nearest_build(version, here, served or full)}"
    what = f"is not installed on {target}" if there and not is_available(version, there) else f"is not built for {stdenv}"
    return ModuleCheck(module, new, why=f"{module} {what}; {target}'s {stdenv} builds of {family} are "
                       f"{', '.join(full)}; {new} is the nearest{which}", absent=True)


def served_python(module: str, profile: SiteProfile) -> Optional[ModuleCheck]:
    """A python pin older than the oldest ``profile`` builds wheels for, moved to the nearest it
    serves (python/3.10 -> python/3.12.4); None where it is served, or nothing says what is."""
    family, _, version = module.partition("/")
    rules = profile.rules.oldest_python
    if family != "python" or not rules or len(version_key(version)) < 2 or \
            version_key(version)[:2] >= version_key(rules.version)[:2]:
        return None
    builds = families(stdenv_builds(profile.software.stdenv).plain).get("python") or \
        families(profile.software.catalogue).get("python") or []
    served, which = _served(family, _full(sorted(set(builds), key=version_key)), rules.version)
    if not served:
        return None
    new = f"python/{_nearest_build(version, served, served)}"
    which = which or f" of those it builds wheels for (python/{rules.version} and newer)"
    return ModuleCheck(module, new, why=f"{module} is older than the pythons {profile.name} builds wheels for; the job builds "
                       f"its packages anew, so {new} is the nearest{which}")


def _full(versions: Sequence[str]) -> List[str]:
    """The versions that are builds, not an alias of one (python/3.11 names 3.11.5)."""
    return [v for v in versions if not any(w.startswith(v + ".") for w in versions)]


def _nearest_build(version: str, here: Sequence[str], full: Sequence[str]) -> str:
    """The build that replaces ``version``: the one it spells with a trailing ``.0`` (gcc/12.3.0
    is gcc/12.3), else the nearest, moved to the newest patch of its release (python/3.9 ->
    3.11.5, not 3.11.4; cuda/11.4 -> 12.2, not 12.9: a two-part version is a release)."""
    named = [v for v in here if re.fullmatch(re.escape(v) + r"(\.0)+", version)]
    if named:
        return named[0]
    nearest = nearest_version(version, full)
    if len(version_key(nearest)) < 3:
        return nearest
    return max((v for v in full if _same_series(v, nearest)), key=version_key, default=nearest)


def installed_replacement(version: str, there: Sequence[str]) -> str:
    """What replaces a pin that is not installed: the newest build of its own series (java
    1.8.0_121 -> 1.8.0_292: same release, later update), else the oldest newer version (cmake
    3.17.3 -> 3.18.4: the least change that exists), else the newest."""
    series = [v for v in there if _same_series(v, version)]
    if series:
        return max(series, key=version_key)
    return nearest_version(version, there)


def _replacement_rule(version: str, there: Sequence[str]) -> str:
    """Which rule of installed_replacement chose, said in the port's reason."""
    if any(_same_series(v, version) for v in there):
        return "the newest build of the same series"
    if version_key(version) < max(map(version_key, there)):
        return "the oldest newer version installed"
    return "the newest version installed"


def _same_series(one: str, other: str) -> bool:
    """Both versions are the same but for their last part (1.8.0_121 and 1.8.0_292; 3.17.3 and
    3.17.1); a one-part version (``7``) has no series."""
    series = version_key(other)[:-1]
    return bool(series) and version_key(one)[:-1] == series


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
    builds = stdenv_builds(profile.software.stdenv)
    built = frozenset(families(builds.plain))
    checks = [_hidden_kept(m, _only_other_builds(check_module(_shown(m), catalogue + builds.plain, profile.name, oldest,
                                                              profile.software.stdenv, profile.software.installed, built),
                                                 builds, profile, oldest)) for m in modules]
    checks = [_build_of_the_loaded_compiler(c, builds, profile, [x.new for x in checks if x is not c]) for c in checks]
    checks = [_cuda_another_module_needs(c, builds, profile, [x.new for x in checks if x is not c]) for c in checks]
    return [_site_module(_other_compiler(c, builds, profile, [x.new for x in checks if x is not c]), profile) for c in checks]


def _build_of_the_loaded_compiler(check: ModuleCheck, builds: "StdEnvBuilds", profile: SiteProfile,
                                  others: Sequence[str]) -> ModuleCheck:
    """A module moved to (or pinned at) the default compiler's build where the job loads another
    compiler that has builds of it (intel/2023.2.1 and lammps-omp: 20230802, 20240829): Lmod hides
    the default compiler's builds once Intel's is loaded, so the nearest of that compiler's is taken."""
    family, _, version = check.module.partition("/")
    compilers = [m for m in others if m.partition("/")[0] in ("intel", "gcc")]
    theirs = {m: needs for m, needs in builds.other.items() if m.partition("/")[0] == family and needs in compilers}
    if not version or not theirs or check.new in builds.other:
        return check
    compiler = next(iter(theirs.values()))
    new = f"{family}/{nearest_version(version, [m.partition('/')[2] for m, needs in theirs.items() if needs == compiler])}"
    return ModuleCheck(check.module, new, why=f"{check.module} is not built for {profile.software.stdenv} with {compiler}, which "
                       f"the job loads (Lmod shows only that compiler's builds); {new} is the nearest of them")


def _cuda_another_module_needs(check: ModuleCheck, builds: "StdEnvBuilds", profile: SiteProfile,
                               others: Sequence[str]) -> ModuleCheck:
    """A cuda the port moved (the job's version is not built) goes to the one another module of
    the job is built with (cudnn/9.2.1.18 with cuda/12.2), not merely the nearest: a cudnn over
    another CUDA does not load. A cuda the job's version keeps, port leaves alone."""
    family = check.module.partition("/")[0]
    if family != "cuda" or not check.why:
        return check
    needed = sorted({builds.other[m] for m in others if builds.other.get(m, "").partition("/")[0] == "cuda"})
    if len(needed) != 1 or needed[0] == check.new:
        return check
    if needed[0] == check.module:   # the job's own cuda, which _build_of_the_loaded_compiler moved for its compiler
        return ModuleCheck(check.module, check.module)
    return ModuleCheck(check.module, needed[0], why=f"{check.module} is not built for {profile.software.stdenv}; {needed[0]} "
                       f"is the CUDA that {', '.join(m for m in others if builds.other.get(m) == needed[0])} is built with")


def _only_other_builds(check: ModuleCheck, builds: "StdEnvBuilds", profile: SiteProfile, oldest: Optional[str]) -> ModuleCheck:
    """A family the StdEnv builds only with another compiler (nwchem/7.2.3, with Intel): a pin of
    another version moves to its nearest such build, which _other_compiler then loads as it needs,
    rather than staying "not in the catalogue"."""
    family, _, version = check.module.partition("/")
    versions = [m.partition("/")[2] for m in builds.other if m.partition("/")[0] == family]
    if not version or not versions or check.why or family in families(builds.plain) or family in families(profile.software.catalogue):
        return check
    return built_pin(check.module, versions, None, profile.name, profile.software.stdenv or f"{profile.name}'s standard environment",
                     oldest)


def _shown(module: str) -> str:
    """A hidden version as the version it is: ``gcccore/.12.3`` is ``gcccore/12.3``, which Lmod lists
    only when asked (a version whose name starts with a dot). The catalogue names versions from the
    build recipes, which never carry the dot."""
    family, _, version = module.partition("/")
    return f"{family}/{version[1:]}" if version.startswith(".") and len(version) > 1 else module


def _hidden_kept(module: str, check: ModuleCheck) -> ModuleCheck:
    """The check of a hidden version (``_shown``), said of the module as written, with every version
    of its family it names hidden too: the user's dot says the site hides this family's versions,
    and Lmod knows a hidden one only by its dotted name (``gcccore/12.3`` is an unknown module)."""
    if _shown(module) == module:
        return check
    family = module.partition("/")[0]

    def hidden(text: str) -> str:
        return re.sub(rf"(?<![\w.-]){re.escape(family)}/(?=\w)", f"{family}/.", text)

    return check._replace(module=module, new=hidden(check.new), why=check.why and hidden(check.why),
                          warning=check.warning and hidden(check.warning))


def _site_module(check: ModuleCheck, profile: SiteProfile) -> ModuleCheck:
    """The internet proxy module where the compute nodes reach no internet and the site has no
    such module (Trillium): the job must work offline there, which only the user can arrange."""
    if check.module.partition("/")[0] != "httpproxy" or profile.storage.internet_on_compute is not False:
        return check
    if profile.software.modules.get("httpproxy"):
        return check
    return ModuleCheck(check.module, check.module, warning=(
        f"{check.module}: {profile.name}'s compute nodes reach no internet and it has no proxy module: the job must work "
        "offline there (download what it needs on a login node first, and run online services in offline mode)"))


def _other_compiler(check: ModuleCheck, builds: "StdEnvBuilds", profile: SiteProfile, others: Sequence[str]) -> ModuleCheck:
    """A pin the StdEnv builds only with another compiler or CUDA (namd-multicore/2.14 with
    Intel, cudnn/9.5.1.17 with cuda/12.6) is kept rather than moved to the default compiler's
    build. Where the spec loads that module too (``others``: the rest of what it loads), as it
    is; where it loads nothing else but the StdEnv and a compiler is needed, with the compiler
    loaded before it (nothing else can be built for the default one); else with what to load."""
    moved = check.module not in builds.other and check.new in builds.other   # a pin of no build, moved to one (_only_other_builds)
    build = check.new if moved else check.module
    needs = builds.other.get(build)
    if not needs or not (check.why or check.warning):
        return check
    family, _, version = needs.partition("/")
    why = check.why if moved else None
    if version and any(m.partition("/")[0] == family and is_available(m.partition("/")[2], [version]) for m in others):
        return ModuleCheck(check.module, build, why=why)
    stdenv = profile.software.stdenv
    toolkit = _toolkit_of_the_default_compiler(check.module, needs, builds, others, stdenv)
    if toolkit is not None:
        return toolkit
    loaded = _compiler_loaded_for(check.module, build, needs, others, stdenv)
    if loaded is not None:
        return loaded._replace(why="; ".join(filter(None, (why, loaded.why))))
    what = f"only with {needs}: load {needs} before it" if "/" in needs else \
        f"only with the {needs} toolchain: load its compiler before it"
    return ModuleCheck(check.module, build, why=why, needs=needs, warning=(
        f"{build} is built for {stdenv} {what} ('module spider {build}' on a "
        f"{profile.name} login node lists what it needs)"))


#: toolkits the job builds nothing against by choosing them: a pinned version built only for
#: another compiler (cuda/11.8 is in StdEnv/2023 only for the Intel toolchain's old codes) is no
#: reason to switch the job's compiler, and the default compiler's nearest build replaces it (a
#: program built against the old one is rebuilt anyway, and Python wheels bring their own CUDA)
TOOLKITS_OF_THE_DEFAULT_COMPILER = ("cuda",)


def _toolkit_of_the_default_compiler(module: str, needs: str, builds: "StdEnvBuilds", others: Sequence[str],
                                     stdenv: Optional[str]) -> Optional[ModuleCheck]:
    """The default compiler's nearest build of a toolkit (``TOOLKITS_OF_THE_DEFAULT_COMPILER``)
    pinned at a version built only with another compiler the job does not load; None otherwise."""
    family, _, version = module.partition("/")
    compiler = needs.partition("/")[0]
    plain = families(builds.plain).get(family)
    if family not in TOOLKITS_OF_THE_DEFAULT_COMPILER or not plain or any(m.partition("/")[0] == compiler for m in others):
        return None
    new = f"{family}/{nearest_version(version, plain)}"
    return ModuleCheck(module, new, why=f"{module} is built for {stdenv} only with {needs}, which the job does not load; "
                       f"{new} is the nearest built with its default compiler")


def _compiler_loaded_for(module: str, build: str, needs: str, others: Sequence[str], stdenv: Optional[str]) -> Optional[ModuleCheck]:
    """``build`` with the compiler it needs loaded before it, where nothing else the job loads
    is built for another one: only the StdEnv; or a gcc and MPI that Intel has too, whose place
    Intel's compiler takes (INTEL_BUILDS_TOO). None where the user must choose."""
    family = needs.partition("/")[0]
    if family in ("gcc", "intel") and all(m.startswith("StdEnv/") for m in others):
        return ModuleCheck(module, build, before=needs,
                           why=f"{build} is built for {stdenv} only with {needs}, which the job loads before it")
    if family == "intel" and others and all(m.startswith(("StdEnv/", "gcc/")) or m in INTEL_BUILDS_TOO for m in others):
        return ModuleCheck(module, build, before=needs, why=(
            f"{build} is built for {stdenv} only with {needs}, which the job loads in place of its gcc "
            f"({', '.join(m for m in others if m in INTEL_BUILDS_TOO)} is built with both)"))
    return None


#: modules of StdEnv/2023 built with Intel's compiler as well as the default one, so that a job
#: can load intel/2023.2.1 in place of its gcc: the MRCC, CFOUR and DL_POLY pages load
#: "intel/2023.2.1 openmpi/4.1.5" (https://docs.alliancecan.ca/wiki/MRCC, /wiki/CFOUR, /wiki/DL_POLY)
INTEL_BUILDS_TOO = ("openmpi/4.1.5",)


class StdEnvBuilds(Record):
    """What the site built for a StdEnv: ``plain``, the ``family/version`` names its own compiler
    loads; ``other``, those built only with another toolchain, and that toolchain."""

    plain: Tuple[str, ...] = ()
    other: Mapping[str, str] = MappingProxyType({})
    pythons: Mapping[str, Tuple[str, ...]] = MappingProxyType({})   # the Pythons a module's bindings are built for


@functools.lru_cache(maxsize=None)
def stdenv_builds(stdenv: Optional[str]) -> StdEnvBuilds:
    """The builds of ``stdenv`` (``StdEnv-2023.modules`` beside the bundled profiles), or none
    where no such list is bundled."""
    try:
        text = (profiles_dir() / f"{stdenv.replace('/', '-')}.modules").read_text(encoding="utf-8") if stdenv else ""
    except FileNotFoundError:
        text = ""
    rows = [line.split() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    tagged = {row[0]: tuple(row[-1][len("python="):].split(",")) for row in rows if row[-1].startswith("python=")}
    rows = [[word for word in row if not word.startswith("python=")] for row in rows]
    return StdEnvBuilds(plain=tuple(row[0] for row in rows if len(row) == 1),
                        other={row[0]: row[1] for row in rows if len(row) == 2}, pythons=tagged)


def python_bindings(profile: SiteProfile, modules: Sequence[str]) -> List[ModuleCheck]:
    """Each module whose Python bindings are built for other Pythons than the one the job loads
    (scipy-stack/2023b, built for 3.10 and 3.11, beside python/3.12.4): none of its Python
    packages imports. ``new``: the nearest version of it built for the job's Python, where one is;
    ``warning``: what to load instead."""
    builds = stdenv_builds(profile.software.stdenv)
    python = next((m.partition("/")[2] for m in modules if m.partition("/")[0] == "python" and m.count(".") >= 1), "")
    minor = ".".join(python.split(".")[:2])
    found = []
    for module in modules:
        built_for = builds.pythons.get(module)
        if not minor or not built_for or minor in built_for:
            continue
        family = module.partition("/")[0]
        fitting = [m.partition("/")[2] for m, pys in builds.pythons.items() if m.partition("/")[0] == family and minor in pys]
        new = f"{family}/{nearest_version(module.partition('/')[2], fitting)}" if fitting else module
        instead = f"load {new} (built for {minor}) or a python it is built for" if fitting else "load a python it is built for"
        said = f"{module} has Python packages built for python {', '.join(built_for)} only, and the job loads python/{python}"
        found.append(ModuleCheck(module, new, why=f"{said}; {new} is the nearest built for it" if fitting else None,
                                 warning=f"{said}: none of them would import; {instead}"))
    return found


class HeldPython(Record):
    """Why a job's python cannot simply move to a newer one: ``conflict`` names the modules it
    loads whose Python packages are built for older pythons only ("arrow/14.0.1 is built for
    python 3.10 and 3.11 only"); ``moves``, the nearest version of each built for the newer one
    (arrow/17.0.0); ``stuck``, the families with no version built for it."""

    conflict: str
    moves: Tuple[str, ...] = ()
    stuck: Tuple[str, ...] = ()


def python_held(profile: SiteProfile, modules: Sequence[str], python: str) -> Optional[HeldPython]:
    """What in ``modules`` holds the job's python back from ``python`` (``3.12``, or ``3.12.4``): the
    modules with Python packages built for none of it (python_bindings with that python in place
    of the job's); None where nothing does."""
    others = [m for m in modules if m.partition("/")[0] != "python"]
    held = python_bindings(profile, [*others, f"python/{python}"])
    if not held:
        return None
    pythons = stdenv_builds(profile.software.stdenv).pythons
    conflict = ", ".join(f"{c.module} is built for python {and_list(pythons[c.module])} only" for c in held)
    return HeldPython(conflict, tuple(c.new for c in held if c.new != c.module),
                      tuple(c.module.partition("/")[0] for c in held if c.new == c.module))


def and_list(words: Sequence[str]) -> str:
    """``3.10 and 3.11``; ``3.10, 3.11 and 3.12``."""
    return " and ".join(filter(None, (", ".join(words[:-1]), words[-1]))) if words else ""


def lacking_versions(profile: SiteProfile, modules: Sequence[str]) -> List[str]:
    """What ``check`` says of each module whose family the catalogue lists without its version
    (``gcc/9.3.0`` on a StdEnv/2023 cluster), or that needs a module loaded first that the spec does
    not load (``openmpi/5.0.3``, built with GCC 13.3): the job would die at ``module load``. A family the
    catalogue does not list is not reported (the catalogue holds documented families only), nor is
    a retired cluster's spec (its catalogue is today's stack, not the one the cluster had)."""
    if profile.is_retired:
        return []
    found = catalogue_checks(profile, modules)
    needed = [c.warning for c in found if c.needs and c.warning] + [str(c.warning) for c in python_bindings(profile, modules)]
    checks = [c for c in found if c.why]
    if profile.software.stdenv in modules:
        return [_load_instead(c) if c.absent or c.before else undocumented(c, profile) for c in checks] + needed
    return [_load_instead(c) for c in checks] + needed


def _load_instead(check: ModuleCheck) -> str:
    """What ``check`` says of a module it would rewrite: the reason, and what to load."""
    if check.before:
        return f"{check.module} is built only with {check.before}: load {check.before} before it (slurmkit port adds it)"
    return (f"{check.why}: load it instead ('module spider {check.module.partition('/')[0]}' lists them; "
            f"slurmkit port rewrites it)")


def undocumented(check: ModuleCheck, profile: SiteProfile) -> str:
    """A spec that pins the site's own StdEnv may load a version the stack has and no page
    documents (r/4.3.1 under StdEnv/2023; the catalogue lists r/4.4.0 and r/4.5.0), and port
    keeps it (a user's R or Julia library is built for it): said as a question, not as missing."""
    family = check.module.partition("/")[0]
    documented = ", ".join(families(profile.software.catalogue).get(family, []))
    return (f"{check.module} is not among the {family} versions documented for {profile.software.stdenv} ({documented}): "
            f"check that it loads ('module spider {check.module}')")
