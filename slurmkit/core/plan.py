"""The resolved plan: every decision made, as plain frozen data for the templates to format.

resolve() builds it; render() formats it. Nothing here decides anything, so a template never
needs logic beyond loops and "is this set".

slurmkit's plain data are tuple records (slurmkit/core/records.py: written like typing.NamedTuple,
built for a tenth of its cost) rather than frozen dataclasses: creating a dataclass costs
about 1.3 ms at import (its methods are generated with exec), and with ~40 of them `slurmkit
render` spent a quarter of its time defining classes (bench/startup.py: 1.45x the import floor
with dataclasses, 1.15-1.2x with NamedTuple at the time).
"""

from __future__ import annotations

from typing import Optional, Tuple

from slurmkit.core.records import Record
from slurmkit.core.version import __version__


class FromSlurm(Record):
    """A word whose count SLURM supplies at run time (``--cpus-per-task="${SLURM_CPUS_PER_TASK:-1}"``),
    so that a hand edit of one #SBATCH line keeps the script consistent. ``text`` is the whole
    shell word, quoted already (resolve.from_slurm makes it); templates print it as it is."""

    text: str

    def __str__(self) -> str:
        return self.text


class VenvPlan(Record):
    """Create (or reuse) a virtualenv and install into it."""

    path: str                          # a shell word: $VAR references expand (e.g. $SLURM_TMPDIR/env)
    create: Tuple[str, ...]            # argv that creates it, without the path
    pip_options: Tuple[str, ...]       # e.g. ("--no-index",) where compute nodes have no internet
    requirements: Optional[str] = None
    packages: Tuple[str, ...] = ()
    reuse_existing: bool = False       # a lasting env: create only if missing
    upgrade_pip: bool = False          # the site's wheelhouse has a newer pip (Alliance recipe)
    nodes: int = 1                     # per_node: made on each of these nodes at once (srun)
    prebuilt_key: str = ""             # set: built on the login node (slurmkit env build), the job only activates it
    build_command: str = ""            # the command that builds it, for the line the job prints when it is missing
    build_source: str = ""             # the page that asks for envs built on the login node

    @property
    def per_node(self) -> bool:
        """An env on several nodes' local disks (a job-local one, or a path in $SLURM_TMPDIR) is made on each."""
        local = not self.reuse_existing or self.path.startswith(("$SLURM_TMPDIR", "${SLURM_TMPDIR}"))
        return self.nodes > 1 and local


class StageStep(Record):
    """One input brought into $SLURM_TMPDIR. Paths are shell words ($NAME expands, $$ is a $)."""

    action: str      # copy (into target) | copy-as (becomes target) | extract | extract-shards
    #                  | mount-image (copied, then mounted) | extract-image (copied, then unsquashfs)
    source: str
    target: str
    tar_options: Tuple[str, ...] = ()   # how tar reads this archive (-z, -J, --zstd)


class StagePlan(Record):
    inputs: Tuple[StageStep, ...] = ()
    per_node: bool = False              # several nodes: stage in once on each
    nodes: int = 1
    parallel: object = "1"              # shards extracted at once: "1", or the node's cores (a FromSlurm word)
    outputs: Tuple[Tuple[str, str], ...] = ()      # ($SLURM_TMPDIR/source, destination)
    checkpoint: Optional[Tuple[str, str, int]] = None  # (source, destination, every seconds)
    lead_s: int = 0                     # USR1 this long before the time limit; 0: nothing to save (no traps)
    stop_s: int = 0                     # after USR1, the payload's time to end after TERM before it is killed
    exit_stop_s: int = 0                # the same on any other exit (SLURM's KILL follows its TERM by KillWait)
    output_folders: Tuple[str, ...] = ()   # made before the payload, for it to write its outputs into (shell words)
    tmpdir_words: str = "the node-local disk"   # what $SLURM_TMPDIR is on the site (its profile says)
    tmpdir_source: str = ""                     # the page that says so


class ChainPlan(Record):
    """A run longer than one job: ``links`` jobs, each after the previous one ends (afterany).

    Each link resumes from the saved checkpoint; the first whose payload exits 0 leaves
    ``marker`` in the saved checkpoint, and the links after it end at once."""

    links: int
    link_time_s: int
    marker: str          # a shell word


