"""``slurmkit report JOBID --apply [SPEC]``: the report's advice written back into the job's spec.

Only advice that names a figure is written: the time limit (``resources.time``), the memory per
node (``resources.mem``), the cores (``resources.cpus_per_task``) and the GPUs
(``resources.gpus``: a count in the spec's own form, or a MIG slice such as ``a100_1g.5gb:1``).
Each changed value gets a comment saying which job measured it (``# slurmkit report 1234: peak
3.1G``); the rest of the file keeps its comments and layout (roundtrip.py), less a comment
that stated a rewritten field's old value. Each value is kept within what ``check`` accepts of
the spec (resolve.floors, the model the report's advice uses too), and one check would still
warn about is left alone, said in a line: check never questions what --apply wrote.

Safety: the unified diff is shown first and nothing is written without a yes (``--yes``, or an
answer at a terminal; without a terminal the command stops, exit 1, saying to add --yes); a
value below what the job used (less time than it ran, less memory than its peak, fewer cores
than it kept busy, fewer GPUs than worked, a MIG slice smaller than the GPU memory it held) is
refused in one line, whatever advice asked it; the file is replaced atomically (files.py).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from slurmkit.core.errors import SlurmkitError
from slurmkit.core.records import Record
from slurmkit.core.units import format_duration, format_size
from slurmkit.report.efficiency import JobEfficiency, Tip, floored, format_mem, short_duration


class NotApplied(SlurmkitError):
    """Advice that cannot be written: no spec, a value below the job's use, no answer."""

    exit_code = 1


class Change(Record):
    key: str          # under resources: time | mem | cpus_per_task | gpus
    value: object     # what the spec gets
    comment: str      # why: "slurmkit report 1234: peak 3.1G"


def used_figures(effs: Sequence[JobEfficiency], made) -> Dict[str, float]:
    """What the job (every task of an array: the most of each) used: seconds, MiB per node,
    busy cores, GPUs that worked, the most GPU memory held (MiB)."""
    ran = [eff for eff in effs if eff.steps or eff.elapsed_s]
    jobs = [made.jobs[eff.job_id] for eff in ran if eff.job_id in made.jobs]
    gpus = [g for job in jobs for g in job.gpus]
    return {
        "time": max((eff.elapsed_s for eff in ran), default=0),
        "mem": max((eff.peak_mib / max(eff.nodes, 1) for eff in ran if eff.peak_mib is not None), default=0.0),
        "cpus_per_task": max((eff.cpu_s / eff.elapsed_s for eff in ran if eff.elapsed_s > 0), default=0.0),
        "cores_per_node": max((eff.cores / max(eff.nodes, 1) for eff in ran if eff.cores), default=0.0),
        "gpus": max((sum(1 for g in job.gpus if not g.idle) for job in jobs), default=0),
        "gpu_mem": max((g.peak_mem_mib for g in gpus if g.peak_mem_mib is not None), default=0.0),
    }


def one_task(kind: Optional[str], resources: dict) -> bool:
    """Whether the spec runs one task (one node, one task on it, and for a kind of one process
    per GPU, one GPU): only there is the job's count of busy cores its cpus_per_task. sacct
    cannot tell: MPI ranks started by mpirun in the batch step look like one task."""
    from slurmkit.core.kinds import DEFAULT_KIND, KINDS, PER_GPU

    row = KINDS.get(kind or DEFAULT_KIND)
    if row is None or (resources.get("nodes") or 1) != 1 or (resources.get("tasks_per_node") or 1) != 1:
        return False
    if row.fills_whole_node == "tasks" and resources.get("tasks_per_node") is None:   # may get a node's cores as tasks
        return False
    return row.processes != PER_GPU or _gpu_count(resources.get("gpus")) <= 1


def _gpu_count(gpus) -> int:
    """GPUs per node of a spec's raw resources.gpus: ``2``, ``h100:2``, ``{type: h100, count: 2}``; a model alone is one."""
    if isinstance(gpus, dict):
        gpus = gpus.get("count", 1)
    if gpus is None:
        return 0
    tail = str(gpus).rpartition(":")[2]
    return int(tail) if tail.isdigit() else 1


