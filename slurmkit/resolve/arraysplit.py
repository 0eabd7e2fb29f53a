"""A sweep larger than the site's largest array, as linked arrays that slurmkit follows as one.

SLURM refuses an array task id at or above MaxArraySize, so a sweep of N points on a cluster
whose MaxArraySize is M goes as ceil(N / M) arrays ("parts"), each with ids 0..M-1 (the last
fewer). Part k holds points k*M .. k*M+M-1 of the grid: its script lists only its own slice of
each parameter, so task i of a part reads element i as any sweep's does, and the point's number
in the whole sweep is ``$SLURMKIT_SWEEP_OFFSET + $SLURM_ARRAY_TASK_ID``.

The parts are submitted together, each independent: no dependency holds a part back, because a
dependent array's pending tasks count against the per-user job limit (MaxSubmit) as much as a
queued one's, so chaining would not let a sweep past that limit (the resolver refuses one that
is above it) and would only leave nodes idle. With a throttle (``%T``) each part after the first
starts after the one before ends (afterany), so that no more than T tasks of the sweep run at a
time, as the user asked.
"""

from typing import List, Optional, Tuple

from slurmkit.core.plan import Plan

#: the variable each part's script exports: the sweep index of the part's task 0.
OFFSET_VARIABLE = "SLURMKIT_SWEEP_OFFSET"


def part_sizes(size: int, most: Optional[int]) -> List[int]:
    """The tasks of each part: one part when ``most`` (the site's MaxArraySize) is unknown or not exceeded."""
    if not most or size <= most:
        return [size]
    return [min(most, size - offset) for offset in range(0, size, most)]


def even_part_sizes(size: int, most: Optional[int]) -> List[int]:
    """As many parts as ``part_sizes`` makes, their sizes as even as it allows (25 under 10:
    9, 9, 7, not 10, 10, 5). For function arrays: submitit submits a part of one call as a plain
    job, not an array, and ``part_sizes`` leaves one wherever ``size`` is one past a multiple of
    ``most`` (1001 under 1000); even parts leave one only where ``most`` is tiny."""
    parts = len(part_sizes(size, most))
    return part_sizes(size, -(-size // parts))


def split_plan(plan: Plan, most: Optional[int]) -> List[Tuple[int, Plan]]:
    """The plan's parts as (offset, plan of that part), in sweep order; the plan itself where it
    fits in one array (or names its own task ids, which the resolver has bounded already)."""
    array = plan.array
    if array is None or array.ids or len(part_sizes(array.size, most)) == 1:
        return [(0, plan)]
    parts, offset = [], 0
    for size in part_sizes(array.size, most):
        sliced = tuple((name, values[offset:offset + size]) for name, values in array.parameters)
        directives = tuple((flag, _array_value(value, size) if flag == "--array" else value) for flag, value in plan.directives)
        environment = ((OFFSET_VARIABLE, str(offset)), *plan.environment)
        parts.append((offset, plan._replace(array=array._replace(parameters=sliced, size=size), directives=directives,
                                            environment=environment)))
        offset += size
    return parts


def _array_value(value: str, size: int) -> str:
    """``0-2499%10`` for a part of ``size`` tasks: ``0-999%10`` (its throttle kept)."""
    _, percent, throttle = value.partition("%")
    return f"0-{size - 1}" + (percent + throttle)


def throttled(plan: Plan) -> bool:
    """The sweep's --array has a throttle: its parts then run one after another."""
    return any(flag == "--array" and "%" in value for flag, value in plan.directives)
