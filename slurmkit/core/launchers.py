"""The launchers, as data: a name and a function from what resolve has at hand to the argv prefix.

In the shape ReFrame's launchers take (a registered name, a command builder): resolve looks a
launcher up by the name the spec or the kind's default gives and asks it for its words, so a
new launcher is one function and one entry in LAUNCHERS. Counts are read from SLURM at run
time (from_slurm), so that a hand edit of one #SBATCH line changes every use of it.
"""

from __future__ import annotations

import re
import shlex
from typing import Callable, Dict, Optional, Protocol, Sequence, Tuple, Union

from slurmkit.core.kinds import Kind
from slurmkit.core.plan import FromSlurm
from slurmkit.core.records import Record

#: A word resolve puts in the script (a launch prefix's, an exported value): a literal str, quoted
#: when printed, or a FromSlurm that reads its count from SLURM at run time (from_slurm).
ScriptWord = Union[str, FromSlurm]

#: mpirun's binding and mapping for each MPI flavour: flags, and variables the launch needs.
#: ``{cpus_per_task}`` is filled in; each prints the binding it made. Intel MPI's and MVAPICH2's
#: hydra read the ranks' placement from SLURM's variables ("how many nodes were allocated, which
#: nodes, and the number of processes per tasks": Intel MPI's guide, Job Schedulers Support), so
#: they get no -ppn, which would have to guess a count that --ntasks alone leaves unset.
#: No transport overrides (``-mca pml``/``btl``) for any kind: the site's MPI module picks the
#: transport for its fabric (UCX on InfiniBand), and ``-mca pml ob1`` would turn UCX off.
MPIRUN_BINDING: Dict[str, Tuple[Tuple[str, ...], Dict[str, str]]] = {
    "openmpi": (("--bind-to", "core", "--map-by", "slot:PE={cpus_per_task}", "--report-bindings"), {}),
    "intelmpi": ((), {"I_MPI_PIN": "1", "I_MPI_PIN_DOMAIN": "omp", "I_MPI_DEBUG": "4"}),
    "mvapich2": ((), {"MV2_ENABLE_AFFINITY": "1", "MV2_CPU_BINDING_POLICY": "hybrid",
                      "MV2_HYBRID_BINDING_POLICY": "linear", "MV2_THREADS_PER_PROCESS": "{cpus_per_task}",
                      "MV2_SHOW_CPU_BINDING": "1"}),
}
#: The counts the #SBATCH header holds, as the script body reads them back from SLURM at run
#: time: the variable sbatch sets from that directive, and what the count is when the directive
#: is gone (sbatch's own default), so that `set -u` never meets an unset one. Checked on the
#: local cluster (Slurm 22.05): SLURM_CPUS_PER_TASK and SLURM_NTASKS_PER_NODE are set in the
#: batch step only when their directive is given, SLURM_NTASKS only when --ntasks or
#: --ntasks-per-node is (without them a job has one task per node); SLURM_NNODES always is.
SLURM_COUNTS = {
    "cpus_per_task": ("SLURM_CPUS_PER_TASK", "1"),
    "tasks_per_node": ("SLURM_NTASKS_PER_NODE", "1"),
    "ntasks": ("SLURM_NTASKS", "$SLURM_NNODES"),
}
_COUNT_FIELD = re.compile(r"\{(" + "|".join(SLURM_COUNTS) + r")\}")
#: The job's cores on one node as SLURM counts them when the job runs (CPUs per task x tasks per
#: node): the CPUs of a step of one task per node (staging, a per-node virtualenv), which srun
#: no longer passes on by itself since Slurm 22.05, and the extractors' threads. Inside that
#: step, started with --ntasks-per-node=1 --cpus-per-task=N, the same word gives N, since srun
#: sets SLURM_NTASKS_PER_NODE=1 and SLURM_CPUS_PER_TASK=N there ("only set if the option is
#: specified", srun(1); measured on the local cluster, Slurm 22.05): one word for both places.
NODE_CORES = FromSlurm('"$((${SLURM_CPUS_PER_TASK:-1} * ${SLURM_NTASKS_PER_NODE:-1}))"')


def from_slurm(template: str) -> ScriptWord:
    """``template`` with its ``{cpus_per_task}``, ``{tasks_per_node}`` and ``{ntasks}`` read from
    SLURM's variables at run time, so that a hand edit of one #SBATCH line changes every use of
    it; a template without them stays a literal word."""
    parts = _COUNT_FIELD.split(template)
    if len(parts) == 1:
        return template
    text = ""
    for index, part in enumerate(parts):
        if index % 2:
            variable, default = SLURM_COUNTS[part]
            text += '"${' + variable + ":-" + default + '}"'
        elif part:
            text += shlex.quote(part)
    return FromSlurm(text)


#: what ``accelerate launch --mixed_precision`` takes (launch.mixed_precision).
MIXED_PRECISIONS = ("no", "fp16", "bf16")

class _MpiSettings(Protocol):
    @property
    def flavour(self) -> Optional[str]: ...

    @property
    def srun_mpi(self) -> Optional[str]: ...

    @property
    def bind_flags(self) -> Tuple[str, ...]: ...


class _LaunchSettings(Protocol):
    @property
    def mpi(self) -> _MpiSettings: ...


class LaunchProfile(Protocol):
    """The part of a site profile the launchers read (``launch.mpi``). The profile's own class,
    sites.profiles.SiteProfile, lives a layer above core, so core names only what it reads;
    a SiteProfile is one (properties: its record fields are read-only)."""

    @property
    def launch(self) -> _LaunchSettings: ...


#: The MPI a module loads, by the module's name (the Alliance stacks' MPI families).
MPI_MODULES = {"openmpi": "openmpi", "intelmpi": "intelmpi", "impi": "intelmpi", "mvapich2": "mvapich2"}