def changes(job_id: str, tips: Sequence[Tip], used: Dict[str, float], resources: dict,
            mig_memory: Dict[str, int], kind: Optional[str] = None, floors=None) -> Tuple[List[Change], List[str]]:
    """The spec values the advice names, within what check accepts (``floors``, resolve.Floors),
    and one line for each it cannot write. Raises NotApplied when a value would be below the job's use."""
    out: List[Optional[Change]] = []
    skipped: List[str] = []
    said = f"slurmkit report {job_id}"
    for tip in tips:
        if tip.direction is None:
            continue
        if tip.value is not None:   # only a GPU tip names a value, a MIG slice, where no figure says it (gpuuse.py)
            out.append(_mig_change(job_id, tip.value, used, mig_memory, said))
            continue
        if tip.suggest is None:
            continue
        suggest, why = floored(tip.suggest, floors, tip.resource)   # within what check accepts (None: as advised)
        if tip.resource == "time":
            _at_least(job_id, "time", suggest, used["time"], format_duration(int(suggest)), short_duration(used["time"]))
            out.append(Change("time", format_duration(int(suggest)), f"{said}: ran {short_duration(used['time'])}{why}"))
        elif tip.resource == "memory":
            if resources.get("mem") == "node":
                skipped.append(f"memory: the spec asks mem: node (every node's whole memory); the advice is "
                               f"{format_size(int(suggest))} per node: set mem by hand if the job need not have whole nodes")
                continue
            _at_least(job_id, "memory", suggest, used["mem"], format_size(int(suggest)), format_mem(used["mem"]))
            out.append(_memory_change(suggest, resources, used, f"{said}: peak {format_mem(used['mem'])}{why}", skipped))
        elif tip.resource == "cpu":
            busy = used["cpus_per_task"]
            if not one_task(kind, resources):
                skipped.append("cores: the spec runs several tasks, and what sacct shows of the job cannot say which task "
                               "kept which cores busy: set cpus_per_task by hand from the advice above")
                continue
            _at_least(job_id, "cores", suggest, round(busy), str(int(suggest)), f"{busy:.1f} busy")
            out.append(Change("cpus_per_task", int(suggest), f"{said}: {busy:.1f} cores busy{why}"))
        elif tip.resource == "gpu":
            out.append(_gpu_change(job_id, int(suggest), tip.asked, used, resources.get("gpus"), said))
    return [change for change in out if change is not None], skipped


