"""array.indices: an array whose tasks keep SLURM's own ids (--array=1-5, 1-9:2), so a program
that reads $SLURM_ARRAY_TASK_ID itself sees what it saw; read, rendered and watched by them."""

import pytest

from slurmkit.core.array_ids import array_ids
from slurmkit.core.errors import SpecError
from slurmkit.port.porting import import_script
from slurmkit.render.render import render
from slurmkit.resolve.resolve import resolve
from slurmkit.sites.profiles import load_profile
from slurmkit.slurm.monitor import wanted_ids
from slurmkit.slurm.registry import Submission, array_tasks
from slurmkit.spec.spec import spec_from_mapping


def sweep(indices, values=("a", "b", "c", "d", "e"), throttle=None):
    array = {"parameters": {"x": list(values)}, "indices": indices}
    if throttle:
        array["throttle"] = throttle
    return {"name": "s", "kind": "array", "resources": {"time": "1h"}, "launch": {"command": "./run $x"}, "array": array}


@pytest.mark.parametrize("text, ids", [("1-5", (1, 2, 3, 4, 5)), ("1-9:2", (1, 3, 5, 7, 9)), ("0,2,4-5", (0, 2, 4, 5)),
                                       ("7", (7,))])
def test_an_index_list_names_slurms_task_ids(text, ids):
    assert array_ids(text) == ids


@pytest.mark.parametrize("indices, message", [
    ("1-4", "names 4 task ids and the grid has 5 points"),
    ("5-1", "runs backwards or has step 0"),
    ("1-9:0", "runs backwards or has step 0"),
    ("1-5%2", "a throttle goes in array.throttle"),
    ("1-3,3-4", "names a task id twice or out of order"),
    ("a-b", "is not FIRST, FIRST-LAST or FIRST-LAST:STEP"),
])
def test_bad_indices_are_one_line_naming_the_field(indices, message):
    with pytest.raises(SpecError) as error:
        spec_from_mapping(sweep(indices))
    assert "array.indices" in str(error.value) and message in str(error.value) and "\n" not in str(error.value)


def rendered(spec, profile="narval"):
    resolution = resolve(spec_from_mapping(spec), load_profile(profile))
    assert resolution.plan is not None, resolution.errors
    return render(resolution.plan)


def test_the_array_line_keeps_the_ids_and_the_throttle_and_each_id_looks_up_its_point():
    script = rendered(sweep("1-9:2", throttle=2))
    assert "#SBATCH --array=1-9:2%2\n" in script
    assert "xes=([1]=a [3]=b [5]=c [7]=d [9]=e)\n" in script


def test_without_indices_the_array_is_numbered_from_0_as_before():
    spec = sweep(None)
    del spec["array"]["indices"]
    script = rendered(spec)
    assert "#SBATCH --array=0-4\n" in script and "xes=(a b c d e)\n" in script


def test_an_id_at_the_profiles_largest_array_size_is_refused():
    site = load_profile("narval")
    site = site._replace(scheduling=site.scheduling._replace(max_array_size=1000))   # SLURM's MaxArraySize, stated
    assert resolve(spec_from_mapping(sweep("995-999")), site).plan is not None
    resolution = resolve(spec_from_mapping(sweep("996-1000")), site)
    assert resolution.plan is None
    assert any(f.field == "array.indices" and "SLURM refuses" in f.message for f in resolution.errors)


def test_the_monitor_asks_for_the_tasks_by_their_ids():
    record = Submission(job_id="77", name="s", folder="/tmp", profile="narval", submitted="now", array_size=3, array_ids="1-5:2")
    assert wanted_ids(["77"], {"77": array_tasks(record)}) == ["77_1", "77_3", "77_5"]
    plain = record._replace(array_ids=None)
    assert wanted_ids(["77"], {"77": array_tasks(plain)}) == ["77_0", "77_1", "77_2"]


def test_a_sweep_handle_watches_the_tasks_slurm_numbered():
    from slurmkit.slurm.submit import SweepHandle

    assert [t.job_id for t in SweepHandle("/tmp", "77", 3, (2, 4, 6)).tasks] == ["77_2", "77_4", "77_6"]
    assert [t.job_id for t in SweepHandle("/tmp", "77", 2).tasks] == ["77_0", "77_1"]


@pytest.mark.parametrize("array, indices", [("1-5", "1-5"), ("1-9:2%4", "1-9:2"), ("0-4", None), ("3", "3")])
def test_import_keeps_slurms_ids_where_they_are_not_0_to_n(array, indices):
    spec = import_script(f"#!/bin/bash\n#SBATCH --time=1:00:00 --array={array}\npython prog.py\n", profile="narval").spec
    assert spec["array"].get("indices") == indices
    spec_from_mapping(spec)
