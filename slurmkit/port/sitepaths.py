"""Paths a job names that do not carry over to another cluster's file systems.

Two ways a moved job meets a file system that is not what its script expects: the new cluster
makes a folder read-only inside jobs (Trillium's /home and /project: "The home and project file
systems are read-only on compute nodes on Trillium. Your compute jobs, therefore, have to write
to the scratch directory", Transition_from_Niagara_to_Trillium), so a job that writes there, or
``cd``s there and writes by relative paths, fails at run time; and the old cluster's own layout
(Niagara's /scratch/g/group/user, the GPFS mounts /gpfs/fs0 behind it) does not exist on the new
one. Neither can be rewritten by slurmkit (only the user knows where the files go now), so each
is a to-do of the ported spec. The profiles say which folders are read-only
(rules.read_only_in_job) and which paths are a cluster's own (storage.own_paths).
"""

from __future__ import annotations

import fnmatch
import functools
import posixpath
import re
import shlex
from typing import Any, Dict, List, Optional, Sequence, Tuple

from slurmkit.core.bundled import profiles_dir
from slurmkit.core.records import Record
from slurmkit.port import bashtree
from slurmkit.sites.profiles import ProfileCatalog, SiteProfile

#: commands that write the paths they are given: every operand, or only the last (the destination)
_WRITE_ALL = frozenset(("mkdir", "touch", "tee"))
_WRITE_LAST = frozenset(("cp", "mv", "rsync", "ln", "scp"))
#: a word that is a path: absolute, from a variable, or from ~
_PATHLIKE = re.compile(r"^(/|\$|~)")
#: a path-like token anywhere in a text (for the old cluster's own paths)
_TOKEN = re.compile(r"(?:(?<=^)|(?<=[\s='\"(:]))(/[^\s'\"`;|&)(<>:]+)")


class PathUse(Record):
    """``path`` in ``field``: written there (``how`` says by what), or the folder the program runs in."""

    field: str
    path: str
    how: str
    under: str = ""     # the read-only folder it is under, as the profile names it


def spec_shell_fields(spec: Any) -> List[Tuple[str, str]]:
    """(field, bash text) of what the job's shell runs, in order: its variables (as assignments),
    the setup lines, then the launch."""
    found = [(f"environment.variables.{name}", f"{name}={shlex.quote(str(value))}")
             for name, value in dict(spec.environment.variables or {}).items()]
    found += [(f"environment.setup[{i}]", line) for i, line in enumerate(spec.environment.setup)]
    if spec.launch.shell:
        found.append(("launch.shell", spec.launch.shell))
    elif spec.launch.command:
        found.append(("launch.command", spec.launch.text or shlex.join(spec.launch.command)))
    return found


def log_fields(spec: Any) -> List[Tuple[str, str]]:
    """(field, pattern) of the logs the spec names (logs.output, logs.error): paths sbatch writes."""
    logs = getattr(spec, "logs", None)
    return [(f"logs.{key}", value) for key, value in (("output", logs.output), ("error", logs.error)) if value] if logs else []


def read_only_logs(profile: SiteProfile, spec: Any) -> List[PathUse]:
    """Each log the spec names under a folder ``profile`` makes read-only inside jobs (sbatch
    cannot write it there, and the job fails with no log)."""
    rule = profile.rules.read_only_in_job
    if rule is None:
        return []
    return [PathUse(field, path, "sbatch", _under(path, rule.paths)) for field, path in log_fields(spec) if _under(path, rule.paths)]


def _normal(path: str) -> str:
    """``${HOME}/x`` -> ``$HOME/x``, ``~/x`` -> ``$HOME/x``: one spelling to compare."""
    path = re.sub(r"\$\{(\w+)\}", r"$\1", path)
    return "$HOME" + path[1:] if path == "~" or path.startswith("~/") else path


def _under(path: str, folders: Sequence[str]) -> str:
    """The folder of ``folders`` that ``path`` is in (or is), else ""."""
    path = _normal(path)
    for folder in folders:
        folder = _normal(folder).rstrip("/")
        if path == folder or path.startswith(folder + "/"):
            return folder
    return ""


def _joined(cwd: Optional[str], path: str) -> Optional[str]:
    if _PATHLIKE.match(path):
        return path
    return posixpath.normpath(posixpath.join(cwd, path)) if cwd else None