def _memory_change(per_node: float, resources: dict, used: Dict[str, float], why: str, skipped: List[str]) -> Optional[Change]:
    """The memory advice in the spec's own field: ``mem`` per node, or, where the spec asks
    ``mem_per_cpu``, the advice shared over the cores each node had (rounded up, so that the node
    gets at least the advice); None, with a line in ``skipped``, where those cores are not known."""
    if resources.get("mem_per_cpu") is None:
        return Change("mem", format_size(int(per_node)), why)
    cores = int(used.get("cores_per_node") or 0)
    if cores < 1:
        skipped.append(f"memory: the spec asks mem_per_cpu, and sacct did not say how many cores each node had; "
                       f"the advice is {format_size(int(per_node))} per node: set it by hand")
        return None
    return Change("mem_per_cpu", format_size(-(-int(per_node) // cores)), f"{why}, over {cores} cores a node")


def _mig_change(job_id, value: str, used, mig_memory, said) -> Change:
    room = mig_memory.get(value.rpartition(":")[0])
    _at_least(job_id, "GPU memory", room or 0, used["gpu_mem"], value, format_mem(used["gpu_mem"]))
    _at_least(job_id, "GPUs", 1, used["gpus"], value, f"{int(used['gpus'])} GPUs working")
    return Change("gpus", value, f"{said}: GPU memory peak {format_mem(used['gpu_mem'])}")


def _gpu_change(job_id, count: int, was: Optional[float], used, asked, said) -> Change:
    _at_least(job_id, "GPUs", count, used["gpus"], str(count), f"{int(used['gpus'])} working")
    return Change("gpus", gpus_value(asked, count), f"{said}: {int(used['gpus'])} of {int(was or count)} GPUs worked")


def gpus_value(asked, count: int):
    """``count`` GPUs in the spec's own form: ``2`` -> 1, ``h100:2`` -> ``h100:1``, a mapping's count."""
    if isinstance(asked, dict):
        return dict(asked, count=count)
    if isinstance(asked, str) and not asked.isdigit():
        return f"{asked.partition(':')[0]}:{count}"
    return count


def _at_least(job_id: str, what: str, suggest, used, shown: str, used_shown: str) -> None:
    if suggest is None or used is None or suggest + 1e-9 >= used:
        return
    raise NotApplied(f"not applied: the advice for job {job_id} asks {what} {shown}, below what it used ({used_shown}); "
                     f"edit the spec by hand")


def rewritten(path, job_id: str, tips: Sequence[Tip], used: Dict[str, float], mig_memory: Dict[str, int],
              profile=None) -> Tuple[str, str, List[str]]:
    """(the spec's text, the text with the advice, lines about what was left alone). The values
    are clamped to what check accepts of the spec on its profile (the spec's own, else
    ``profile``), and any check still warns about is left alone, said in one line."""
    from slurmkit.core.roundtrip import rewritten_text
    from slurmkit.core.yamlfile import parse_yaml, read_text

    text = read_text(path)
    old = parse_yaml(text, path)[0]
    if not isinstance(old, dict) or not isinstance(old.get("resources", {}), dict):
        raise NotApplied(f"{path}: not a job spec with a resources mapping")
    resources = dict(old.get("resources") or {})
    profile = spec_profile(old, profile)
    found, skipped = changes(job_id, tips, used, resources, mig_memory, old.get("kind"), spec_floors(old, path, profile))
    found = [c for c in found if resources.get(c.key) != c.value]
    found, warned = unwarned(found, old, path, profile)
    skipped += warned
    if not found:
        return text, text, skipped
    new = dict(old, resources=dict(resources, **{c.key: c.value for c in found}))
    comments: Dict[Tuple[str, ...], str] = {("resources", c.key): c.comment for c in found}
    return text.replace("\r\n", "\n"), rewritten_text(text, old, new, comments=comments), skipped


def spec_profile(data: dict, profile=None):
    """The profile check would check ``data`` (a spec's mapping) on: the one it names, else ``profile``; None if neither loads."""
    from slurmkit.sites.profiles import load_profile

    name = data.get("profile")
    if isinstance(name, str):
        try:
            return load_profile(name)
        except (SlurmkitError, OSError):
            return profile
    return profile


def spec_floors(data: dict, path, profile):
    """What check accepts of the spec's time, memory and cores (resolve.Floors); None where the
    spec does not read as one, or there is no profile to check it on."""
    from slurmkit.resolve.resolve import floors

    spec = _parsed(data, path)
    return floors(spec, profile) if spec is not None and profile is not None else None


def _parsed(data: dict, path):
    from slurmkit.spec.spec import spec_from_mapping

    try:
        return spec_from_mapping(data, str(path))
    except SlurmkitError:
        return None


def unwarned(found: List[Change], old: dict, path, profile) -> Tuple[List[Change], List[str]]:
    """The changes check says nothing new about once written, and a line for each it would
    warn about (its warning), which is left for the user: the report never writes what check
    then questions."""
    from slurmkit.resolve.resolve import resolve

    spec = _parsed(old, path)
    if not found or spec is None or profile is None:
        return found, []
    resources = dict(old.get("resources") or {})
    new = _parsed(dict(old, resources=dict(resources, **{c.key: c.value for c in found})), path)
    if new is None:
        return [], [f"{c.key}: {c.value} does not read back as a spec value: set it by hand" for c in found]
    before = {(f.field, f.message) for f in resolve(spec, profile).findings}
    said = [f for f in resolve(new, profile).findings if (f.field, f.message) not in before]
    kept, skipped = [], []
    for change in found:
        about = [f for f in said if f.field == f"resources.{change.key}"]
        if about:
            skipped.append(f"{change.key}: {change.value}: check would say: {about[0].message}; set it by hand")
        else:
            kept.append(change)
    return kept, skipped


def advice_for_spec(job_id: str, effs: Sequence[JobEfficiency], made, spec_path: Optional[str], record, profile
                    ) -> Tuple[str, str, str, List[str]]:
    """(the spec's path, its text, the text with the advice, lines about what was left alone).

    ``spec_path`` is the user's, or else the spec the registry ``record`` names; ``profile``
    gives the memory of its MIG instances. Raises NotApplied where the advice cannot be written."""
    path = spec_path or _registered_spec(job_id, record)
    before, after, skipped = rewritten(path, job_id, made.advice, used_figures(effs, made), _mig_memory(profile), profile)
    return path, before, after, skipped


def _registered_spec(job_id: str, record) -> str:
    if record is None or not record.spec:
        raise NotApplied(f"slurmkit has no spec file on record for job {job_id}: "
                         f"pass it: slurmkit report {job_id} --apply job.yaml")
    return record.spec


def _mig_memory(profile) -> Dict[str, int]:
    """Each MIG gres of the profile -> its memory (MiB)."""
    if profile is None:
        return {}
    return {m.gres: m.memory_mib for t in profile.node_types if t.gpus for m in t.gpus.mig if m.memory_mib}

