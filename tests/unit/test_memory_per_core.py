"""Memory asked per core (``--mem-per-cpu``, ``mem_per_cpu``) in a GPU job that names no cores per
task: the job's cores come from the site's cores per GPU, which differ from site to site and from
the one core SLURM gave each task of the old script. Import and port keep the memory the job had,
per node, and say so: a job's memory never changes many times over unsaid."""

import copy

import pytest

from slurmkit.port.porting import import_script, imported_text
from slurmkit.port.retarget import choose_target, port_spec
from slurmkit.resolve.resolve import resolve
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

HEAD = "#!/bin/bash\n#SBATCH --account=def-x\n#SBATCH --time=1:00:00\n"


def rendered_memory(spec, profile):
    """(--mem, --mem-per-cpu, --cpus-per-task) of the rendered job."""
    directives = dict(resolve(spec_from_mapping(spec), load_profile(profile)).plan.directives)
    return directives.get("--mem"), directives.get("--mem-per-cpu"), directives.get("--cpus-per-task")


@pytest.mark.parametrize("profile", ["graham", "narval"])
@pytest.mark.parametrize("tasks, expected", [("", "8G"), ("#SBATCH --ntasks-per-node=2\n#SBATCH --gres=gpu:2\n", "16G")])
def test_a_gpu_script_with_memory_per_core_and_one_core_keeps_its_memory(profile, tasks, expected):
    script = HEAD + "#SBATCH --gres=gpu:1\n" * (not tasks) + tasks + "#SBATCH --mem-per-cpu=8G\npython train.py\n"
    imported = import_script(script, name="job", profile=profile)
    assert "mem_per_cpu" not in imported.spec["resources"]
    assert imported.spec["resources"]["mem"] == expected
    mem, per_core, cores = rendered_memory(imported.spec, profile)
    assert (mem, per_core) == (expected, None) and int(cores) > 1   # the site's cores per GPU, the same memory
    note = next(n for n in imported.notes if "--mem-per-cpu" in n.text)
    assert f"mem: {expected}" in note.reason and "one core" in note.reason
    assert f"mem: {expected}: " in imported_text(imported, "job.sh")


@pytest.mark.parametrize("script", ["#SBATCH --gres=gpu:1\n#SBATCH --cpus-per-task=6\n", "#SBATCH --cpus-per-task=6\n"])
def test_memory_per_core_stays_where_the_script_named_its_cores_or_has_no_gpu(script):
    imported = import_script(HEAD + script + "#SBATCH --mem-per-cpu=8G\npython train.py\n", name="job", profile="narval")
    assert imported.spec["resources"]["mem_per_cpu"] == "8G" and "mem" not in imported.spec["resources"]


def port(data, to):
    source = load_profile(data["profile"])
    return port_spec(copy.deepcopy(data), spec_from_mapping(data, source="job.yaml"), source, choose_target(source, to, load_profile))


GPU_PER_CORE = {"name": "train", "profile": "graham", "account": "def-x", "kind": "gpu",
                "resources": {"gpus": "1", "mem_per_cpu": "8G", "time": "1h"}, "launch": "python train.py"}


@pytest.mark.parametrize("to, cores", [("narval", 12), ("nibi", 14)])
def test_a_spec_with_memory_per_core_ported_to_another_bundle_of_cores_keeps_its_memory_and_says_so(to, cores):
    before = rendered_memory(GPU_PER_CORE, "graham")
    assert before == (None, "8G", "16")
    ported = port(GPU_PER_CORE, to)
    assert ported.spec["resources"]["mem"] == "128G" and "mem_per_cpu" not in ported.spec["resources"]
    mem, per_core, rendered_cores = rendered_memory(ported.spec, to)
    assert (mem, per_core, rendered_cores) == ("128G", None, str(cores))
    change = {c.field: c for c in ported.changes}
    assert (change["resources.mem_per_cpu"].old, change["resources.mem_per_cpu"].new) == ("8G", None)
    assert f"it gets {cores}, which would make it {8 * cores}G" in change["resources.mem_per_cpu"].why
    assert "graham" in change["resources.mem"].why


def test_memory_per_core_with_the_same_cores_on_the_target_is_left_as_it_is():
    data = dict(GPU_PER_CORE, resources={**GPU_PER_CORE["resources"], "cpus_per_task": 6})
    ported = port(data, "narval")
    assert ported.spec["resources"]["mem_per_cpu"] == "8G"
    assert not [c for c in ported.changes if c.field.startswith("resources.mem")]
