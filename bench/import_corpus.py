"""Import, check and port every job script of a folder: how slurmkit does on real scripts.

For each script (``*.sh``, ``*.slurm``, ``*.sbatch``, ``*.job``... every regular file but the
folder's MANIFEST.tsv and COMMIT) the bench does what a user of a retired cluster does:

1. ``slurmkit import`` (the Python API, as the command calls it) under the cluster the script was
   written for (see ``written_for``);
2. ``slurmkit check`` on the imported spec file (errors refuse it; warnings and to-dos do not;
   a retired cluster's refusal to submit is counted apart: such a spec is meant to be ported);
3. ``slurmkit port`` onto a 2026 cluster: Fir for a GPU job (Fir has the most H100 nodes; a GPU
   job of any legacy cluster moves there), else the successor: Graham -> Nibi, Cedar -> Fir,
   Béluga -> Rorqual, Niagara -> Trillium; Narval, still in service, goes to Rorqual (its sister
   cluster at the same site), so that its scripts are ported too;
4. ``slurmkit check`` on the ported spec;
5. verification, as both commands do it unless told --no-verify: the original script and the
   imported job's script run side by side under recording stand-ins, then the old and the ported
   job's; each difference slurmkit did not declare becomes a to-do in the spec. The counts say
   how many scripts verified equal, how many had differences found (now to-dos), how many could
   not be verified (with the reason's class), and how many are *silently different after
   verification*: a difference was found, yet the last spec passes check with no to-do.

A step that raises anything but a SlurmkitError is a crash (a traceback: always a bug); a
SlurmkitError or an error finding is a refusal with a reason. Reasons are grouped into classes
by their first line with the file name cut off, quoted words replaced by '…' and numbers by N.

Usage: python bench/import_corpus.py PATH [--json] [--show CLASS-PREFIX] [--no-verify]
  --json    the counts and classes as JSON (what bench/results/import_corpus.json holds)
  --show    the scripts of the classes starting with CLASS-PREFIX, to reproduce a failure

The corpus: ``fetch`` github:hariharan-devarajan/jobspec-database, then
``python bench/alliance_corpus.py GITDIR /tmp/jobspec-alliance`` (it says which scripts it takes).

Figures, 2026-11-27, jobspec-database f7672ec9 (632 Alliance scripts), this machine; every run
with its classes is in bench/results/import_corpus.json:
  before the bench's own fixes (no verification yet): imported 629, passes check 576, crashes 2;
  with verification, lead 78254e5: imported 632 (0 crashes), passes check 578 (91.5 %), ported
  601, verified equal 327, differences found 249 (each a to-do), not verified 53, silently
  different after verification 0;
  main 39a274b: passes check 595 (94.1 %), ported 609 (607 pass check), verified equal 404,
  differences found 197, not verified 28, silently different after verification 0;
  main 6771a51: passes check 599 (94.8 %), ported 614 (612 pass check), verified equal 442,
  differences found 164, not verified 23, silently different after verification 0;
  2026-11-28, lead e0ec71e (a retired cluster's refusal counted apart): passes check 595 (94.1 %),
  ported 611 (603 pass check, 8 refused with their reason, 21 port refusals with theirs),
  verified equal 510, differences found 89, not verified 32, silently different 0, crashes 0;
  lead31 86d9c33: passes check 603 (95.4 %), ported 618 (610 pass check), verified equal 516,
  differences found 91, not verified 23, silently different 0, crashes 0;
  main 4eaec7a: passes check 603 (95.4 %), ported 618 (610 pass check), verified equal 517,
  differences found 90, not verified 23, silently different 0, crashes 0 (17 minutes);
  2026-11-29, main 4c3f3c3: passes check 605 (95.7 %), ported 619 (612 pass check), verified equal
  538, differences found 69, not verified 23, silently different 0, crashes 0;
  main 9361b55d: passes check 605 (95.7 %), ported 620 (613 pass check), verified equal 533,
  differences found 74 (5 of them the port's own moved /cvmfs paths, declared since), not
  verified 23, silently different 0, crashes 0.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import functools
import json
import re
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from slurmkit.core.errors import SlurmkitError

#: the clusters a legacy script may name, and the 2026 cluster its CPU jobs move to
SUCCESSORS = {"graham": "nibi", "cedar": "fir", "beluga": "rorqual", "narval": "rorqual", "niagara": "trillium"}
GPU_TARGET = "fir"
#: where no cluster is named or hinted: Cedar, the largest general-purpose legacy cluster
DEFAULT_CLUSTER = "cedar"
#: what tells the cluster besides its name: host names, site paths and stacks
HINTS = (("niagara", r"NiaEnv|/scinet/|\bnia-login"),
         ("graham", r"\bgra-?login|\bgra\d"),
         ("cedar", r"\bcdr\d"),
         ("beluga", r"\bblg\d"),
         ("narval", r"\bn[cg]\d{5}"))
#: a GPU type's home when the script names no cluster that has it: the cluster that had most of them
GPU_ORDER = ("cedar", "beluga", "narval", "graham")
NAMES = re.compile(r"\b(graham|cedar|b[eé]luga|narval|niagara)\b", re.I)
ASKED_GPUS = re.compile(r"--(?:gres=gpu|gpus(?:-per-node|-per-task)?=?)[:=]([A-Za-z][\w.-]*):", re.I)
NOT_SCRIPTS = {"MANIFEST.tsv", "COMMIT"}


@functools.lru_cache(maxsize=None)
def gpu_names(cluster: str) -> frozenset:
    """Every GPU name a job could give on ``cluster``, in service or retired there."""
    from slurmkit.core.gpu_names import mig_names, whole_gpu_names
    from slurmkit.sites.profiles import load_profile

    profile = load_profile(cluster)
    names: set = set()
    for node_type in profile.node_types + getattr(profile, "retired_node_types", ()):   # () before retired types
        if node_type.gpus:
            names.update(whole_gpu_names(node_type.gpus))
            names.update(n for mig in node_type.gpus.mig for n in mig_names(node_type.gpus, mig))
    return frozenset(names)


def written_for(text: str) -> Tuple[str, str]:
    """The legacy cluster a script was written for, and how that was told: of the clusters that
    had the GPUs it asks for, the one it names most (the first named on a tie), else one a host
    name or site path points to, else the GPU type's home; else the cluster it names, or Cedar."""
    words = [m.group(1).lower().replace("é", "e") for m in NAMES.finditer(text)]
    count = collections.Counter(words)
    named = sorted(count, key=lambda c: (-count[c], words.index(c)))
    asked = {m.group(1).lower() for m in ASKED_GPUS.finditer(text)}
    fits = [c for c in SUCCESSORS if asked <= gpu_names(c)]
    for cluster in named:
        if cluster in fits:
            return cluster, "named"
    for cluster, pattern in HINTS:
        if cluster in fits and re.search(pattern, text):
            return cluster, "hinted"
    home = next((c for c in GPU_ORDER if asked and c in fits), None)
    if home:
        return home, "gpu type"
    return (named[0], "named") if named else (DEFAULT_CLUSTER, "default")