class ArrayPlan(Record):
    """A sweep: point i of the grid of ``parameters`` for array task i."""

    parameters: Tuple[Tuple[str, Tuple[str, ...]], ...]  # (name, value for each task)
    size: int
    ids: Tuple[int, ...] = ()     # SLURM's task id of each point (array.indices); () for 0..size-1
    indices: Optional[str] = None  # those ids as --array writes them
    lists: Tuple[str, ...] = ()    # each parameter's bash array (``lrs`` for ``lr``): array_names.py
    exports: Tuple[bool, ...] = () # each parameter: exported, as the command reads it from its environment

    @property
    def columns(self) -> Tuple[Tuple[str, Tuple[Tuple[int, str], ...]], ...]:
        """Each parameter's (task id, value) pairs, for a lookup by $SLURM_ARRAY_TASK_ID."""
        ids = self.ids or tuple(range(self.size))
        return tuple((name, tuple(zip(ids, values))) for name, values in self.parameters)

    @property
    def variables(self) -> Tuple[Tuple[str, str, bool, Tuple[str, ...], Tuple[Tuple[int, str], ...]], ...]:
        """(name, list name, exported, values, (task id, value) pairs) of each parameter, for the template."""
        return tuple((name, self.lists[i], self.exports[i], self.parameters[i][1], self.columns[i][1])
                     for i, (name, _) in enumerate(self.parameters))


class TasksPlan(Record):
    """Many small tasks: GNU Parallel on each node, some at a time, over that node's share of the
    task file, with a joblog per node that lets a later job resume."""

    file: str                          # a shell word: the task file
    lines: str                         # "commands" (each line runs as it is) | "arguments" (of plan.command)
    joblog: str                        # a shell word: the folder of the joblogs
    separator: Optional[str] = None    # --colsep: argument lines split into {1} {2} ...
    one_node: bool = False             # one process with all the cores (--cpus-per-task), as the GNU Parallel page does
    jobs: str = '"$SLURMKIT_TASKS_AT_ONCE"'  # the word after parallel --jobs: how many at a time, read from SLURM
    at_once: int = 1                   # tasks at a time on all the nodes (check: fewer tasks leave slots idle)
    pace: str = ""                     # one node: how many at a time, in words, for the script's comment


class DistributedPlan(Record):
    """How the processes of a distributed job find each other.

    ``wraps_tasks``: each process gets its place before it starts (srun's task prolog; torchrun's
    ranks, a small shell function): its rank from SLURM's variables, ``TF_CONFIG``, its own GPU,
    its share of the CPUs; the batch script itself sets ``MASTER_ADDR``/``MASTER_PORT`` once."""

    rendezvous: bool = False          # MASTER_ADDR = first host, MASTER_PORT from the job id
    port_base: int = 20000            # MASTER_PORT = port_base + job id % port_span
    port_span: int = 20000
    ranks_from_slurm: bool = False    # RANK, LOCAL_RANK, WORLD_SIZE (and LOCAL_WORLD_SIZE) from SLURM_*
    tf_config: bool = False           # TF_CONFIG per task: all tasks as workers, this one's index
    tasks_per_node: int = 1
    nodes: int = 1                    # Lightning: what Trainer(num_nodes=...) must say
    bind_ranks: bool = False          # torchrun ranks: each on its own slice of the job's CPUs
    gpu_rank: str = ""                # one GPU per process: the variable that holds its rank on the node
    master_env: bool = False          # MASTER_ADDR and MASTER_PORT exported for the program (Lightning, Accelerate)
    requeue_lead_s: int = 0           # Lightning: the batch shell passes SIGUSR1 to srun and expects the requeue

    @property
    def wraps_tasks(self) -> bool:
        return self.ranks_from_slurm or self.tf_config or self.bind_ranks or bool(self.gpu_rank)


class BuildPlan(Record):
    """A wheel built once per toolchain, kept in the build cache, installed into the job's venv.

    The cache key is computed in the job from what is really loaded (modules, python, framework
    versions) plus ``key_extra``; a lock file keeps two jobs from building the same key at once."""

    name: str                          # horovod | mpi4py
    requirement: str                   # "horovod" or "horovod==0.28.1"
    cache: str                         # a shell word: the cache folder ($USER etc. expand)
    variables: Tuple[Tuple[str, str], ...]   # set for the build; values are shell words ($EBROOTNCCL expands)
    build_requires: Tuple[str, ...] = ()     # installed first: the build runs without isolation, against the venv
    from_wheelhouse: bool = False      # try the site's prebuilt wheel first (pip install --no-index NAME)
    pip_options: Tuple[str, ...] = ()  # for fetching the source and build requirements (--no-index on wheelhouse sites)
    check: str = ""                    # python statement that proves the install works
    source: str = ""                   # a shell word: the folder of the source fetched on the submit host; "": from the index
    options: Tuple[Tuple[str, str], ...] = ()   # horovod: slurmkit_horovod_wheel's named options (flag, shell word or "")


