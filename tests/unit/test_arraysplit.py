"""A sweep above the site's largest array, cut into parts: sizes, slices, --array, the offset."""

from slurmkit.resolve.arraysplit import OFFSET_VARIABLE, part_sizes, split_plan, throttled
from tests.unit.test_resolve import job


def sweep_plan(points: int, throttle=None):
    array = {"parameters": {"x": [str(i) for i in range(points)]}}
    if throttle:
        array["throttle"] = throttle
    return job("generic", kind="array", array=array).plan


def test_2500_tasks_with_a_largest_array_of_1001_are_parts_of_1001_1001_498():
    assert part_sizes(2500, 1001) == [1001, 1001, 498]


def test_a_sweep_that_fits_or_has_no_known_limit_is_one_part():
    assert part_sizes(1001, 1001) == [1001] and part_sizes(5000, None) == [5000]


def test_each_part_lists_its_own_slice_of_the_grid_and_says_its_offset():
    parts = split_plan(sweep_plan(2500), 1001)
    assert [offset for offset, _ in parts] == [0, 1001, 2002]
    last = parts[-1][1]
    assert last.array.size == 498 and last.array.parameters == (("x", tuple(str(i) for i in range(2002, 2500))),)
    assert dict(last.directives)["--array"] == "0-497"
    assert dict(last.environment)[OFFSET_VARIABLE] == "2002"


def test_a_part_keeps_the_sweeps_throttle():
    parts = split_plan(sweep_plan(1500, throttle=4), 1001)
    assert [dict(p.directives)["--array"] for _, p in parts] == ["0-1000%4", "0-498%4"]
    assert throttled(parts[0][1])


def test_a_sweep_within_the_limit_is_left_as_it_is():
    plan = sweep_plan(10)
    assert split_plan(plan, 1001) == [(0, plan)] and not throttled(plan)


def test_a_part_renders_a_script_that_reads_its_own_values():
    from slurmkit.render.render import render

    text = render(split_plan(sweep_plan(2500), 1001)[1][1])
    assert "#SBATCH --array=0-1000\n" in text and text.split("xes=(")[1].startswith("1001 1002 ")
    assert f"{OFFSET_VARIABLE}=1001" in text or f"{OFFSET_VARIABLE}='1001'" in text