def reason_class(line: str) -> str:
    """A refusal's class: its first line without the file name, quoted words and numbers."""
    line = line.strip().splitlines()[0] if line.strip() else "(no reason given)"
    line = re.sub(r"^(error: )?\S+\.(yaml|sh)(:\d+)?: ", "", line)
    line = re.sub(r"(?<!\w)'[^']*'|\"[^\"]*\"|`[^`]*`", "'…'", line)
    line = re.sub(r"\$\{[^}]*\}|\$\w+", "$…", line)     # a script's variable names stay out of the classes
    line = re.sub(r"\b\d+(\.\d+)?", "N", line)
    return line[:160]


def finding_class(text: str) -> str:
    """A verification finding's class: as a refusal's, with the program it names left out (the
    findings about python and about gmx are one class)."""
    if text.startswith("not traced: "):
        text = "not traced: …: " + text.rsplit(": ", 1)[-1]
    # the command a start line quotes goes; of the message an ending quotes, its last part stays
    ended = text.startswith("the old script ended") or text.startswith("the new script ended")
    text = re.sub(r" \(((?:[^()]|\([^()]*\))*)\)$", lambda m: " (…" + (": " + m.group(1).rsplit(": ", 1)[-1] if ended else "") + ")", text)
    text = re.sub(r"(?<![\w$])/[^\s:]*", "PATH", text)
    return reason_class(re.sub(r"^\S+?(?='s |\s(?:gets|runs|is|starts|ran)\b)", "PROGRAM", text))