class NcclPlan(Record):
    """NCCL from the user's tarball: unpacked once into ``home`` (in the build cache, named by
    its version), fixed up by the site's ``setrpaths`` command where it has one, then on
    ``LD_LIBRARY_PATH`` for the job and ``HOROVOD_NCCL_HOME`` for the Horovod build."""

    tarball: str                       # a shell word: where the job reads the tarball
    version: str                       # 2.21.5-1+cuda12.4
    home: str                          # a shell word: <build cache>/nccl/<version>
    setrpaths: Optional[str] = None    # the site's command (setrpaths.sh), None: none to run


class GpuSamplerPlan(Record):
    """The job's GPUs sampled in the background (slurmkit/resolve/gpusampler.py decides, the contract
    in docs/job-spec.md "monitor" fixes the files): ``tool`` every ``interval_s`` seconds."""

    tool: str                          # nvidia-smi | rocm-smi (AMD node types)
    interval_s: int
    per_node: bool = False             # several nodes: one sampler per node, an srun --overlap step


class Plan(Record):
    kind: str
    profile: str
    name: str
    directives: Tuple[Tuple[str, str], ...]       # ("--time", "0-03:00:00") -> #SBATCH --time=0-03:00:00
    environment: Tuple[Tuple[str, object], ...]   # a str is exported literally (quoted); a FromSlurm expands
    modules: Tuple[str, ...]
    module_environment: Tuple[Tuple[str, str, str], ...]  # after `module load`: (name, shell word reading what the modules set, why)
    launcher: Tuple[object, ...]                  # launch prefix argv (srun ..., mpirun ...): str or FromSlurm
    command: Tuple[str, ...]                      # the user's argv; $NAME expands, $$ is a $
    venv: Optional[VenvPlan] = None
    venv_again: str = ""               # a set-up line loads modules: the virtualenv activated again after them (its path)
    stage: Optional[StagePlan] = None
    chain: Optional[ChainPlan] = None
    array: Optional[ArrayPlan] = None
    tasks: Optional[TasksPlan] = None
    distributed: Optional[DistributedPlan] = None
    builds: Tuple[BuildPlan, ...] = ()
    nccl: Optional[NcclPlan] = None
    module_system: str = "lmod"
    setup: Tuple[str, ...] = ()                   # the user's shell lines, run as written before the payload
    errexit: bool = True                          # False: a setup line that fails does not stop the job
    nounset: bool = True                          # False: setup and the launch line read an unset variable as empty
    setup_nounset: bool = False                   # True: setup lines stop at an unset variable too (environment.nounset: true)
    allexport: bool = True                        # False: setup exports only what it exports (environment.allexport: false)
    launch_exports: Tuple[str, ...] = ()          # then: names setup assigns that the launch reads in a shell of its own
    login_shell: bool = False                     # True: #!/bin/bash -l, the login profiles run before the script
    gpu_sampler: Optional[GpuSamplerPlan] = None  # None: no GPUs, or monitor: {gpu: false}
    gpu_sampler_off: bool = False      # GPUs and monitor: {gpu: false}: the script turns slurmkit_run's sampler off
    offline_note: str = ""                        # compute nodes without internet: where wheels, models and data come from
    fabric_notes: Tuple[str, ...] = ()            # a GPU job across nodes: what NCCL does over Ethernet, the site's switch advice
    passes_arguments: bool = False                # the launch.shell line reads $1, "$@": the script's arguments go to it
    environment_notes: Tuple[Tuple[str, str], ...] = ()  # (name, why): a comment after that export, where set
    directive_notes: Tuple[Tuple[str, str], ...] = ()  # (flag, text): a comment line above that #SBATCH line ("": the top)
    optional_directives: Tuple[Tuple[str, str], ...] = ()  # (directive, why): a site's advice, written `##SBATCH` (off)
    thread_note: Tuple[str, ...] = ()             # comment lines: threads left unpinned: the launch starts several programs at once
    version: str = __version__