def _written(command: bashtree.Command) -> List[Tuple[str, str]]:
    """(path as written, how) of each path ``command`` writes: its redirections, and the
    operands of mkdir, touch, tee, and the destination of cp, mv, rsync, ln, and tar -C."""
    found = [(r.target, f"`{r.operator} {r.target}`") for r in command.redirects
             if ">" in r.operator and not r.operator.endswith("&") and not r.target.startswith(("&", "/dev/"))
             and not r.target.isdigit()]
    argv = command.argv
    name = argv[0].rsplit("/", 1)[-1] if argv else ""
    operands = [w for w in argv[1:] if not w.startswith("-")]
    if name in _WRITE_ALL:
        found += [(w, name) for w in operands]
    elif name in _WRITE_LAST and len(operands) >= 2:
        found.append((operands[-1], name))
    elif name == "tar" and any(w in argv for w in ("-C", "--directory")):
        at = argv.index("-C") if "-C" in argv else argv.index("--directory")
        if at + 1 < len(argv):
            found.append((argv[at + 1], "tar -C"))
    return found


def read_only_uses(profile: SiteProfile, fields: Sequence[Tuple[str, str]]) -> List[PathUse]:
    """Each place the job writes under a folder ``profile`` makes read-only inside jobs: a path it
    writes (in the folder it ``cd``'d into, for a relative one), and the folder the program runs
    in when a ``cd`` put it there (what it writes by a relative path lands there)."""
    rule = profile.rules.read_only_in_job
    if rule is None:
        return []
    uses: List[PathUse] = []
    cwd: Optional[str] = None
    values: Dict[str, str] = {}     # the variables set so far, to a path: WD=/project/x; cd $WD
    for field, text in fields:
        for command in bashtree.walk(bashtree.parse(text).statements, functions=False):
            _remember(command, values)
            argv = [bashtree.substituted(word, values) for word in command.argv]
            if argv[:1] == ["cd"]:
                target = next((w for w in argv[1:] if not w.startswith("-")), "$HOME")
                cwd = _joined(cwd, target)
                continue
            for path, how in _written(command):
                where = _joined(cwd, bashtree.substituted(path, values))
                if where and _under(where, rule.paths):
                    uses.append(PathUse(field, where, how, _under(where, rule.paths)))
    if fields and fields[-1][0].startswith("launch.") and cwd and _under(cwd, rule.paths):
        uses.append(PathUse(fields[-1][0], cwd, "the program runs in", _under(cwd, rule.paths)))
    return list({(u.field, u.path): u for u in uses}.values())


def _remember(command: bashtree.Command, values: Dict[str, str]) -> None:
    """The variables ``command`` sets (``NAME=value`` alone, export's), by their value as far as known."""
    for assignment in (*command.declared, *(command.prefix if not command.words else ())):
        if assignment.value.kind == bashtree.SUBSTITUTION:
            values.pop(assignment.name, None)
        else:
            values[assignment.name] = bashtree.substituted(assignment.value.value, values)


def read_only_todo(use: PathUse, profile: SiteProfile) -> str:
    """The to-do for ``use`` on ``profile``, with the rule's source."""
    rule = profile.rules.read_only_in_job
    source = f" (source: {', '.join(rule.source)})" if rule and rule.source else ""
    if use.how == "the program runs in":
        return (f"{use.field}: the program runs in {use.path} (after a cd), under {use.under}, which is read-only inside "
                f"{profile.name} jobs: a file it writes there by a relative path fails; run it from $SCRATCH (cd $SCRATCH/..., its "
                f"inputs copied there) unless it writes only elsewhere{source}, then remove this line")
    return (f"{use.field}: {use.how} writes {use.path}, under {use.under}, which is read-only inside {profile.name} jobs: write it "
            f"under $SCRATCH{_written_out([use.field])}, and copy what must be kept to {use.under} from a login or datamover node "
            f"after the job{source}, then remove this line")


def _written_out(fields: Sequence[str]) -> str:
    """For a log's path: sbatch expands no variable in it, so the folder is written in full."""
    return " (a log's path in full, such as /scratch/<you>/...: sbatch expands no variable in it)" if any(
        f.startswith("logs.") for f in fields) else ""


def own_paths(source: SiteProfile, target: SiteProfile, fields: Sequence[Tuple[str, str]]) -> List[PathUse]:
    """Each path of ``fields`` that matches ``source``'s storage.own_paths and none of ``target``'s."""
    patterns, theirs = source.storage.own_paths, target.storage.own_paths
    found: List[PathUse] = []
    for field, text in fields:
        for path in _TOKEN.findall(text):
            if any(fnmatch.fnmatchcase(path, p) for p in patterns) and not any(fnmatch.fnmatchcase(path, p) for p in theirs):
                found.append(PathUse(field, path, "names"))
    return list({(u.field, u.path): u for u in found}.values())