def crash_class(stage: str, error: BaseException) -> str:
    """A crash's class: the stage, the exception type and the innermost slurmkit frame."""
    frames = traceback.extract_tb(error.__traceback__)
    frame = ([f for f in frames if "/slurmkit/" in f.filename] or frames)[-1]
    where = frame.filename.split("/slurmkit/")[1] if "/slurmkit/" in frame.filename else Path(frame.filename).name
    return f"{stage}: {type(error).__name__} in {where}:{frame.name}"


class Crash(Exception):
    def __init__(self, stage: str, error: BaseException) -> None:
        super().__init__(crash_class(stage, error))
        self.stage, self.error = stage, error


class Refused(Exception):
    def __init__(self, stage: str, reason: str) -> None:
        super().__init__(reason)
        self.stage, self.reason = stage, reason


def _step(stage: str, action, *args):
    try:
        return action(*args)
    except SlurmkitError as error:
        raise Refused(stage, str(error)) from None
    except (Crash, Refused):
        raise
    except Exception as error:   # noqa: BLE001 - a crash is what the bench counts
        raise Crash(stage, error) from error


# ------------------------------------------------------------------------------- the steps

def import_step(path: Path, cluster: str, folder: Path, verify: bool = True) -> Tuple[Path, Any]:
    """What ``slurmkit import SCRIPT --profile CLUSTER -o SPEC`` does: the spec file's path, and
    the verification (None with ``verify`` off, as --no-verify)."""
    from slurmkit.core.errors import InputError
    from slurmkit.core.yamlfile import read_text
    from slurmkit.port.modulelines import with_module_line_todos
    from slurmkit.port.porting import MAX_SCRIPT_BYTES, import_script, imported_text
    from slurmkit.spec.spec import spec_from_mapping

    text = read_text(path, InputError, MAX_SCRIPT_BYTES)
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", path.stem.split("__")[-1]) or "job"
    imported = import_script(text, name=name, profile=cluster)
    spec_from_mapping(imported.spec, source=f"{path.name} (imported)")
    imported = with_module_line_todos(imported, path.parent)
    verification = None
    if verify:
        from slurmkit.port.verify import verified_import

        imported, verification = verified_import(text, imported, cluster)
    spec = folder / f"{name}.yaml"
    spec.write_text(imported_text(imported, path.name))
    return spec, verification


def check_step(spec: Path) -> Tuple[List[str], int]:
    """What ``slurmkit check SPEC`` finds: its errors (field: message) and how many to-dos."""
    from slurmkit.api.job import Job
    from slurmkit.core.todos import pending_import_notes

    findings = Job.from_yaml(spec).check()
    errors = [f"{f.field}: {f.message}" for f in findings if f.level == "error"]
    return errors, len(pending_import_notes(spec.read_text(errors="replace")))


def port_step(spec: Path, target: str, verify: bool = True) -> Tuple[Path, Any]:
    """What ``slurmkit port SPEC --to TARGET -o PORTED`` does: the ported spec file's path, and the
    verification (None with ``verify`` off)."""
    from slurmkit.core.errors import SpecError
    from slurmkit.core.yamlfile import read_yaml_file
    from slurmkit.port.retarget import PortRefused, choose_target, port_spec, ported_text
    from slurmkit.sites.profiles import load_profile
    from slurmkit.spec.spec import spec_from_mapping

    original, (data, lines, _) = read_yaml_file(spec, SpecError)
    parsed = spec_from_mapping(data, str(spec), lines)
    source = load_profile(str(parsed.profile))   # import always names one
    try:
        ported = port_spec(data, parsed, source, choose_target(source, target, load_profile), folder=spec.parent)
    except PortRefused as refused:
        first = refused.findings[0]
        raise SlurmkitError(f"{first.field}: {first.message}") from None
    verification = None
    if verify:
        from slurmkit.port.verify import verified_port

        ported, verification = verified_port(data, ported, source.name)
    out = spec.with_name(f"{spec.stem}.{target}.yaml")
    out.write_text(ported_text(ported, original, data))
    return out, verification


# ----------------------------------------------------------------------------- one script

def is_gpu(spec: Path) -> bool:
    from slurmkit.core.yamlfile import read_yaml_file

    _, (data, _, _) = read_yaml_file(spec)
    return bool(isinstance(data, dict) and (data.get("resources") or {}).get("gpus"))


