"""Memory and cores that can serve the job: what a GPU or whole-node job gets when its spec
leaves them out, and the warnings about what it asked.

The rules, each with its source (docs/job-spec.md, "Memory and cores", says the same for users):

- **A GPU's bundle.** The Alliance charges a GPU job by the largest of its GPU, core and memory
  bundles: each GPU comes with a share of its node's cores and memory that the GPU's charge
  already covers (Allocations and compute scheduling,
  https://docs.alliancecan.ca/wiki/Allocations_and_compute_scheduling/en; Using GPUs with Slurm,
  https://docs.alliancecan.ca/wiki/Using_GPUs_with_Slurm/en). A GPU job that says neither gets
  them: the site's cores per GPU (``cores_per_gpu``) and a node's memory over its GPUs. Without a
  memory request a job gets 256M per core (Running jobs), far too little for a GPU process.
- **A floor per GPU process.** Each process that trains on a GPU holds host memory of its own
  (``GPU_PROCESS_FLOOR_MIB``); less than that per process is a warning, with the bundle as advice.
- **Whole nodes.** A job that takes every core of every node it can land on asks ``--mem=0``, all
  of each node's memory (Advanced MPI scheduling,
  https://docs.alliancecan.ca/wiki/Advanced_MPI_scheduling/en). ``--mem=0`` lands on the node
  type with the least memory; a job that needs a large-memory node asks its size.
- **Whole-GPU shares.** Where a GPU job gets a fixed share of a node whatever it asks (Trillium:
  one GPU is a quarter node, 24 cores and about 188 GiB; Trillium Quickstart,
  https://docs.alliancecan.ca/wiki/Trillium_Quickstart/en), cores asked below the share are
  charged and sit idle: a warning.

Nothing here reads files or the environment; resolve.py calls these at its hooks.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

from slurmkit.core.kinds import kind_of
from slurmkit.core.records import Record
from slurmkit.core.units import format_size, parse_size
from slurmkit.sites.profiles import NodeType, SiteProfile
from slurmkit.spec.spec import JobSpec

#: Host memory (MiB) one process holds while it trains on a GPU, by framework: 4 GiB.
#: Measured (bench/gpu_process_memory.py, bench/results/gpu-process-memory-h200.json: PyTorch
#: 2.11, one H200): a DDP rank's proportional set size was 1.1 GiB once CUDA and NCCL were up,
#: 1.7 GiB after 20 steps of ResNet-50, and 3.0-3.1 GiB with 4 DataLoader workers, on synthetic
#: data that holds no data set in memory. The Alliance's own examples ask the same 4 GiB per
#: process: ``--mem=8G`` for 2 processes in the PyTorch page's DDP job and for 2 workers in the
#: TensorFlow page's MultiWorkerMirroredStrategy job (https://docs.alliancecan.ca/wiki/PyTorch/en,
#: https://docs.alliancecan.ca/wiki/TensorFlow/en). TensorFlow was not measured here: it loads
#: the same CUDA, cuDNN and NCCL libraries, so it has PyTorch's figure.
GPU_PROCESS_FLOOR_MIB = {"pytorch": 4096, "tensorflow": 4096}
FRAMEWORK_NAMES = {"pytorch": "PyTorch", "tensorflow": "TensorFlow", "": "Python"}
#: A memory default at least this large is rounded down to whole GiB (281G, not 288000M).
ROUND_TO_GIB_FROM_MIB = 10 * 1024


class GpuChoice(Record):
    """The GPU request in the site's spelling, and the node types that can take it."""

    spelling: str                    # "h100:2", "nvidia_h100_80gb_hbm3_1g.10gb:1", or "2" (any model)
    # mypy: a field named count overrides tuple.count, which nothing calls on a record; namedtuple
    # allows the name, and mypy itself types choice.count as int.
    count: int  # type: ignore[assignment]
    node_types: Tuple[NodeType, ...]  # GPU node types only: resolve chooses among the profile's


class Bundle(Record):
    """What the charge of one GPU asked covers on the nodes that can take the job."""

    cores: int
    memory_mib: Optional[int]       # None where a node's memory is not known


