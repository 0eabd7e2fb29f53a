"""slurmkit import: sbatch scripts in every spelling into specs, and a note for every line."""

import pytest

from slurmkit import Job
from slurmkit.porting import import_script
from slurmkit.spec import spec_from_mapping
from slurmkit.units import parse_duration, parse_size

ALLIANCE_DDP = """#!/bin/bash
#SBATCH --nodes 1
#SBATCH --gres=gpu:2          # 2 GPUs per node
#SBATCH --tasks-per-node=2    # 1 process per GPU
#SBATCH --mem=8G
#SBATCH --time=0-03:00
#SBATCH --output=%N-%j.out
module load python
srun -N $SLURM_NNODES -n $SLURM_NNODES bash << EOF
virtualenv --no-download $SLURM_TMPDIR/env
source $SLURM_TMPDIR/env/bin/activate
pip install torch torchvision --no-index
EOF
export TORCH_NCCL_ASYNC_HANDLING=1
source $SLURM_TMPDIR/env/bin/activate
srun python pytorch-ddp-test.py --batch_size 256
"""


def test_the_alliance_ddp_recipe_imports_with_its_venv_and_launch():
    imported = import_script(ALLIANCE_DDP, name="ddp", profile="nibi")
    spec = imported.spec
    assert spec["resources"] == {"nodes": 1, "gpus": "2", "tasks_per_node": 2, "mem": "8G", "time": "0-03:00"}
    # The recipe's TORCH_NCCL_ASYNC_HANDLING is a typo PyTorch never reads: dropped, with a note.
    assert spec["environment"] == {"modules": ["python"], "venv": {"packages": ["torch", "torchvision"]}}
    assert spec["launch"] == {"command": "python pytorch-ddp-test.py --batch_size 256", "launcher": "srun"}
    assert spec["kind"] == "mpi" and imported.unmapped == ()
    assert [n.outcome for n in imported.notes if n.line == 7] == ["dropped"]
    spec_from_mapping(spec)  # a valid spec


@pytest.mark.parametrize("directives, expected", [
    ("#SBATCH --mem=4G\n#SBATCH -t 3:00:00\n", {"mem": "4G", "time": "3:00:00"}),
    ("#SBATCH --mem 4G\n#SBATCH --time 90\n", {"mem": "4G", "time": "90"}),
    ("#SBATCH -N2 -n 8 -c 4\n", {"nodes": 2, "cpus_per_task": 4, "tasks_per_node": 4, "time": "1h"}),
    ("#SBATCH --gres=gpu:v100l:2\n", {"gpus": "v100l:2", "time": "1h"}),
    ("#SBATCH --gpus-per-node=h100:4\n", {"gpus": "h100:4", "time": "1h"}),
    ("#SBATCH -N 2 --gpus=a100:8\n", {"nodes": 2, "gpus": "a100:4", "time": "1h"}),
])
def test_directives_in_every_spelling(directives, expected):
    spec = import_script("#!/bin/bash\n" + directives + "python a.py\n").spec
    assert spec["resources"] == expected


def test_lines_without_a_spec_field_are_kept_as_written_in_setup_each_with_a_note():
    imported = import_script("#!/bin/bash\n#SBATCH -t 10\ncd /somewhere\nexport X=$(date)\necho first\npython a.py\n")
    assert imported.spec["environment"]["setup"] == ["cd /somewhere", "export X=$(date)", "echo first"]
    assert {n.line: n.outcome for n in imported.notes if n.line in (3, 4, 5)} == {3: "kept", 4: "kept", 5: "kept"}
    assert "computed by the shell" in [n.reason for n in imported.notes if n.line == 4][0]
    assert imported.spec["launch"] == {"command": "python a.py"} and imported.unmapped == ()


def test_an_array_becomes_a_task_id_parameter_and_staging_is_recognised():
    script = ("#!/bin/bash\n#SBATCH --array=1-5:2%2 -t 1:00:00\ntar -xf data.tar.gz -C $SLURM_TMPDIR\n"
              "python run.py --case $SLURM_ARRAY_TASK_ID\ncp -r $SLURM_TMPDIR/out /scratch/me/out\n")
    spec = import_script(script).spec
    assert spec["array"] == {"parameters": {"task_id": ["1", "3", "5"]}, "throttle": 2}
    assert spec["launch"]["command"] == "python run.py --case $task_id"
    assert spec["stage"] == {"inputs": ["data.tar.gz"], "outputs": [{"from": "out", "to": "/scratch/me/out"}]}


def _resources(spec):
    res = spec["resources"]
    return {k: (parse_duration(v) if k == "time" else parse_size(v) if k in ("mem", "mem_per_cpu") else v) for k, v in res.items()}


@pytest.mark.parametrize("script", [
    ALLIANCE_DDP,
    "#!/bin/bash\n#SBATCH -A def-x -N 2 --ntasks-per-node=4 -c 2 --mem-per-cpu=1000M -t 2-00:00\nmodule load openmpi\nsrun ./app\n",
    "#!/bin/bash\n#SBATCH --gpus-per-node=h100:1 --cpus-per-task=8 --mem=32G --time=12:00:00\npython train.py\n",
    "ALLIANCE_TF_MULTIWORKER", "SHARCNET_COURSE", "ALLIANCE_ML_TUTORIAL",   # the doc and course scripts of test_retarget
])
def test_import_render_import_keeps_the_meaning_of_the_directives(script):
    profile = "nibi"
    if not script.startswith("#!"):   # written for the clusters of their day
        from . import test_retarget

        script, profile = getattr(test_retarget, script), "graham"
    first = import_script(script, name="rt", profile=profile).spec
    first.setdefault("account", "def-x")
    rendered = Job(**first).render()
    second = import_script(rendered, name="rt", profile=profile).spec
    assert _resources(second) == {**{"nodes": 1, "tasks_per_node": 1, "cpus_per_task": 1}, **_resources(first)}