def run_one(path: Path, verify: bool = True) -> Dict[str, Any]:
    """The outcome of one script: how far it got, and the reason or crash where it stopped."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    cluster, how = written_for(text)
    row: Dict[str, Any] = {"script": path.name, "cluster": cluster, "told_by": how}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            _steps(path, cluster, Path(tmp), row, verify)
        except Refused as refused:
            row["refused"] = (refused.stage, refused.reason)
        except Crash as crash:
            row["crash"] = (crash.stage, str(crash), "".join(traceback.format_exception(crash.error)))
    return row


def _checked(stage: str, spec: Path) -> Tuple[List[str], int]:
    """check_step, with a spec check cannot read counted as refused by check (its one line)."""
    try:
        return _step(stage, check_step, spec)
    except Refused as refused:
        return [refused.reason], 0


def _steps(path: Path, cluster: str, folder: Path, row: Dict[str, Any], verify: bool) -> None:
    spec, verification = _step("import", import_step, path, cluster, folder, verify)
    row["imported"] = True
    _verified(row, "import", verification)
    errors, row["todos"] = _checked("check", spec)
    # A spec for a retired cluster is refused by design (it is to be ported, step 3); the count
    # of imported specs that pass check is of their own faults, so that refusal alone is set aside.
    row["check_errors"] = [error for error in errors if not _retirement(error)]
    row["retired_refused"] = len(row["check_errors"]) < len(errors)
    target = GPU_TARGET if _step("import", is_gpu, spec) else SUCCESSORS[cluster]
    row["target"] = target
    ported, verification = _step("port", port_step, spec, target, verify)
    row["ported"] = True
    _verified(row, "port", verification)
    row["ported_errors"], row["ported_todos"] = _checked("ported check", ported)


def _retirement(error: str) -> bool:
    """Whether a check error is the notice that the spec's cluster is retired (port moves it)."""
    return "describes a cluster retired" in error or "itself was retired on" in error


def _verified(row: Dict[str, Any], stage: str, verification) -> None:
    """What verification of one stage said: "equal", "found" (its findings, each now a to-do) or
    "not verified" (why)."""
    if verification is None:
        return
    if verification.not_run:
        row[f"{stage}_verify"] = ("not verified", [verification.not_run])
    elif verification.findings:
        row[f"{stage}_verify"] = ("found", [d.text for d in verification.findings])
    else:
        row[f"{stage}_verify"] = ("equal", [])


# ---------------------------------------------------------------------------------- counts

COUNTS = ("scripts", "imported", "import crashed", "import refused", "imported passes check", "  of them with to-dos",
          "imported refused by check", "imported for a retired cluster (check refuses to submit it)", "ported", "port refused",
          "ported passes check", "  of them with to-dos (ported)", "ported refused by check", "crashed (any step)")
GROUPS = ("crash", "import refused", "check refused (first error)", "port refused", "ported check refused (first error)",
          "import: found by verification", "import: not verified", "port: found by verification", "port: not verified")
VERIFY_COUNTS = ("verified equal (import and port)", "differences found by verification (now to-dos)",
                 "  found in the import", "  found in the port", "not verified (import or port)",
                 "silently different after verification")


def _check_tags(errors: Optional[List[str]], todos: int, what: str, with_todos: str) -> List[str]:
    if errors is None:
        return []
    if errors:
        return [f"{what} refused by check"]
    return [f"{what} passes check"] + ([with_todos] if todos else [])


def _tags(row: Dict[str, Any]) -> List[str]:
    """The counts one script adds to."""
    tags = ["scripts"] + [key for key in ("imported", "ported") if row.get(key)]
    if "crash" in row:
        tags += ["crashed (any step)"] + (["import crashed"] if row["crash"][0] == "import" else [])
    if row.get("refused", ("",))[0] in ("import", "port"):
        tags.append(f"{row['refused'][0]} refused")
    tags += _check_tags(row.get("check_errors"), row.get("todos", 0), "imported", "  of them with to-dos")
    tags += ["imported for a retired cluster (check refuses to submit it)"] if row.get("retired_refused") else []
    tags += _check_tags(row.get("ported_errors"), row.get("ported_todos", 0), "ported", "  of them with to-dos (ported)")
    return tags + _verify_tags(row)


