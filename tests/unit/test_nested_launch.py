"""A launch.command that starts a launcher the kind already runs: each rank would start another
launcher (``accelerate launch ... --no_python accelerate launch train.py``). check says so in one
error and gives the program alone; a one-process kind run directly may still use srun itself."""

import pytest

from slurmkit.core.kinds import KINDS

from .test_resolve import job, only_error

#: the kinds that start one process per GPU, with GPUs they accept on narval
PER_GPU = [k.name for k in KINDS.values() if k.processes == "per GPU"]


def nested(kind: str, command: str, resources=None, **launch):
    return job("narval", resources or {"gpus": "a100:4"}, kind=kind, launch={"command": command, **launch})


@pytest.mark.parametrize("kind", PER_GPU)
@pytest.mark.parametrize("command, program", [
    ("torchrun --nproc_per_node=4 train.py --epochs 3", "python train.py --epochs 3"),
    ("python -m torch.distributed.run --nproc_per_node 4 train.py", "python train.py"),
    ("accelerate launch --num_processes 4 train.py --lr 0.1", "python train.py --lr 0.1"),
    ("accelerate-launch -m pkg.train", "python -m pkg.train"),
    ("python -m accelerate.commands.launch --no_python ./train --x", "./train --x"),
    ("srun --ntasks-per-node=4 python train.py", "python train.py"),
    ("mpirun -np 4 python train.py", "python train.py"),
    ("horovodrun -np 4 python train.py", "python train.py"),
    ("srun accelerate launch train.py", "python train.py"),
])
def test_a_launcher_in_the_command_of_a_kind_that_starts_the_processes_is_one_error(kind, command, program):
    error = only_error(nested(kind, command))
    assert error.field == "launch.command"
    assert "already starts" in error.message and f"'{program}'" in error.message, error.message


def test_a_launcher_in_a_one_process_kind_run_by_srun_is_an_error_too():
    error = only_error(job("narval", {}, kind="serial", launch={"command": "srun python x.py", "launcher": "srun"}))
    assert error.field == "launch.command" and "'python x.py'" in error.message


@pytest.mark.parametrize("kind", ["serial", "gpu"])
def test_a_one_process_kind_run_directly_may_start_its_own_srun_step(kind):
    r = job("narval", {"gpus": "a100:1"} if KINDS[kind].gpu_required else {}, kind=kind, launch={"command": "srun python x.py"})
    assert r.plan is not None and not [f for f in r.findings if f.field == "launch.command"], r.findings


def test_the_program_alone_is_accepted():
    for kind in PER_GPU:
        assert nested(kind, "python train.py").plan is not None, kind
