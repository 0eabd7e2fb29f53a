"""Limits from the profile: what no cluster of this size could run, found before sbatch is asked.

The resolver calls these with what it has decided (the node types that fit the job); each
returns findings, errors for what could never run and warnings for what would run badly:
more nodes than the cluster has, more array tasks than it takes (its MaxArraySize, its job
limit, or slurmkit's cap where the profile states neither), and the outputs of an array whose
tasks would all copy back to one place.
"""

import re
from math import prod
from typing import List, Optional, Sequence, Tuple

from slurmkit.core.findings import Finding

#: the most tasks of one array when the profile states neither MaxArraySize nor a job limit:
#: ten times the 1000 jobs per user most Alliance clusters allow (alliance_facts.md, "Job
#: count"; https://docs.alliancecan.ca/wiki/Job_scheduling_policies/en). Also the most task
#: ids `slurmkit import` expands from an --array range.
DEFAULT_MAX_ARRAY_TASKS = 10_000



def node_count_findings(nodes: int, profile_name: str, node_types: Sequence) -> List[Finding]:
    """More nodes than the cluster has of the types that fit the job (where the profile counts them)."""
    counts = [t.count for t in node_types]
    if not node_types or any(count is None for count in counts) or nodes <= sum(counts):
        return []
    have = ", ".join(f"{t.count} {t.name}" for t in node_types)
    return [Finding("error", "resources.nodes", f"{nodes} nodes is more than {profile_name} has of the node types that fit this "
                                         f"job ({have}); ask at most {sum(counts)}")]


def array_size(parameters) -> int:
    """The number of tasks of a sweep (the grid of its parameters), without building the grid."""
    return prod(len(values) for _, values in parameters)


def array_cap(max_array_size: Optional[int], max_jobs_per_user: Optional[int]) -> Optional[int]:
    """The cap the profile's own limits do not already state, or None (they are checked by the resolver)."""
    return DEFAULT_MAX_ARRAY_TASKS if not max_array_size and not max_jobs_per_user else None


def array_cap_finding(size: int, profile_name: str, cap: Optional[int]) -> List[Finding]:
    if cap is None or size <= cap:
        return []
    return [Finding("error", "array.parameters", f"{size} tasks are more than slurmkit's cap of {cap} for one array ({profile_name}'s "
                                          f"profile states no MaxArraySize or job limit); split the sweep")]


#: the variables whose value differs from one task of an array to the next.
TASK_VARIABLES = ("SLURM_ARRAY_TASK_ID", "SLURM_JOB_ID")


def shared_output_findings(outputs: Sequence[Tuple[int, str]], parameter_names: Sequence[str]) -> List[Finding]:
    """Array outputs whose destination is the same for every task: each task's files land on the
    last one's. ``outputs`` are ``(index, to)``. (A checkpoint gets a folder per task by itself.)"""
    names = "|".join(map(re.escape, (*TASK_VARIABLES, *parameter_names)))
    varies = re.compile(r"\$\{?(" + names + r")\b")
    found = []
    for index, to in outputs:
        if not varies.search(to):
            found.append(Finding("warning", f"stage.outputs.{index}.to",
                          f"{to!r} is the same for every task of the array: each task's files overwrite the last one's; "
                          f"put the task in it, e.g. {to.rstrip('/')}/$SLURM_ARRAY_TASK_ID"))
    return found


def spec_limit_findings(spec, profile, node_types: Sequence) -> List[Finding]:
    """What the spec asks past the cluster or past itself: node-local disk no node that fits
    the job has, a checkpoint interval longer than the job, an array throttle above its size."""
    return (tmp_findings(spec.resources.tmp_mb, profile, node_types) + checkpoint_interval_findings(spec)
            + throttle_findings(spec))


def tmp_findings(tmp_mb: Optional[int], profile, node_types: Sequence) -> List[Finding]:
    """``--tmp`` larger than the local disk of every node type that fits the job (where the
    profile states each one's disk; a site rule, rules.tmp_request, says it otherwise)."""
    disks = [t.local_disk.size_mib if t.local_disk else None for t in node_types]
    known = [size for size in disks if size is not None]
    if tmp_mb is None or not known or len(known) < len(disks) or profile.rules.tmp_request or tmp_mb <= max(known):
        return []
    from slurmkit.core.units import format_size

    largest = max(known)
    return [Finding("error", "resources.tmp", f"{format_size(tmp_mb)} of node-local disk is more than any {profile.name} node that "
                                       f"fits this job has (the largest: {format_size(largest)}); ask at most "
                                       f"{format_size(largest)}, or read the rest from scratch")]


def checkpoint_interval_findings(spec) -> List[Finding]:
    """A checkpoint copied back less often than the job lasts is copied back only at its end."""
    checkpoint = spec.stage.checkpoint if spec.stage else None
    if checkpoint is None or checkpoint.every_s <= spec.resources.time_s:
        return []
    from slurmkit.core.units import format_duration

    return [Finding("warning", "stage.checkpoint.every",
             f"{format_duration(checkpoint.every_s)} is longer than the job's time ({format_duration(spec.resources.time_s)}): "
             f"the checkpoint is copied back only when the job ends; choose an interval shorter than resources.time")]


def throttle_findings(spec) -> List[Finding]:
    """A throttle above the number of tasks limits nothing: a typo, or a sweep smaller than meant."""
    if spec.array is None or spec.array.throttle is None:
        return []
    size = array_size(spec.array.parameters)
    if spec.array.throttle <= size:
        return []
    return [Finding("warning", "array.throttle", f"{spec.array.throttle} at a time is more than the array's {size} tasks, so it "
                                          f"limits nothing; lower it or leave it out")]
