"""The launchers, as data: a name and a function from what resolve has at hand to the argv prefix.

In the shape ReFrame's launchers take (a registered name, a command builder): resolve looks a
launcher up by the name the spec or the kind's default gives and asks it for its words, so a
new launcher is one function and one entry in LAUNCHERS. Counts are read from SLURM at run
time (resolve.from_slurm), so that a hand edit of one #SBATCH line changes every use of it.
"""

from __future__ import annotations

from typing import Callable, Dict, Tuple

from slurmkit.core.records import Record


class LaunchContext(Record):
    """What a launcher builds its words from."""

    kind: object        # kinds.Kind
    profile: object     # profiles.SiteProfile


def _direct(at: LaunchContext) -> Tuple[object, ...]:
    return ()


def _torchrun(at: LaunchContext) -> Tuple[object, ...]:
    from slurmkit.resolve.resolve import from_slurm
    # --no-python: the command runs as written (python, a wrapper, -m module...), each rank inside _sk_task.
    return ("torchrun", "--standalone", from_slurm("--nproc-per-node={tasks_per_node}"), "--no-python")


def _srun(at: LaunchContext) -> Tuple[object, ...]:
    from slurmkit.resolve.resolve import from_slurm
    mpi = at.profile.launch.mpi.srun_mpi
    # Since Slurm 22.05 srun no longer inherits --cpus-per-task from the job: say it again,
    # always, so that a hand-edited #SBATCH --cpus-per-task reaches the tasks too.
    return ("srun", *((f"--mpi={mpi}",) if at.kind.mpi_ranks and mpi else ()), from_slurm("--cpus-per-task={cpus_per_task}"))


def _mpirun(at: LaunchContext) -> Tuple[object, ...]:
    """mpirun with the binding of the profile's MPI flavour (resolve.MPIRUN_BINDING), horovod and mpi alike."""
    from slurmkit.resolve.resolve import _mpirun_binding, from_slurm
    flags = at.profile.launch.mpi.bind_flags or _mpirun_binding(at.profile)[0]
    return ("mpirun", "-np", from_slurm("{ntasks}"), *(from_slurm(flag) for flag in flags))


def _accelerate(at: LaunchContext) -> Tuple[object, ...]:
    """srun starts one task per node; each runs the node's `accelerate launch` (DistributedPlan.node_launcher,
    templates/distributed.sbatch.j2), inside the task so that its SLURM_NODEID is that node's."""
    from slurmkit.core.plan import FromSlurm
    from slurmkit.resolve.resolve import NODE_CORES
    return ("srun", FromSlurm('--nodes="$SLURM_NNODES"'), FromSlurm('--ntasks="$SLURM_NNODES"'), "--ntasks-per-node=1",
            FromSlurm("--cpus-per-task=" + NODE_CORES.text), "bash", "-c", '_sk_node_launch "$@"', "_sk_node_launch")


#: launcher name -> its argv builder; spec.LAUNCHERS is the names a spec may give.
LAUNCHERS: Dict[str, Callable[[LaunchContext], Tuple[object, ...]]] = {
    "direct": _direct,
    "srun": _srun,
    "mpirun": _mpirun,
    "torchrun": _torchrun,
    "accelerate": _accelerate,
}


def launch_words(name: str, kind, profile) -> Tuple[object, ...]:
    """The launch prefix of launcher ``name`` for a job of ``kind`` on ``profile``."""
    return LAUNCHERS[name](LaunchContext(kind, profile))