#: a path on the user's own file systems: under /home, /project or /scratch, or by ~, $HOME, $PROJECT or $SCRATCH
_USER_PATH = re.compile(r"(?:(?<=^)|(?<=[\s='\"(:]))((?:/home|/project|/scratch|~|\$\{?(?:HOME|PROJECT|SCRATCH)\}?)"
                        r"(?:/[^\s'\"`;|&)(<>:]*)?)(?=$|[\s'\"`;|&)(<>:])")
#: a path of the site's own software, not of the user's files (NiaEnv's /scinet/niagara/software/...)
_SITE_SOFTWARE = re.compile(r"^/(scinet|cvmfs|opt|software)/")
#: Globus, the Alliance's way to copy files between its clusters
GLOBUS = "https://docs.alliancecan.ca/wiki/Globus"


def files_moved_to(source: SiteProfile, target: SiteProfile) -> Optional[str]:
    """The cluster that mounts ``source``'s /home, /project and /scratch, where ``target`` does
    not: a retired cluster's successor (Graham's went to Nibi, so a port to Fir finds none of
    them), or an in-service cluster itself (each has its own file systems, and its own Globus
    endpoint: Narval's are not Fir's). None where the target mounts them, or where the profiles
    do not say where a retired cluster's went."""
    status = source.status
    if source.name == target.name:
        return None
    if status.files_gone_on:   # decommissioned: on no cluster any more
        return source.name
    if status.retired_on is None and not status.successor:
        return source.name
    if not status.files_on_successor or not status.successor:
        return None
    return None if status.successor == target.name else status.successor


def user_paths(fields: Sequence[Tuple[str, str]]) -> List[str]:
    """The paths under the user's own folders (/home, /project, /scratch) that ``fields`` name, in order."""
    return list(dict.fromkeys(path for _, text in fields for path in _USER_PATH.findall(text)))


def files_elsewhere_todo(paths: Sequence[str], source: SiteProfile, target: SiteProfile, place: str) -> str:
    """One to-do for the job's files that stayed on ``place``: the paths it names, and its
    submit folder; where ``source``'s storage was decommissioned, that they are gone from it."""
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    named = f"the job uses {shown} and the folder it is submitted from" if paths else "the job uses the folder it is submitted from"
    gone = source.status.files_gone_on
    if gone:
        return (f"files: {named}; {source.name}'s /home, /project and /scratch were decommissioned (no data access since "
                f"{gone}): put the copy you made of what the job reads on {target.name} (Globus: {GLOBUS}), then remove this line")
    where = f"are {place}'s own" if place == source.name else f"went to {place}"
    return (f"files: {named}; {source.name}'s /home, /project and /scratch {where}, and {target.name} does not "
            f"mount them: copy what the job reads from {place} to {target.name} first (Globus: {GLOBUS}), then remove this line")


@functools.lru_cache(maxsize=1)
def retired_layouts() -> Tuple[SiteProfile, ...]:
    """The bundled profiles of retired clusters with paths of their own layout (Niagara's and
    Mist's /scratch/g/group/user): a script names them whichever cluster it was imported for
    (a Mist script imported as Cedar's), and a target without them has no such folder."""
    profiles, _ = ProfileCatalog([profiles_dir()]).all()
    return tuple(p for p in profiles if p.is_retired and p.storage.own_paths)


def own_path_todo(uses: Sequence[PathUse], source: SiteProfile, target: SiteProfile) -> str:
    """One to-do for every path of ``source``'s own layout the job names (a script names many)."""
    fields = ", ".join(dict.fromkeys(u.field for u in uses))
    paths = list(dict.fromkeys(u.path for u in uses))
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    software = [p for p in paths if _SITE_SOFTWARE.match(p)]   # the site's own software (/scinet/niagara/software)
    steps = [f"name each folder{' of yours' if software else ''} by $HOME, $SCRATCH or $PROJECT as {target.name} sets them"
             ] if len(software) < len(paths) else []
    if software:
        steps.append(f"load the module of {target.name}'s stack that provides what {'it' if len(paths) == 1 else ', '.join(software[:2])} "
                     "held (`module spider NAME`)")
    instead = ", and ".join(steps)
    return (f"{fields}: {shown} {'is a path' if len(paths) == 1 else 'are paths'} of {source.name}'s own layout, which "
            f"{target.name} does not have: {instead}{_written_out([u.field for u in uses])}, then remove this line")