def site_mpi_flavour(profile: LaunchProfile) -> str:
    """The MPI the site loads unless a job loads another (its profile's, Open MPI when unknown)."""
    return profile.launch.mpi.flavour or "openmpi"


def mpi_flavour(modules: Sequence[str], profile: LaunchProfile) -> str:
    """The MPI whose mpirun the job runs: the last MPI module the job loads, else the site's.
    Why the modules decide: a job loading intelmpi runs Intel MPI's mpirun, which stops on an
    argument it does not know, so Open MPI's --map-by or --report-bindings would end the job
    before any rank starts."""
    loaded = [MPI_MODULES[name] for name in (m.split("/")[0].lower() for m in modules) if name in MPI_MODULES]
    return loaded[-1] if loaded else site_mpi_flavour(profile)


def mpirun_binding(flavour: str) -> Tuple[Tuple[str, ...], Dict[str, str]]:
    """The binding of MPI ``flavour`` (MPIRUN_BINDING): flags, and the variables they need."""
    return MPIRUN_BINDING[flavour]


class LaunchContext(Record):
    """What a launcher builds its words from."""

    kind: Kind
    profile: LaunchProfile
    mpi: str                                    # the MPI flavour the job loads (mpi_flavour)


def _direct(at: LaunchContext) -> Tuple[ScriptWord, ...]:
    return ()


def _torchrun(at: LaunchContext) -> Tuple[ScriptWord, ...]:
    # --no-python: the command runs as written (python, a wrapper, -m module...), each rank inside _sk_task.
    return ("torchrun", "--standalone", from_slurm("--nproc-per-node={tasks_per_node}"), "--no-python")


def _srun(at: LaunchContext) -> Tuple[ScriptWord, ...]:
    mpi = at.profile.launch.mpi.srun_mpi
    # Since Slurm 22.05 srun no longer inherits --cpus-per-task from the job: say it again,
    # always, so that a hand-edited #SBATCH --cpus-per-task reaches the tasks too.
    return ("srun", *((f"--mpi={mpi}",) if at.kind.mpi_ranks and mpi else ()), from_slurm("--cpus-per-task={cpus_per_task}"))


def _mpirun(at: LaunchContext) -> Tuple[ScriptWord, ...]:
    """mpirun with the binding of the MPI the job loads (MPIRUN_BINDING), horovod and mpi alike;
    the profile's own bind_flags are its MPI's, so they apply only when the job runs that MPI."""
    site_flags = at.profile.launch.mpi.bind_flags if at.mpi == site_mpi_flavour(at.profile) else ()
    flags = site_flags or mpirun_binding(at.mpi)[0]
    return ("mpirun", "-np", from_slurm("{ntasks}"), *(from_slurm(flag) for flag in flags))


def _accelerate(at: LaunchContext) -> Tuple[ScriptWord, ...]:
    """One srun task per process, as the srun launcher: the ranks get their own cores and the
    torch.distributed variables, and Accelerate needs no `accelerate launch` under them."""
    return _srun(at)


class Launcher(Record):
    """A launcher slurmkit runs: what resolve asks of it, instead of testing its name."""

    name: str                                   # as a spec names it (launch.launcher)
    build: Callable[[LaunchContext], Tuple[ScriptWord, ...]]
    spelled: str                                # as a message names the command
    starts_processes: bool = True               # False: the program is the batch step's own process
    starts_mpi_ranks: bool = False              # the MPI library places the ranks: its flavour's binding variables apply
    leaves_ranks_unbound: bool = False          # its ranks get no CPU binding of their own: the script's per-rank wrapper binds them
    runs_a_copy_per_task: bool = False          # the command itself runs once per task (srun, mpirun), not once per node or job
    #: Where a process finds its place on its node (0, 1, ... on every node), for GPU binding:
    #: srun's SLURM_LOCALID ("node local task ID", srun(1)); torchrun's and Accelerate's
    #: LOCAL_RANK (their docs); "" for mpirun, whose MPI flavour sets it (MPI_LOCAL_RANK).
    local_rank_variable: str = ""

    def words(self, kind: Kind, profile: LaunchProfile, mpi: str) -> Tuple[ScriptWord, ...]:
        """The launch prefix for a job of ``kind`` on ``profile`` that loads MPI flavour ``mpi``."""
        return self.build(LaunchContext(kind, profile, mpi))


#: launcher name -> the launcher; a spec's launch.launcher is one of these names.
LAUNCHERS: Dict[str, Launcher] = {launcher.name: launcher for launcher in (
    Launcher("direct", _direct, "direct", starts_processes=False),
    Launcher("srun", _srun, "srun", runs_a_copy_per_task=True, local_rank_variable="SLURM_LOCALID"),
    Launcher("mpirun", _mpirun, "mpirun", starts_mpi_ranks=True, runs_a_copy_per_task=True),
    Launcher("torchrun", _torchrun, "torchrun", leaves_ranks_unbound=True, local_rank_variable="LOCAL_RANK"),
    Launcher("accelerate", _accelerate, "srun", runs_a_copy_per_task=True, local_rank_variable="SLURM_LOCALID"),
)}
#: Under mpirun, each MPI flavour's variable for a rank's place on its node: Open MPI's
#: OMPI_COMM_WORLD_LOCAL_RANK ("the relative rank of this process on this node",
#: https://docs.open-mpi.org/en/v5.0.x/tuning-apps/environment-var.html). SLURM_LOCALID is the
#: batch step's there (0 for every rank), so it must not be used.
MPI_LOCAL_RANK = {"openmpi": "OMPI_COMM_WORLD_LOCAL_RANK"}