def _verify_tags(row: Dict[str, Any]) -> List[str]:
    """The verification counts one script adds to. "Silently different after verification": the
    script's last spec (ported, else imported) passes check with no to-do, while verification
    found a difference: what this bench exists to keep at 0."""
    said = {stage: row[f"{stage}_verify"][0] for stage in ("import", "port") if f"{stage}_verify" in row}
    if not said:
        return []
    tags = []
    if list(said.values()) == ["equal", "equal"]:
        tags.append("verified equal (import and port)")
    if "found" in said.values():
        tags.append("differences found by verification (now to-dos)")
        tags += [f"  found in the {stage}" for stage, outcome in said.items() if outcome == "found"]
    if "not verified" in said.values():
        tags.append("not verified (import or port)")
    last_errors, last_todos = ((row["ported_errors"], row["ported_todos"]) if "ported_errors" in row
                               else (row.get("check_errors"), row.get("todos", 0)))
    if "found" in said.values() and last_errors == [] and not last_todos:
        tags.append("silently different after verification")
    return tags


def _failures(row: Dict[str, Any]) -> List[Tuple[str, str]]:
    """(group, class) of each way one script failed."""
    found = [("crash", row["crash"][1])] if "crash" in row else []
    if "refused" in row:
        found.append((f"{row['refused'][0]} refused", reason_class(row["refused"][1])))
    for key, group in (("check_errors", "check refused (first error)"), ("ported_errors", "ported check refused (first error)")):
        if row.get(key):
            found.append((group, reason_class(row[key][0])))
    for stage in ("import", "port"):
        outcome, texts = row.get(f"{stage}_verify", ("", []))
        if outcome in ("found", "not verified"):
            group = f"{stage}: {'found by verification' if outcome == 'found' else 'not verified'}"
            found += [(group, finding_class(text)) for text in dict.fromkeys(finding_class(t) for t in texts)]
    return found


def _by_count(values) -> Dict[str, int]:
    return dict(sorted(collections.Counter(values).items(), key=lambda kv: (-kv[1], kv[0])))


def summary(rows: List[Dict[str, Any]], verified: bool) -> Dict[str, Any]:
    """The counts and the classes of each failure (no script text)."""
    tags = collections.Counter(tag for row in rows for tag in _tags(row))
    counts = {key: tags[key] for key in COUNTS + (VERIFY_COUNTS if verified else ())}
    failures = [failure for row in rows for failure in _failures(row)]
    return {
        "counts": counts,
        "verification": "import and port, as the commands do" if verified else "skipped (--no-verify)",
        "clusters": _by_count(f"{r['cluster']} ({r['told_by']})" for r in rows),
        "targets": _by_count(r["target"] for r in rows if "target" in r),
        "classes": {group: _by_count(c for g, c in failures if g == group) for group in GROUPS},
    }


def _print(result: Dict[str, Any]) -> None:
    for key, value in result["counts"].items():
        print(f"{key:<30} {value:>5}")
    print(f"verification: {result['verification']}")
    print("clusters: " + ", ".join(f"{k} {v}" for k, v in result["clusters"].items()))
    print("targets: " + ", ".join(f"{k} {v}" for k, v in result["targets"].items()))
    for name, found in result["classes"].items():
        if found:
            print(f"\n{name}:")
            for reason, count in found.items():
                print(f"  {count:>4}  {reason}")


def _show(rows: List[Dict[str, Any]], prefix: str) -> None:
    """The scripts with a failure or finding whose class starts with ``prefix``, with the traceback."""
    for row in rows:
        if any(found.startswith(prefix) for _, found in _failures(row)):
            print(f"== {row['script']} ({row['cluster']})")
            if "crash" in row:
                print(row["crash"][2])
            for stage in ("import", "port"):
                for text in row.get(f"{stage}_verify", ("", []))[1]:
                    print(f"   {stage}: {text}")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show", metavar="CLASS-PREFIX")
    parser.add_argument("--no-verify", action="store_true", help="skip verification (as the commands' --no-verify)")
    args = parser.parse_args(argv)
    scripts = sorted(p for p in args.path.iterdir() if p.is_file() and p.name not in NOT_SCRIPTS)
    rows = [run_one(script, not args.no_verify) for script in scripts]
    result = summary(rows, not args.no_verify)
    commit = args.path / "COMMIT"
    result["corpus"] = {"commit": commit.read_text().strip() if commit.exists() else None,
                        "date": datetime.date.today().isoformat()}
    if args.show:
        _show(rows, args.show)
    elif args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        _print(result)
    return 1 if result["counts"]["crashed (any step)"] else 0


if __name__ == "__main__":
    sys.exit(main())