def cores_per_gpu(node_types: Sequence[NodeType]) -> int:
    """The site's cores per GPU, but never more than a node's fair share (its cores over its
    GPUs): Graham's cap of 16 per GPU would ask 64 cores of a 44-core node with 4 T4s. Where
    node types differ, the one that gives the most."""
    shares = [min(t.gpus.max_cores_per_gpu or t.cores, max(1, t.cores // t.gpus.count)) for t in node_types if t.gpus and t.cores]
    return max(shares, default=1)


def _chosen_mig(gpus: GpuChoice):
    """The MIG instance the choice names (profiles.MigProfile) and its GPUs, or (None, None)."""
    for node_type in gpus.node_types:
        node_gpus = node_type.gpus
        assert node_gpus is not None, "a GpuChoice holds GPU node types only"
        for mig in node_gpus.mig:
            if gpus.spelling == f"{mig.gres}:1":
                return mig, node_gpus
    return None, None


def mig_instance(gpus: GpuChoice) -> str:
    """The gres name of the MIG instance the choice asks for, or '' for whole GPUs."""
    mig, _ = _chosen_mig(gpus)
    return mig.gres if mig is not None else ""


def gpu_fraction(gpus: GpuChoice) -> float:
    """How much of a whole GPU one GPU asked is: 1, or for a MIG slice its memory over the GPU's.
    That fraction of the bundle matches the Alliance's recommendations per slice on Fir,
    Narval and Rorqual (e.g. Narval's 3g.20gb: 6 cores, 62 GB of a 12-core, 124.5 GB bundle);
    not on Nibi (1 core where 2 are recommended for a 1g.10gb, 7 where 6 for a 3g.40gb), whose
    profile gives its instances' own figures (``bundle`` takes those first)."""
    mig, node_gpus = _chosen_mig(gpus)
    if mig is not None and mig.memory_mib and node_gpus.memory_mib:
        return mig.memory_mib / node_gpus.memory_mib
    return 1.0


def bundle(gpus: GpuChoice, node_types: Sequence[NodeType] = ()) -> Bundle:
    """The cores and memory per GPU asked on ``node_types`` (default: every node type with these
    GPUs); where they differ, the least memory, so that the job fits every one of them. A MIG
    instance whose profile gives the site's recommended cores or memory gets those."""
    types = [t for t in (node_types or gpus.node_types) if t.gpus]
    fraction = gpu_fraction(gpus)
    memory = min((per_gpu_memory(t) for t in types if t.memory_mib and t.gpus), default=None)
    cores, memory = max(1, int(cores_per_gpu(types) * fraction)), int(memory * fraction) if memory else None
    mig, _ = _chosen_mig(gpus)
    if mig is not None:
        cores, memory = mig.cores or cores, mig.host_memory_mib or memory
    return Bundle(cores, memory)


def per_gpu_memory(node_type: NodeType) -> int:
    """A whole GPU's node memory: the site's recommendation where it gives one (Fir: 280 GB per
    H100, Ratios in bundles), never above the node's memory over its GPUs; else that share."""
    gpus, memory = node_type.gpus, node_type.memory_mib
    assert gpus is not None and memory is not None, "bundle() passes GPU node types with their memory"
    share = memory // gpus.count
    return min(gpus.host_memory_mib or share, share)


def cpus_per_task(gpus: GpuChoice, tasks: int) -> int:
    """CPUs per task of a GPU job that asks none: its GPUs' bundle of cores, over its tasks."""
    return max(1, bundle(gpus).cores * gpus.count // max(1, tasks))


def takes_whole_nodes(cores: int, node_types: Sequence[NodeType]) -> bool:
    """Whether ``cores`` per node is every core of every node type the job can land on (a
    32-core job on Cedar may land on a 48-core node, so it does not take its node whole)."""
    return bool(node_types) and all(t.cores == cores for t in node_types)


def default_memory(spec: JobSpec, profile: SiteProfile, gpus: Optional[GpuChoice], cores: int,
                   node_types: Sequence[NodeType]) -> Optional[Tuple[str, str]]:
    """The memory directive of a job whose spec asks none: all of each node's for a whole-node
    job, the bundle for a GPU job, else None (SLURM's default per core). None too where the site
    ignores memory requests."""
    res = spec.resources
    if res.mem_mb is not None or res.mem_per_cpu_mb is not None or profile.scheduling.mem_request is False:
        return None
    if takes_whole_nodes(cores, node_types):
        return ("--mem", "0")
    if not gpus:
        return None
    per_gpu = bundle(gpus, node_types).memory_mib
    return ("--mem", format_size(_rounded(per_gpu * gpus.count))) if per_gpu else None


def _rounded(mib: int) -> int:
    """Whole GiB, rounded down (so that every GPU's bundle still fits its node), from 10 GiB up."""
    return mib // 1024 * 1024 if mib >= ROUND_TO_GIB_FROM_MIB else mib


def check(spec: JobSpec, profile: SiteProfile, gpus: Optional[GpuChoice], tasks: int, cpus: int,
          node_types: Sequence[NodeType], memory: Optional[Tuple[str, str]], findings) -> None:
    """The warnings about memory and cores a GPU job asked (``findings`` is the resolver's)."""
    if not gpus or not node_types:
        return
    _check_memory_per_process(spec, profile, gpus, tasks, tasks * cpus, node_types, memory, findings)
    _check_idle_cores(profile, gpus, tasks, cpus, node_types, findings)


def gpu_framework(spec: JobSpec) -> Optional[str]:
    """The framework a GPU job's processes run: ``pytorch`` or ``tensorflow`` where the spec
    says (launch.framework, a distributed kind, a venv that installs one), "" for a Python
    payload that does not say, None for a program that is not Python (no floor is known)."""
    from slurmkit.core.programs import runs_python
    from slurmkit.resolve.framework_kinds import PACKAGE_FRAMEWORKS, package_name

    if spec.launch.framework or kind_of(spec).distributed:
        return kind_of(spec).framework(spec.launch.framework)
    venv = spec.environment.venv
    named = {PACKAGE_FRAMEWORKS.get(package_name(p)) for p in (venv.packages if venv else ())} - {None}
    if len(named) == 1:
        return named.pop()
    return "" if named or runs_python(spec.launch.command) else None


def process_floor_mib(framework: str) -> int:
    """The host memory one GPU process of ``framework`` holds (gpu_framework's answer): check
    warns below it, and ``report --apply`` never writes less (resolve.floors)."""
    return GPU_PROCESS_FLOOR_MIB.get(framework, min(GPU_PROCESS_FLOOR_MIB.values()))


def idle_core_share(profile, gpus: GpuChoice, node_types) -> Optional[int]:
    """Cores per node a GPU job is charged whatever it asks (the profile's whole_node.gpu_counts), or None."""
    whole = profile.scheduling.whole_node
    if not (whole and whole.gpu_counts):
        return None
    return min(t.cores // t.gpus.count for t in node_types if t.gpus) * gpus.count


def _check_memory_per_process(spec: JobSpec, profile, gpus, processes: int, cores: int, node_types, memory, findings) -> None:
    framework = gpu_framework(spec)
    per_node = _memory_per_node(memory, cores, node_types)
    if framework is None or per_node is None or profile.scheduling.mem_request is False:
        return
    floor = process_floor_mib(framework)
    each = per_node // processes
    if each >= floor:
        return
    flag, value = memory
    field, have = ("resources.mem_per_cpu", f"{value} per CPU ({format_size(per_node)} per node)") if flag == "--mem-per-cpu" \
        else ("resources.mem", f"{value} per node" if value != "0" else f"all of a node's {format_size(per_node)}")
    name = FRAMEWORK_NAMES[framework]
    whose = f"its {name} process" if processes == 1 else f"each of its {processes} {name} processes"
    findings.warn(field, f"{have} gives {whose} {format_size(each)}, below the {format_size(floor)} of host memory one holds on a GPU "
                  f"(its CUDA, cuDNN and NCCL libraries and data-loader workers); "
                  + _memory_advice(profile, gpus, node_types, floor * processes))


def _memory_advice(profile, gpus, node_types, need: int) -> str:
    per_gpu = bundle(gpus, node_types).memory_mib
    gpu = _gpu_name(gpus)
    if per_gpu is None:
        return f"ask at least {format_size(need)} per node"
    recommended = any(t.gpus and t.gpus.host_memory_mib for t in (node_types or gpus.node_types))
    why = "the site's recommendation" if recommended else "a node's memory over its GPUs"
    share = f"{format_size(_rounded(per_gpu))} per {gpu} ({why})"
    if per_gpu * gpus.count >= need:
        return (f"ask at least {format_size(need)} per node, and up to {profile.name}'s bundle of {share}, "
                "which the GPU's charge already covers")
    return f"{profile.name}'s GPU nodes have only {share}, less than one process needs"


def _memory_per_node(memory: Optional[Tuple[str, str]], cores: int, node_types) -> Optional[int]:
    """MiB per node from the job's memory directive (``--mem=0``: the smallest node it may get)."""
    if memory is None:
        return None
    flag, value = memory
    if value == "0":
        return min((t.memory_mib for t in node_types if t.memory_mib), default=None)
    return parse_size(value) * (cores if flag == "--mem-per-cpu" else 1)


def _check_idle_cores(profile, gpus, tasks: int, cpus: int, node_types, findings) -> None:
    """Where each GPU comes with a fixed share of its node (the profile's whole_node.gpu_counts),
    cores asked below the share are charged all the same and sit idle."""
    charged = idle_core_share(profile, gpus, node_types)
    if charged is None:
        return
    share, asked = charged // gpus.count, tasks * cpus
    if asked < charged:
        findings.warn("resources.cpus_per_task", f"{asked} cores of the {charged} {profile.name} gives a job with {gpus.count} "
                      f"{_gpu_name(gpus)} (a share of {share} cores per GPU): the other {charged - asked} are charged and sit idle; "
                      f"ask cpus_per_task: {charged // tasks} (or leave it out)")


def _gpu_name(gpus: GpuChoice) -> str:
    """The GPU as the site spells it (h100, a MIG slice's name), or "GPU" for any model."""
    return gpus.spelling.split(":")[0] if ":" in gpus.spelling else "GPU"
