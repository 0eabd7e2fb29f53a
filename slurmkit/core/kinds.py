"""The job kinds, as data: one row per kind, and every question the code asks about a kind.

Code asks ``kind_of(spec).gpu_required``, never ``spec.kind == "gpu"``: a new kind is one row
here and at most one template (templates/<name>.sbatch.j2, or an existing one through
``template``). tests/unit/test_kinds.py fails where a kind's name is compared or listed
outside this module. Cheap to import (no yaml, no jinja): ``slurmkit --help`` reaches it.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from slurmkit.core.records import Record

#: What ``processes`` may say: how many processes a kind starts on each node.
ONE, PER_TASK, PER_GPU = "one", "per task", "per GPU"
#: The frameworks a kind may run, as messages spell them.
FRAMEWORK_LABELS = {"pytorch": "PyTorch", "tensorflow": "TensorFlow"}
#: The Python packages a job of a framework imports (top-level import names): a script named after
#: one (``torch.py``) is found first on Python's path, in place of the package.
FRAMEWORK_IMPORTS = {"pytorch": ("torch", "numpy"), "tensorflow": ("tensorflow", "keras", "numpy")}


class Kind(Record):
    """One job kind: what it starts, what it needs, what it may use.

    ``launchers``: the launchers it may use, the first its default. ``processes``: ONE, PER_TASK
    or PER_GPU. ``fills_whole_node``: what grows to fill a whole-node site's node when unset
    ("tasks", "threads" or ""). ``whole_node_advice``: which advice a whole-node site's refusal
    gives ("one process", "sweep", "threads" or "": the plain sum)."""

    name: str
    launchers: Tuple[str, ...]
    processes: str
    default_command: str = "python main.py"
    #: the template that formats its script (templates/<template>.sbatch.j2).
    template: str = ""
    #: it refuses to run without resources.gpus (gpus_example is then the count it suggests).
    gpu_required: bool = False
    #: GPUs per node the scaffold (`slurmkit new`) starts from (one that spreads over nodes starts from
    #: whole nodes: scaffold._first_gpu); 0: it does not ask for GPUs.
    gpus_example: int = 0
    #: one process per GPU (or task) that talk over NCCL, gloo or MPI.
    distributed: bool = False
    #: may spread its GPUs over several nodes (`slurmkit port` may split them over nodes).
    spreads_over_nodes: bool = False
    #: refuses more than one node.
    one_node_only: bool = False
    #: resources the scaffold (`slurmkit new`) starts from: (key, value) pairs.
    example_resources: Tuple[Tuple[str, int], ...] = ()
    #: the framework a job of this kind runs when launch.framework does not say.
    framework_default: str = "pytorch"
    #: it runs only its framework_default; the kind to use for the other framework.
    framework_only: bool = False
    other_framework_kind: str = ""
    #: under this framework one process drives every GPU (one task per node, launcher direct).
    single_process_framework: str = ""
    #: its ranks are MPI ranks: srun gets the profile's --mpi plugin, the profile picks its launcher.
    mpi_ranks: bool = False
    #: the rank count is the user's (domain decomposition): a part-filled whole node is a warning.
    rank_count_is_users: bool = False
    #: one node's worth of ranks is asked by count (--ntasks, memory per rank), so that SLURM may
    #: place them on one node or several (Advanced_MPI_scheduling: "the simplest way").
    ranks_by_count: bool = False
    fills_whole_node: str = ""
    whole_node_advice: str = ""
    #: threads per process: OMP_PLACES/OMP_PROC_BIND are set, one CPU per task is warned about.
    pins_threads: bool = False
    #: the profile's launch.env (fabric and NCCL settings) is exported.
    site_launch_env: bool = False
    #: PyTorch's NCCL process group aborts on an error (TORCH_NCCL_ASYNC_ERROR_HANDLING=1).
    torch_nccl_errors: bool = False
    #: the batch script finds a rendezvous (MASTER_ADDR/MASTER_PORT).
    rendezvous: bool = False
    #: RANK, LOCAL_RANK, WORLD_SIZE come from SLURM's task variables.
    ranks_from_slurm: bool = False
    #: each worker gets TF_CONFIG.
    tf_config: bool = False
    #: what each process sees by default (launch.gpu_view): "own" GPU or the "node"'s.
    gpu_view_default: str = "node"
    #: the framework picks each process's GPU itself, by local rank among the node's GPUs:
    #: launch.gpu_view: own would hide the GPUs it picks (lightning, accelerate).
    picks_its_gpu: bool = False
    #: sweeps array.parameters as a job array (the only kind that takes an array section).
    sweeps: bool = False
    #: runs a task file with GNU Parallel (the only kind that takes a tasks section).
    runs_task_file: bool = False
    #: what the kind sets for the user's program, as `slurmkit port` says it.
    sets_in_environment: str = ""
    #: MASTER_ADDR and MASTER_PORT are exported for the program, which reads them itself (Lightning, Accelerate).
    master_env: bool = False
    #: the program saves and requeues on SIGUSR1 before the limit (Lightning's auto-requeue: framework_kinds.py).
    requeues_on_signal: bool = False
    #: the program names its nodes and GPUs per node itself (Lightning's Trainer(num_nodes, devices)):
    #: a new shape of the job must be written there too.
    program_names_its_nodes: bool = False
    #: Accelerate's launch settings (launch.mixed_precision) go to the ranks as `accelerate launch`'s variables.
    launches_per_node: bool = False
    #: on one GPU its framework runs one process with no process group (Lightning, Accelerate): no
    #: communication to pay for, and the kind's other gifts (the requeue) still count.
    alone_on_one_gpu: bool = False
    #: the packages one of which its job needs (pip names): a venv that lists packages, but none of
    #: these and no requirements file, is warned about (the job would fail at once).
    needs_one_of: Tuple[str, ...] = ()
    #: variables its program needs on nodes without GPUs.
    cpu_environment: Tuple[Tuple[str, str], ...] = ()
    #: the Python packages its program imports whatever its framework (top-level import names;
    #: a distributed kind imports its framework's too: FRAMEWORK_IMPORTS).
    imports: Tuple[str, ...] = ()

    @property
    def one_process(self) -> bool:
        """It starts one process (a job's extra tasks help only under launcher: srun)."""
        return self.processes == ONE

    @property
    def default_launcher(self) -> str:
        return self.launchers[0]

    @property
    def script_template(self) -> str:
        return f"{self.template or self.name}.sbatch.j2"

    def framework(self, asked: Optional[str]) -> str:
        """The framework a job runs: the one it asks for, else the kind's."""
        return asked or self.framework_default

    def python_imports(self, asked: Optional[str]) -> Tuple[str, ...]:
        """The packages its Python program imports: its own, and a distributed kind's framework's."""
        return self.imports + (FRAMEWORK_IMPORTS[self.framework(asked)] if self.distributed else ())


_ROWS = (
    Kind("serial", ("direct", "srun"), ONE, whole_node_advice="one process"),
    Kind("threaded", ("direct", "srun"), PER_TASK, fills_whole_node="threads", whole_node_advice="threads",
         pins_threads=True, example_resources=(("cpus_per_task", 4),)),
    # direct: a program that starts its own processes over the job's tasks (charmrun, the driver of
    # a Ray or Dask cluster the set-up started) runs once, in the batch shell, as a script runs it
    Kind("mpi", ("srun", "mpirun", "direct"), PER_TASK, default_command="./my_mpi_program",
         example_resources=(("nodes", 1), ("tasks_per_node", 4)), mpi_ranks=True, rank_count_is_users=True,
         ranks_by_count=True, fills_whole_node="tasks", site_launch_env=True, imports=("mpi4py",)),
    Kind("gpu", ("direct", "srun"), ONE, default_command="python train.py", gpu_required=True, gpus_example=1, site_launch_env=True),
    Kind("array", ("direct", "srun"), ONE, default_command="python main.py --lr $lr", whole_node_advice="sweep", sweeps=True),
    # GNU Parallel on each node; several nodes: srun starts one per node
    Kind("many-tasks", ("direct",), PER_TASK, default_command="python main.py --seed {}", fills_whole_node="tasks", runs_task_file=True),
    # srun: one task per GPU, as ddp on one node; torchrun: its own ranks and rendezvous;
    # direct: one process drives every GPU (TensorFlow MirroredStrategy)
    Kind("multigpu", ("srun", "torchrun", "direct"), PER_GPU, default_command="python train.py", gpu_required=True, gpus_example=2,
         distributed=True, one_node_only=True, single_process_framework="tensorflow", site_launch_env=True, torch_nccl_errors=True,
         rendezvous=True, ranks_from_slurm=True),
    Kind("ddp", ("srun",), PER_GPU, default_command="python train.py", gpus_example=2, distributed=True, spreads_over_nodes=True,
         example_resources=(("nodes", 2),), framework_only=True, other_framework_kind="tf-multiworker", site_launch_env=True,
         torch_nccl_errors=True, rendezvous=True, ranks_from_slurm=True,
         sets_in_environment="MASTER_ADDR, MASTER_PORT, RANK, LOCAL_RANK and WORLD_SIZE"),
    Kind("tf-multiworker", ("srun",), PER_GPU, default_command="python train.py", gpus_example=2, distributed=True,
         spreads_over_nodes=True, example_resources=(("nodes", 2),), framework_default="tensorflow", framework_only=True,
         other_framework_kind="ddp", site_launch_env=True, rendezvous=True, tf_config=True, gpu_view_default="own",
         sets_in_environment="TF_CONFIG"),
    Kind("horovod", ("srun", "mpirun"), PER_GPU, default_command="python train.py", gpus_example=2, distributed=True,
         spreads_over_nodes=True, example_resources=(("nodes", 2),), mpi_ranks=True, site_launch_env=True,
         sets_in_environment="the ranks (mpirun or srun --mpi)", imports=("horovod",)),
    # One srun task per GPU; Lightning's SLURMEnvironment reads the ranks from SLURM itself (framework_kinds.py).
    Kind("lightning", ("srun",), PER_GPU, default_command="python train.py", gpus_example=2, distributed=True, spreads_over_nodes=True,
         example_resources=(("nodes", 2),), framework_only=True, other_framework_kind="tf-multiworker", site_launch_env=True,
         torch_nccl_errors=True, rendezvous=True, master_env=True, requeues_on_signal=True, program_names_its_nodes=True,
         picks_its_gpu=True, alone_on_one_gpu=True, needs_one_of=("lightning", "pytorch-lightning"),
         imports=("lightning", "pytorch_lightning"),
         sets_in_environment="MASTER_ADDR and MASTER_PORT (Lightning reads the ranks from SLURM)"),
    # One srun task per process, as ddp; Accelerate's settings in its ACCELERATE_* variables (framework_kinds.py).
    Kind("accelerate", ("accelerate",), PER_GPU, default_command="python train.py", gpus_example=2, distributed=True,
         spreads_over_nodes=True, example_resources=(("nodes", 2),), framework_only=True, other_framework_kind="tf-multiworker",
         site_launch_env=True, torch_nccl_errors=True, rendezvous=True, ranks_from_slurm=True, launches_per_node=True,
         picks_its_gpu=True, alone_on_one_gpu=True, cpu_environment=(("ACCELERATE_USE_CPU", "true"),), needs_one_of=("accelerate",),
         imports=("accelerate",),
         sets_in_environment="MASTER_ADDR, MASTER_PORT, RANK, LOCAL_RANK, WORLD_SIZE and accelerate launch's settings"),
)
#: the kind of a spec that names none.
DEFAULT_KIND = "serial"
#: name -> Kind, in the order `slurmkit new` and the schema list them.
KINDS: Dict[str, Kind] = {row.name: row for row in _ROWS}
KIND_NAMES: Tuple[str, ...] = tuple(KINDS)
#: the kinds that run one process per GPU (or per task) and talk over NCCL, gloo or MPI.
DISTRIBUTED_KINDS: Tuple[str, ...] = tuple(k.name for k in _ROWS if k.distributed)
#: the kinds that may spread their GPUs over several nodes.
MULTI_NODE_GPU_KINDS: Tuple[str, ...] = tuple(k.name for k in _ROWS if k.spreads_over_nodes)
#: the launchers each kind may use, the first being its default.
KIND_LAUNCHERS: Dict[str, Tuple[str, ...]] = {k.name: k.launchers for k in _ROWS}
#: Set by the batch script of some kinds only (resolve._environment, templates/distributed.sbatch.j2):
#: name -> those kinds, in the order messages name them. tests/unit/test_reads.py holds it to
#: what each kind's plan sets.
BATCH_SET_BY: Dict[str, Tuple[str, ...]] = {
    "MASTER_ADDR": ("ddp", "multigpu", "lightning", "accelerate"),
    "MASTER_PORT": ("ddp", "multigpu", "tf-multiworker", "lightning", "accelerate"),
    "OMP_PLACES": ("threaded",),      # for a compiled program (resolve._unpinned)
    "OMP_PROC_BIND": ("threaded",),
    "TF_NUM_INTRAOP_THREADS": ("tf-multiworker",),
    "TF_NUM_INTEROP_THREADS": ("tf-multiworker",),
    "TORCH_NCCL_ASYNC_ERROR_HANDLING": ("ddp", "multigpu", "lightning", "accelerate"),
    "PYTHONUNBUFFERED": ("ddp", "tf-multiworker", "horovod", "multigpu", "lightning", "accelerate"),
    "ACCELERATE_MIXED_PRECISION": ("accelerate",),
    "ACCELERATE_DYNAMO_BACKEND": ("accelerate",),
}


def kind_of(spec) -> Kind:
    """The row of a JobSpec's kind (spec.py has already refused a name not in KINDS)."""
    return KINDS[spec.kind]


def named(names: Tuple[str, ...]) -> str:
    """``'a', 'b' or 'c'``: kinds named in a message."""
    quoted = [f"'{n}'" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def multi_node_kinds(framework: str) -> Tuple[str, ...]:
    """The kinds that spread a ``framework``'s GPUs over several nodes, as a message offers them."""
    return tuple(k.name for k in _ROWS if k.spreads_over_nodes and (k.framework_default == framework or not k.framework_only))


def first_kind(**wanted) -> Kind:
    """The first kind whose attributes are ``wanted``: the kind a message suggests by what it does."""
    return next(k for k in _ROWS if all(getattr(k, name) == value for name, value in wanted.items()))
