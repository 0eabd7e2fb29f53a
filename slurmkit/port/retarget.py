"""Move a job spec to another cluster: what ``slurmkit port job.yaml --to nibi`` does.

Graham, Cedar, Béluga and Niagara were retired in 2025; their users arrive at Nibi, Fir,
Rorqual and Trillium with specs that name a V100, ask 5 cores per GPU, fill a 40-core node or
run for 28 days. ``port_spec`` reads the spec against both profiles and rewrites the values that
do not carry over, each with the reason, in the spec as written (a YAML mapping), so that what
does not change keeps the user's spelling.

It refuses, with the reason, what has no faithful equivalent (a CUDA job on a cluster with
AMD GPUs only, a 4-GPU single process on 2-GPU nodes, 10 days without a checkpoint on a 7-day
cluster). Last, the ported spec is resolved on the target: whatever the resolver would reject
is refused too, so a spec that ports is a spec that renders.
"""

from __future__ import annotations

import copy
import math
import re
import shlex
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from slurmkit.core.errors import SlurmkitError
from slurmkit.core.findings import Finding
from slurmkit.core.gpu_names import mig_names, sbatch_gpu_name, typed_step_gres, whole_gpu_names
from slurmkit.core.kinds import MULTI_NODE_GPU_KINDS, first_kind, kind_of, named
from slurmkit.core.records import Record
from slurmkit.core.units import format_duration, format_size
from slurmkit.port import bashtree
from slurmkit.port.fabric import fabric_todos
from slurmkit.port.modulelines import (
    SITE_STACK_MODULES,
    ModuleLine,
    module_line_problems,
    module_problem,
    port_todo,
    shell_fields,
    unread_pipelines,
)
from slurmkit.port.olddefaults import with_old_defaults
from slurmkit.port.oldpaths import advice, eb_root, in_the_loaded_module, module_file, old_stack_paths, spec_fields
from slurmkit.port.programs import major_moves, program_moves
from slurmkit.port.pythonwords import moved_python_words, python_version
from slurmkit.port.rebuild import rebuild_todos
from slurmkit.port.renamed import renamed_commands, renamed_modules
from slurmkit.port.sciencecodes import unloaded_programs, unloaded_todo
from slurmkit.port.sitepaths import (
    files_elsewhere_todo,
    files_moved_to,
    log_fields,
    own_path_todo,
    own_paths,
    read_only_logs,
    read_only_todo,
    read_only_uses,
    retired_layouts,
    spec_shell_fields,
    user_paths,
)
from slurmkit.port.stackenvs import stack_environment_todos
from slurmkit.port.submitlines import submitted_option_todos
from slurmkit.resolve.joblines import lustre_command_findings
from slurmkit.resolve.resolve import cores_per_gpu, resolve
from slurmkit.sites.modulecat import ModuleCheck, catalogue_checks, python_bindings, served_python, undocumented
from slurmkit.sites.profiles import Gpus, MigProfile, NodeType, SiteProfile, did_you_mean
from slurmkit.spec.spec import GpuRequest, JobSpec, spec_from_mapping

#: Kinds whose ranks may be spread over more nodes when the target's nodes have fewer GPUs.

#: sbatch options that name something of one cluster only (its partitions, node features,
#: reservations, node names): meaningless, or wrong, on another.
SITE_BOUND_OPTIONS = {"--constraint": "node features", "-C": "node features", "--partition": "partitions",
                      "-p": "partitions", "--reservation": "reservations", "--nodelist": "node names",
                      "-w": "node names", "--exclude": "node names", "-x": "node names", "--qos": "QOS names",
                      "--clusters": "cluster names", "-M": "cluster names"}

#: RAC awards (rrg-, rpp-) are granted for one cluster; default accounts (def-) exist everywhere.
CLUSTER_BOUND_ACCOUNTS = ("rrg-", "rpp-")


class Change(Record):
    """One value the port rewrote: the key path, the value before and after (None: absent)."""

    field: str
    old: Any
    new: Any
    why: str
    declares: Tuple[Tuple[str, ...], ...] = ()   # (what, subject[, new]) of trace differences it makes (verify.Declared)

    def __str__(self) -> str:
        if _several_lines(self.old) or _several_lines(self.new):   # a block of shell: the reason names the line changed
            return f"{self.field}: {self.why}"
        return f"{self.field}: {_shown(self.old)} -> {_shown(self.new)}: {self.why}"


def _several_lines(value: Any) -> bool:
    return "\n" in value if isinstance(value, str) else isinstance(value, list) and any(_several_lines(v) for v in value)


class Ported(Record):
    source: str                       # profile names
    target: str
    spec: Dict[str, Any]              # the ported spec, as a YAML mapping
    changes: Tuple[Change, ...]
    warnings: Tuple[Finding, ...]     # the port's own advice, then the resolver's on the target
    todos: Tuple[str, ...] = ()       # what the user must do first: ``# to do:`` lines of the ported spec
    notes: Tuple[str, ...] = ()       # warnings the ported spec's comments repeat


class PortRefused(SlurmkitError):
    """The spec cannot move: ``findings`` says why, one line each (key path and reason)."""

    def __init__(self, findings: Sequence[Finding]) -> None:
        self.findings = tuple(findings)
        super().__init__("; ".join(f"{f.field}: {f.message}" for f in self.findings))


def _shown(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


# ------------------------------------------------------------------------------ the target


def choose_target(source: SiteProfile, wanted: Optional[str], load) -> SiteProfile:
    """``--to`` if given (a retired target is refused in favour of its successor), else the
    source's successor; ``load`` reads a profile by name."""
    if wanted is None:
        if not source.is_retired:
            raise SlurmkitError(f"{source.name} is in service, so it has no successor to port to: give --to CLUSTER")
        return load(source.status.successor)
    target = load(wanted)
    if target.is_retired:
        raise SlurmkitError(f"{target.name} is retired; port to its successor instead: --to {target.status.successor}")
    return target


# ------------------------------------------------------------------------------- the port


class _Port:
    """The spec being rewritten, with the changes, warnings and refusals found so far."""

    def __init__(self, data: Dict[str, Any], spec: JobSpec, source: SiteProfile, target: SiteProfile, repack: bool = False,
                 folder: Optional[Path] = None) -> None:
        self.data, self.spec, self.source, self.target = copy.deepcopy(data), spec, source, target
        self.repack = repack                # pack the ranks into fewer whole nodes (port --repack)
        self.folder = folder                # the spec's folder: where the files its setup sources are
        self.changes: List[Change] = []
        self.warnings: List[Finding] = []
        self.refusals: List[Finding] = []
        self.todos: List[str] = []          # what the user must do before the ported job can run
        self.notes: List[str] = []          # warnings the ported file repeats (nodes partly used)

    @property
    def resources(self) -> Dict[str, Any]:
        return self.data["resources"]

    def set(self, section: Optional[str], key: str, new: Any, why: str, declares: Tuple[Tuple[str, ...], ...] = ()) -> None:
        """Rewrite (or with ``new`` None, remove) ``section.key`` and record why."""
        where = self.data if section is None else self.data.setdefault(section, {})
        old = where.get(key)
        if old == new:
            return
        if new is None:
            where.pop(key, None)
        else:
            where[key] = new
        self.changes.append(Change(f"{section}.{key}" if section else key, old, new, why, declares))

    def refuse(self, field: str, message: str) -> None:
        self.refusals.append(Finding("error", field, message))

    def warn(self, field: str, message: str) -> None:
        self.warnings.append(Finding("warning", field, message))

    def note(self, field: str, message: str) -> None:
        """A warning that the ported file also states, in its leading comments."""
        self.warn(field, message)
        self.notes.append(f"{field}: {message}")


def port_spec(data: Dict[str, Any], spec: JobSpec, source: SiteProfile, target: SiteProfile, repack: bool = False,
              folder: Optional[Path] = None) -> Ported:
    """``data`` (the spec's YAML mapping, ``spec`` its parsed form, written for ``source``)
    rewritten for ``target``; raises PortRefused with every reason it cannot move. MPI rank
    counts are kept unless ``repack`` asks to pack them into fewer whole nodes. ``folder`` (the
    spec's) is where the files its setup sources are read from; without it they are not read."""
    port = _Port(data, spec, source, target, repack, folder)
    port.set(None, "profile", target.name, _profile_reason(source, target))
    if spec.resources.gpus is not None:
        _port_gpus(port, spec.resources.gpus)
    else:
        _port_cpu_shape(port)
    _port_memory(port)
    _port_time(port)
    _port_modules(port)
    _port_programs(port)
    _port_python_words(port)
    _port_kept_modules(port)
    port.todos.extend(fabric_todos(port.data, port.source, port.target))
    _port_submitted_options(port)
    _port_old_paths(port)
    _port_unloaded_programs(port)
    _port_rebuilds(port)
    _port_directives(port)
    _port_account(port)
    _port_dependencies(port)
    _port_site_paths(port)
    _port_memory_per_core(port)
    if port.refusals:
        raise PortRefused(port.refusals)
    ported = spec_from_mapping(port.data, source=f"{spec.source or 'spec'} (ported)")
    resolution = resolve(ported, target)
    if resolution.errors:
        raise PortRefused(resolution.errors)
    _port_lustre_commands(port, ported)
    return Ported(source.name, target.name, port.data, tuple(port.changes), tuple(port.warnings) + _not_repeated(resolution.warnings, port),
                  tuple(port.todos) + _warning_todos(port), tuple(port.notes))


#: How a port warning ends as a to-do of the ported spec.
WARNING_TODO_END = ", then remove this line"


def _warning_todos(port: _Port) -> Tuple[str, ...]:
    """The port's own warnings (a module the target's catalogue lacks, a RAC account, a pinned
    core count), each a ``# to do:`` of the ported spec: told once on the terminal, a warning is
    lost, and ``check`` must not say "no problems found" until the user has looked. Those the
    file states as notes, and the resolver's (``check`` finds those itself), are not repeated."""
    return tuple(f"{w.field}: {w.message}{WARNING_TODO_END}" for w in port.warnings if f"{w.field}: {w.message}" not in port.notes)


def _port_lustre_commands(port: _Port, ported: JobSpec) -> None:
    """Lustre's lfs (``lfs setstripe -c 8 $OUT``) where the target's file systems are not Lustre:
    a to-do per command, worded as ``check`` warns of it, so that the port says it once, as the
    to-do (untold_warnings), and the line cannot be submitted unseen. Read from the ported spec,
    whose set-up lines are numbered as the file written will number them."""
    port.todos += [f"{f.field}: {f.message}{WARNING_TODO_END}" for f in lustre_command_findings(ported, port.target)]


def untold_warnings(ported: Ported) -> Tuple[Finding, ...]:
    """The warnings that are not also to-dos of the ported spec (those are told as to-dos)."""
    return tuple(w for w in ported.warnings if f"{w.field}: {w.message}{WARNING_TODO_END}" not in ported.todos)


def _not_repeated(warnings: Tuple[Finding, ...], port: _Port) -> Tuple[Finding, ...]:
    """The resolver's warnings less its partly-used-nodes one where the port said it already (naming --repack)."""
    said = any("partly used" in note for note in port.notes) or any("partly used" in c.why for c in port.changes)
    return tuple(w for w in warnings if not (said and w.field == "resources" and "idle but charged" in w.message))


def _profile_reason(source: SiteProfile, target: SiteProfile) -> str:
    if source.is_retired and source.status.successor == target.name:
        return f"{source.name} was retired on {source.status.retired_on}; {target.name} is its successor"
    return f"moved from {source.name} to {target.name}"


# ------------------------------------------------------------------------------------ GPUs


class _GpuModel(Record):
    """A GPU a job can ask for: a whole model, or a MIG instance of one."""

    spelling: str                 # what the spec writes: the model name, or the MIG instance's gres
    memory_mib: Optional[int]
    vendor: str
    node_types: Tuple[NodeType, ...]
    gpus: Gpus                    # the first node type's GPUs: the names the model goes by are theirs
    mig: Optional[MigProfile] = None

    @property
    def label(self) -> str:
        memory = f" {format_size(self.memory_mib)}" if self.memory_mib else ""
        return f"{self.spelling.upper() if not self.mig else self.spelling}{memory}"


def _gpu_models(profile: SiteProfile, node_types: Optional[Sequence[NodeType]] = None) -> List[_GpuModel]:
    """Every whole GPU model and MIG instance of ``profile`` (of ``node_types``, default the
    ones in service), in profile order."""
    models: Dict[str, _GpuModel] = {}
    for node_type in profile.node_types if node_types is None else node_types:
        gpus = node_type.gpus
        if not gpus:
            continue
        known = models.get(gpus.model)
        types = (known.node_types if known else ()) + (node_type,)
        models[gpus.model] = _GpuModel(gpus.model, gpus.memory_mib, gpus.vendor, types, known.gpus if known else gpus)
        for mig in gpus.mig:
            models[mig.gres] = _GpuModel(mig.gres, mig.memory_mib, gpus.vendor, (node_type,), gpus, mig)
    return list(models.values())


def _find_source_gpu(model: str, source: SiteProfile) -> Optional[_GpuModel]:
    """The source's GPU of that name: one in service, else one it retired (an old script's)."""
    for candidate in _gpu_models(source) + _gpu_models(source, source.retired_node_types):
        names = mig_names(candidate.gpus, candidate.mig) if candidate.mig else whole_gpu_names(candidate.gpus)
        if model in names:
            return candidate
    return None


def _closest_gpu(wanted: _GpuModel, target: SiteProfile) -> Tuple[Optional[_GpuModel], str]:
    """The target's GPU for a job that ran on ``wanted``: same maker, the smallest with at least
    as much memory (a MIG instance only for a MIG job), the most nodes on a tie; else the largest."""
    same_maker = [m for m in _gpu_models(target) if m.vendor == wanted.vendor]
    whole = [m for m in same_maker if not m.mig]
    pool = [m for m in same_maker if m.mig] + whole if wanted.mig else whole
    if not pool:
        return None, ""
    need = wanted.memory_mib or 0
    enough = [m for m in pool if (m.memory_mib or 0) >= need]
    if enough:
        best = min(enough, key=lambda m: (m.mig is None, m.memory_mib or 0, -_node_count(m)))
        return best, "the smallest with at least its memory"
    return max(pool, key=lambda m: (m.memory_mib or 0, _node_count(m))), "the largest it has, with less memory per GPU"


def _node_count(model: _GpuModel) -> int:
    return sum(t.count or 0 for t in model.node_types)


def _port_gpus(port: _Port, request: GpuRequest) -> None:
    if request.model is None:
        typed, why = _untyped_gpu(port, request.count)
        _port_gpu_count(port, typed, request.count, why)
        _port_cores_per_gpu(port, request.count, None, typed)
        _port_step_gpus(port, typed if ":" in str(port.data.get("resources", {}).get("gpus", "")) else None)
        return
    wanted = _find_source_gpu(request.model, port.source)
    if wanted is None:
        names = [m.spelling for m in _gpu_models(port.source)]
        hint = did_you_mean(request.model, names)
        if hint or request.model.lower() not in _OLDER_NVIDIA:
            port.refuse("resources.gpus", f"{port.source.name} has no GPU called {request.model!r}{hint}; "
                        f"it has: {', '.join(names) or 'none'}")
            return
        _older_gpu(port, request)
        return
    chosen, how = _closest_gpu(wanted, port.target)
    if chosen is None:
        _refuse_gpu(port, wanted)
        return
    _suggest_mig(port, wanted, chosen, request.count)
    retired = wanted.node_types[0].retired_on
    why = (f"{port.source.name}'s {wanted.label}{f' (retired there on {retired})' if retired else ''}; "
           f"{port.target.name}'s {chosen.label} is {how}")
    _port_gpu_count(port, chosen, request.count, why)
    if chosen.mig is None:
        _port_cores_per_gpu(port, request.count, wanted, chosen)
    _port_step_gpus(port, chosen)


def _port_step_gpus(port: _Port, chosen: Optional[_GpuModel]) -> None:
    """The job's own srun steps that ask GPUs (``srun --gres=gpu:1 ... &``, kept as written) name
    the type the ported header asks: Slurm refuses an untyped step under a typed header ("with
    and without type identification"), and the old type is not on the new cluster."""
    if chosen is None:
        return
    name = chosen.mig.gres if chosen.mig else sbatch_gpu_name(chosen.gpus)
    why = f"the job's srun steps ask the GPU type the header asks ({name}): Slurm refuses a step's untyped --gres under a typed header"

    def typed(text: str) -> Tuple[str, List[str]]:
        new = typed_step_gres(text, name)
        return new, [why] if new != text else []

    _rewrite_launch(port, typed)
    _rewrite_setup(port, typed)


#: NVIDIA data-centre GPUs older than any the bundled profiles hold (Kepler and Maxwell Teslas,
#: Pascal's P4/P40): a script that asks for one was written for a cluster slurmkit has no
#: profile of (Helios's K20 and K80), so its request is ported as one for any GPU, with a to-do
_OLDER_NVIDIA = frozenset(("k20", "k20x", "k40", "k40m", "k80", "m40", "m60", "p4", "p40"))


def _older_gpu(port: _Port, request: GpuRequest) -> None:
    """A GPU older than every one of the source and the target (``k80``): the job asks the
    target for the GPU an untyped request gets; a to-do says the program must run on it."""
    typed, why = _untyped_gpu(port, request.count)
    what = typed.label if typed else "any of its GPUs"
    port.todos.append(f"resources.gpus: the script asked for {request.model} GPUs, which {port.source.name} never had (an older "
                      f"cluster's): the job now asks {port.target.name} for {what}; check that the program runs on it (its CUDA "
                      "build must support that GPU), then remove this line")
    rest = why.split("; ", 1)[1] if why.startswith("any GPU model on") and "; " in why else why
    _port_gpu_count(port, typed, request.count, f"{request.model}, which {port.source.name} never had, asked as any GPU; {rest}")
    _port_cores_per_gpu(port, request.count, None, typed)


def _untyped_gpu(port: _Port, count: int) -> Tuple[Optional[_GpuModel], str]:
    """The model an untyped GPU request takes on the target: none where every GPU there is one
    kind; the target's one whole GPU of the source's maker where it also has MIG instances or
    another maker's GPUs, which an untyped request could get (a 10 GB slice, an AMD APU that
    CUDA code cannot use), and which the site sizes cores and memory for by model. A job of one
    GPU then holds a whole one: the why names the MIG instances of it a small job can ask for."""
    target = _gpu_models(port.target)
    makers = {t.gpus.vendor for t in port.source.node_types + port.source.retired_node_types if t.gpus}
    whole = [m for m in target if m.mig is None and m.vendor in makers]
    if len(whole) != 1:
        return None, "any GPU model"
    typed = whole[0]
    instances = [m for m in target if m.mig and m.mig in typed.gpus.mig]
    small = bool(instances) and count == 1 and port.spec.resources.nodes == 1 and not kind_of(port.spec).distributed
    others = _untyped_gets(target, typed, listed=not small)
    if not others:
        return None, "any GPU model"
    why = f"any GPU model on {port.source.name}; on {port.target.name} an untyped request may get {' or '.join(others)}"
    if small:
        return typed, f"{why}, so it asks for the whole GPU: the job now holds a whole {typed.label}; {_slice_instead(typed, instances)}"
    return typed, f"{why}: the {typed.label} is its whole {typed.vendor.upper()} GPU"


def _untyped_gets(target: List[_GpuModel], typed: _GpuModel, listed: bool) -> List[str]:
    """What else than ``typed`` an untyped request may get on the target: a MIG instance (its
    profiles ``listed``), another maker's GPU."""
    slices = [m.mig.profile for m in target if m.mig]
    named = f" ({', '.join(slices)})" if listed else ""
    return ([f"a MIG instance{named}"] if slices else []) + \
        [f"an {m.vendor.upper()} {m.spelling.upper()}" for m in target if m.mig is None and m.vendor != typed.vendor]


def _slice_instead(whole: _GpuModel, instances: List[_GpuModel]) -> str:
    """The MIG instances of ``whole`` the site offers, as the spec spells them, with the page the
    profile cites for them: a job that needs less than a whole GPU can ask for one."""
    names = [f"{m.spelling} ({format_size(m.memory_mib)})" if m.memory_mib else m.spelling for m in instances]
    listed = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]
    pages = [page for m in instances if m.mig for page in m.mig.source] + list(whole.gpus.source)   # the profile's, if any
    return f"a job that needs less can ask for a MIG instance of it instead, gpus: {listed}{f' ({pages[0]})' if pages else ''}"


def _refuse_gpu(port: _Port, wanted: _GpuModel) -> None:
    others = sorted({m.gpus.model for m in _gpu_models(port.target)})
    if others:
        maker = wanted.vendor.upper()
        port.refuse("resources.gpus", f"{port.target.name}'s GPUs ({', '.join(others)}) are not {maker} GPUs, so code "
                    f"built for the {wanted.spelling.upper()} (CUDA) does not run there; port to a cluster with {maker} GPUs")
    else:
        successor = f"; its successor {port.target.status.successor} may" if port.target.status.successor else ""
        port.refuse("resources.gpus", f"{port.target.name} has no GPU nodes{successor}")


def _suggest_mig(port: _Port, wanted: _GpuModel, chosen: _GpuModel, count: int) -> None:
    """A job of one whole GPU that a MIG instance of the target's would hold: said, as it costs
    less, as a note of the ported file: advice, not a problem for ``check`` to hold the job on."""
    need = wanted.memory_mib
    if wanted.mig or chosen.mig or not need:
        return
    slices = [(m.memory_mib, m) for m in _gpu_models(port.target)
              if m.mig and m.vendor == chosen.vendor and m.memory_mib is not None and m.memory_mib >= need]
    if slices and count == 1 and not kind_of(port.spec).distributed:
        memory, small = min(slices, key=lambda pair: pair[0])
        port.note("resources.gpus", f"a job that fitted a {wanted.label} may fit the MIG instance {small.spelling} "
                  f"({format_size(memory)}), which uses less of the allocation than a whole {chosen.spelling.upper()}")


def _allowed_gpu_counts(port: _Port, chosen: Optional[_GpuModel]) -> List[int]:
    """GPUs per node the target takes for this model: 1 for a MIG instance, else up to the
    node's count, or only the whole-node counts where the site fixes them."""
    if chosen is not None and chosen.mig:
        return [1]
    types = chosen.node_types if chosen else [t for t in port.target.node_types if t.gpus]
    most = max((t.gpus.count for t in types if t.gpus), default=0)
    whole = port.target.scheduling.whole_node
    fixed = whole.gpu_counts if whole and whole.gpu_counts else range(1, most + 1)
    return [n for n in fixed if n <= most]


def _port_gpu_count(port: _Port, chosen: Optional[_GpuModel], per_node: int, why: str) -> None:
    """Keep the GPUs per node if the target takes them; a multi-node kind keeps the total
    and spreads it over more nodes; anything else is refused."""
    allowed = _allowed_gpu_counts(port, chosen)
    spelling = (lambda n: f"{chosen.spelling}:{n}") if chosen else str
    if per_node in allowed:
        packed = _packed_gpu_nodes(port, per_node, allowed)
        if packed and port.repack:
            _repack_gpus(port, chosen, per_node, packed, why)
        else:
            port.set("resources", "gpus", _gpu_value(port, chosen, per_node), why)
        return
    nodes = port.spec.resources.nodes
    total = per_node * nodes
    fits = [n for n in allowed if total % n == 0]
    target_name = port.target.name
    spreads = kind_of(port.spec).spreads_over_nodes
    if spreads and fits:
        new = max(fits)
        port.set("resources", "gpus", _gpu_value(port, chosen, new), f"{why}; {target_name} takes {_counts(allowed)} per node")
        port.set("resources", "nodes", total // new, f"the same {total} GPUs in all, {new} per node on {target_name}")
        _trainer_todo(port, total // new, new, nodes, per_node)
        return
    hint = f"; kind {named(MULTI_NODE_GPU_KINDS)} can spread the GPUs over several nodes" if not spreads else ""
    port.refuse("resources.gpus", f"{spelling(per_node)} per node: {target_name} takes {_counts(allowed)} GPUs per node"
                f"{' of that model' if chosen else ''}{hint}")


def _packed_gpu_nodes(port: _Port, per_node: int, allowed: List[int]) -> Optional[int]:
    """GPUs spread over nodes that the target's nodes hold fewer of (graham's 2 x 4 T4 -> nibi,
    8 H100 a node): the fewest nodes that hold them evenly, or None. Without ``--repack`` they
    are kept as written, with a note: a whole node may wait longer in the queue, and the
    program may name its nodes."""
    nodes, target = port.spec.resources.nodes, port.target.name
    total = nodes * per_node
    packed = next((k for k in range(1, nodes) if total % k == 0 and total // k in allowed), None)
    if packed is None or not kind_of(port.spec).spreads_over_nodes:
        return None
    if not port.repack:
        port.note("resources.nodes", f"{target}'s nodes hold {max(allowed)} of these GPUs: the {total} GPUs are kept as {nodes} nodes x "
                  f"{per_node}; slurmkit port --repack puts them on {_count_nodes(packed)} (NVLink between them, no network)")
    return packed


def _repack_gpus(port: _Port, chosen: Optional[_GpuModel], per_node: int, packed: int, why: str) -> None:
    """``--repack``: the same GPUs on ``packed`` nodes (NVLink within a node, no network between
    them), with the memory per node they had per GPU."""
    nodes = port.spec.resources.nodes
    new = nodes * per_node // packed
    port.set("resources", "gpus", _gpu_value(port, chosen, new), f"{why}; --repack: {new} per node")
    port.set("resources", "nodes", packed, f"--repack: the same {nodes * per_node} GPUs ({nodes} x {per_node} on {port.source.name}) "
             f"on {_count_nodes(packed)} of {new}")
    tasks = port.spec.resources.tasks_per_node     # written out: one per GPU (or a share of them) scales with them
    if port.resources.get("tasks_per_node") is not None and tasks and tasks * new % per_node == 0:
        port.set("resources", "tasks_per_node", tasks * new // per_node, f"--repack: {_gpus(new)} per node")
    size = port.spec.resources.mem_mb     # 0 is mem: node, all of each node's
    if size and port.resources.get("mem") is not None:
        port.set("resources", "mem", format_size(size * new // per_node), f"--repack: {format_size(size)} per node for "
                 f"{_gpus(per_node)} is {format_size(size * new // per_node)} for {new}")
    _trainer_todo(port, packed, new, nodes, per_node)


def _trainer_todo(port: _Port, nodes: int, per_node: int, old_nodes: int, old_per_node: int) -> None:
    """A program that names its nodes and GPUs itself (Lightning's Trainer) must follow the new shape."""
    if kind_of(port.spec).program_names_its_nodes:
        port.todos.append(f"the program's Trainer(num_nodes=..., devices=...) must say {nodes} node(s) of {per_node} GPUs, as SLURM "
                          f"now runs it (it said {old_nodes} of {old_per_node}) on {port.target.name}")


def _gpus(count: int) -> str:
    return f"{count} GPU" + ("" if count == 1 else "s")


def _count_nodes(count: int) -> str:
    return f"{count} node" + ("" if count == 1 else "s")


def _counts(allowed: List[int]) -> str:
    if allowed == list(range(1, len(allowed) + 1)) and len(allowed) > 2:
        return f"1 to {allowed[-1]}"
    return " or ".join(map(str, allowed)) or "no"


def _gpu_value(port: _Port, chosen: Optional[_GpuModel], count: int) -> Union[int, str, Dict[str, Any]]:
    """The new ``gpus`` value in the form the user wrote it (mapping, bare count or text)."""
    written = port.resources.get("gpus")
    if chosen is None:
        return count if isinstance(written, int) else str(count)
    if isinstance(written, dict):
        return {**written, "model": chosen.spelling, "count": count}
    return chosen.spelling if count == 1 and ":" not in str(written) else f"{chosen.spelling}:{count}"


def _port_cores_per_gpu(port: _Port, gpus: int, wanted: Optional[_GpuModel], chosen: Optional[_GpuModel]) -> None:
    """An explicit cpus_per_task that was the source's bundle (its cores per GPU) becomes the
    target's bundle; one above the target's advice comes down to it. ``None``: any model."""
    asked = port.spec.resources.cpus_per_task
    source_bundle = _bundle(wanted.node_types) if wanted else None
    makers = {t.gpus.vendor for t in port.source.node_types if t.gpus}
    target_types = chosen.node_types if chosen else [t for t in port.target.node_types if t.gpus and t.gpus.vendor in makers]
    target_bundle = _bundle(target_types)
    if asked is None or target_bundle is None:
        return
    tasks = _tasks_per_node(port, gpus)
    per_gpu = asked * tasks / gpus
    new = max(1, target_bundle * gpus // tasks)
    label = f"{port.target.name}'s {target_bundle} per {chosen.spelling.upper() if chosen else 'GPU'}"
    if wanted is not None and per_gpu == source_bundle and source_bundle != target_bundle:
        port.set("resources", "cpus_per_task", new, f"{port.source.name}'s {source_bundle} cores per {wanted.spelling.upper()} "
                 f"(its bundle) becomes {label}")
    elif per_gpu > target_bundle:
        port.set("resources", "cpus_per_task", new, f"{asked * tasks} cores for {gpus} GPU(s) is above {label}")


def _bundle(node_types: Sequence[NodeType]) -> Optional[int]:
    """The site's cores per GPU on these nodes, as the resolver gives them by default."""
    return cores_per_gpu(node_types) if any(t.gpus for t in node_types) else None


def _tasks_per_node(port: _Port, gpus: int) -> int:
    """Tasks per node with GPUs: one per GPU for the process-per-GPU kinds, as asked otherwise."""
    spec = port.spec
    kind = kind_of(spec)
    single = kind.single_process_framework == kind.framework(spec.launch.framework)
    if kind.distributed and not single:
        return gpus
    return spec.resources.tasks_per_node or 1


# ------------------------------------------------------------------------------- CPU shape


def _whole_cores(profile: SiteProfile) -> Optional[int]:
    whole = profile.scheduling.whole_node
    return whole.cores if whole and whole.cores else None


def _port_cpu_shape(port: _Port) -> None:
    """Whole-node sites fill nodes: moving onto one fits the job to its nodes, moving off one
    asks explicitly for the node it used to fill."""
    source_whole, target_whole = _whole_cores(port.source), _whole_cores(port.target)
    if target_whole and target_whole != source_whole:
        _onto_whole_nodes(port, target_whole)
    elif source_whole and not target_whole:
        _off_whole_nodes(port, source_whole)


def _onto_whole_nodes(port: _Port, cores: int) -> None:
    res, kind, target = port.spec.resources, kind_of(port.spec), port.target.name
    tasks, cpus = _source_shape(port)
    if not kind.rank_count_is_users:     # an mpi job keeps its ranks per node unless repacked (which says so itself)
        _warn_pinned_core_counts(port, tasks * cpus, cores)
    if kind.rank_count_is_users:   # ranks x threads are the user's (the decomposition), whether or not they divide a node
        _mpi_onto_whole_nodes(port, cores, tasks, cpus)
    elif kind.fills_whole_node == "threads" and tasks == 1:
        if res.cpus_per_task is not None:
            port.set("resources", "cpus_per_task", cores, f"{target} gives the job a whole node of {cores} cores")
    elif kind.runs_task_file:
        _many_tasks_onto_whole_nodes(port, cores, tasks, cpus)
    else:
        many = first_kind(runs_task_file=True).name
        port.refuse("kind", f"{target} schedules whole nodes of {cores} cores; a {kind.name!r} job of {tasks * cpus} core(s) would "
                    f"leave the rest idle: run {cores // (tasks * cpus)} such tasks at a time in one job of kind {many!r} (GNU Parallel, "
                    "a task file with a line each), or port to another cluster")


def _mpi_onto_whole_nodes(port: _Port, cores: int, tasks: int, cpus: int) -> None:
    """The rank count is the user's (it is the domain decomposition): kept, on as many nodes as
    before, unless ``--repack`` (or more ranks per node than a new node holds) packs the same
    ranks into as few of the target's whole nodes as hold them, evenly."""
    res, source, target = port.spec.resources, port.source.name, port.target.name
    per_node, ranks = cores // cpus, res.nodes * tasks
    packed = _packed_nodes(ranks, per_node)
    if (port.repack or tasks > per_node) and packed and packed != res.nodes:
        asked = "--repack" if port.repack else f"{tasks} ranks of {cpus} core(s) do not fit one of {target}'s nodes"
        why = (f"{asked}: the same {ranks} ranks ({res.nodes} x {tasks} on {source}) packed into {packed} whole node(s) of "
               f"{cores} cores, {ranks // packed} per node")
        port.set("resources", "nodes", packed, why)
        port.set("resources", "tasks_per_node", ranks // packed, why)
        _warn_pinned_core_counts(port, tasks * cpus, ranks // packed * cpus)
        return
    if port.repack and math.ceil(ranks / per_node) < res.nodes:
        port.note("resources.nodes", f"--repack: {ranks} ranks do not split evenly into fewer than {res.nodes} node(s) of at most "
                  f"{per_node} ranks; kept as {res.nodes} x {tasks}")
    unused = f"{target}'s nodes of {cores} cores are partly used ({tasks * cpus} each, charged whole)"
    hint = f"; slurmkit port --repack packs them into {packed} node(s)" if packed and packed < res.nodes else ""
    if res.tasks_per_node is None:
        port.set("resources", "tasks_per_node", tasks, f"{source} filled its nodes with {tasks} ranks: the {ranks} ranks are kept "
                 f"({res.nodes} x {tasks}), as {target} would fill its larger nodes with {per_node}; {unused}{hint}")
    elif tasks * cpus < cores:
        port.note("resources.tasks_per_node", f"the {ranks} ranks are kept ({res.nodes} x {tasks}); {unused}{hint}")


def _packed_nodes(ranks: int, per_node: int) -> Optional[int]:
    """The fewest nodes of at most ``per_node`` ranks that hold ``ranks`` evenly (a spec says
    ranks per node), or None when only one rank a node would."""
    for nodes in range(max(1, math.ceil(ranks / per_node)), ranks):
        if ranks % nodes == 0:
            return nodes
    return 1 if ranks <= per_node else None


def _many_tasks_onto_whole_nodes(port: _Port, cores: int, tasks: int, cpus: int) -> None:
    """GNU Parallel fills each whole node: as many tasks at a time as it has cores for."""
    target = port.target.name
    if cores % cpus:
        port.refuse("resources.cpus_per_task", f"{target} schedules whole nodes of {cores} cores, which {cpus} cores per task does not "
                    f"divide; pick a divisor of {cores}")
    elif port.spec.resources.tasks_per_node is not None:
        port.set("resources", "tasks_per_node", cores // cpus, f"{target} gives whole nodes of {cores} cores: {cores // cpus} tasks "
                 f"of {cpus} core(s) at a time fill one ({tasks} on {port.source.name})")


def _warn_pinned_core_counts(port: _Port, old: int, new: int) -> None:
    """Variables set to the old node's core count (thread pools: TF_NUM_INTRAOP_THREADS=40)
    would use a fraction of the new node; the port cannot know what they mean, so it says so."""
    if old == new:
        return
    for name, value in port.spec.environment.variables:
        if str(value).strip() == str(old):
            port.warn(f"environment.variables.{name}", f"{value} is the {old} cores the job had on {port.source.name}; "
                      f"on {port.target.name} it has {new}: set it to match, or leave it out where slurmkit sets it")
    launch = port.spec.launch
    lines = [("launch.command", shlex.join(launch.command))] if launch.command and not launch.shell else []
    lines += shell_fields(port.spec.environment.setup, launch.shell)
    for field, text in lines:
        for count in dict.fromkeys(_own_counts(text, old)):
            port.warn(field, f"`{count}` gives the program a count of threads or processes of its own, sized for the {old} cores "
                             f"the job had on {port.source.name}; on {port.target.name} it has {new}: scale it (or read "
                             "$SLURM_CPUS_PER_TASK)")


#: An option that sets a program's own threads or processes: -t, -p, -j, -np, -nt, --threads, -cpus, --ncpus, --workers...
_COUNT_OPTION = re.compile(r"^--?(t|p|j|np|nt|n?threads?|num[-_]?threads|n?cpus?|cores?|n?procs?|num[-_]?workers|workers)$", re.I)


def _own_counts(text: str, old: int) -> Iterator[str]:
    """The words of ``text`` that give a program a count of its own where the job's cores were
    ``old``: an option of threads or processes with a number, or the old core count itself."""
    try:
        words = shlex.split(text, comments=True)
    except ValueError:
        return
    for before, word in zip([""] + words, words):
        option, _, value = word.partition("=") if word.startswith("-") and "=" in word else (before, "", word)
        if value.isdigit() and (_COUNT_OPTION.match(option) or int(value) == old):
            yield f"{option} {value}".strip() if option else value


def _source_shape(port: _Port) -> Tuple[int, int]:
    """Tasks per node and CPUs per task the job had on the source (a whole-node site filled
    the node with what the spec left out)."""
    res = port.spec.resources
    tasks, cpus = res.tasks_per_node, res.cpus_per_task
    whole = _whole_cores(port.source)
    fills = kind_of(port.spec).fills_whole_node
    if whole and fills == "tasks" and tasks is None:
        tasks = max(1, whole // (cpus or 1))
    if whole and fills == "threads" and cpus is None:
        cpus = max(1, whole // (tasks or 1))
    return tasks or 1, cpus or 1


def _off_whole_nodes(port: _Port, cores: int) -> None:
    res, fills = port.spec.resources, kind_of(port.spec).fills_whole_node
    why = f"{port.source.name} filled its {cores}-core nodes; {port.target.name} gives only what is asked"
    if fills == "tasks" and res.tasks_per_node is None:
        port.set("resources", "tasks_per_node", max(1, cores // (res.cpus_per_task or 1)), why)
    elif fills == "threads" and res.cpus_per_task is None:
        port.set("resources", "cpus_per_task", max(1, cores // (res.tasks_per_node or 1)), why)


# ---------------------------------------------------------------------------------- memory


def _port_memory(port: _Port) -> None:
    source_asks = port.source.scheduling.mem_request is not False
    target_asks = port.target.scheduling.mem_request is not False
    if not target_asks:
        for key in ("mem", "mem_per_cpu"):
            port.set("resources", key, None, f"{port.target.name} gives every job whole nodes with all their memory; "
                     "it ignores memory requests")
    elif not source_asks and port.resources.get("mem") is None and port.resources.get("mem_per_cpu") is None \
            and port.spec.resources.gpus is None:   # a GPU job gets its GPUs' bundle from the resolver (sizing.py)
        node = _largest_cpu_node(port.source)
        if node and node.memory_mib:
            port.set("resources", "mem", format_size(node.memory_mib), f"{port.source.name} gave every job its nodes' memory "
                     f"({format_size(node.memory_mib)} each); {port.target.name} gives only what is asked")
    elif port.spec.resources.mem_mb == 0 and port.spec.resources.gpus is None:
        _port_node_memory(port)
    elif port.spec.resources.mem_mb == 0:
        _port_gpu_node_memory(port)


#: where the Alliance says a job is charged by the largest share of a node it holds
BUNDLES_PAGE = "https://docs.alliancecan.ca/wiki/Allocations_and_compute_scheduling/en"


def _port_gpu_node_memory(port: _Port) -> None:
    """``mem: node`` (--mem=0) with part of a GPU node's GPUs holds all of that node's memory,
    and the site charges a job by the largest share it holds (memory, cores or GPUs): on a
    Fir node of 4 H100s and 1125G, a 2-GPU job is charged, and blocks, all 4. The memory
    request is dropped, so that the job gets its GPUs' share, as the resolver sizes a GPU job
    that asks none; a job that asks every GPU of its node keeps it."""
    try:
        asked = spec_from_mapping(port.data, source=port.spec.source).resources.gpus
    except SlurmkitError:
        return   # the ported spec does not read: the final resolve says why
    model = (asked.model or "").split("_")[0] if asked else ""
    nodes = [t for t in port.target.node_types if t.gpus and t.memory_mib and (not model or t.gpus.model == model)]
    node = max(nodes, key=lambda t: t.count or 0) if nodes else None
    if asked is None or node is None or node.gpus is None or asked.count >= node.gpus.count:
        return
    port.set("resources", "mem", None, f"mem: node would hold all {format_size(node.memory_mib or 0)} of a "
             f"{port.target.name} GPU node for {asked.count} of its {node.gpus.count} GPUs, and the job would be charged "
             f"for all of them (the scheduler charges the largest of the GPU, core and memory shares: {BUNDLES_PAGE}): "
             "it gets its GPUs' share of the node's memory instead")


def _port_memory_per_core(port: _Port) -> None:
    """``mem_per_cpu`` is memory per core: where the job gets another count of cores per node on
    the target (a GPU job gets the site's cores per GPU, 16 on one site, 24 on another), its
    memory would change as many times, unsaid. It becomes the memory per node it had on the
    source (``mem``), in a ``changed:`` line that says old -> new and why."""
    per_core = port.spec.resources.mem_per_cpu_mb
    if not per_core or port.resources.get("mem_per_cpu") is None or port.refusals:
        return
    before = _cores_per_node(port.spec, port.source)
    try:
        after = _cores_per_node(spec_from_mapping(port.data, source=port.spec.source), port.target)
    except SlurmkitError:
        return   # the ported spec does not read: the final resolve says why
    if before is None or after is None or before == after:
        return
    total = format_size(per_core * before)
    port.set("resources", "mem_per_cpu", None, f"{format_size(per_core)} per core is {total} for the {before} cores per "
             f"node the job had on {port.source.name}; on {port.target.name} it gets {after}, which would make it "
             f"{format_size(per_core * after)}")
    port.set("resources", "mem", total, f"the memory per node the job had on {port.source.name} "
             f"({format_size(per_core)} x {before} cores), kept as the cores per node change to {after}")


def _cores_per_node(spec: JobSpec, profile: SiteProfile) -> Optional[int]:
    """Tasks per node times cores per task, as the resolver renders ``spec`` on ``profile``
    (None where it does not resolve there)."""
    plan = resolve(spec, profile).plan
    if plan is None:
        return None
    directives = dict(plan.directives)
    try:
        return int(directives.get("--ntasks-per-node", 1)) * int(directives.get("--cpus-per-task", 1))
    except ValueError:
        return None


def _port_node_memory(port: _Port) -> None:
    """``mem: node`` (--mem=0) with part of a node's cores had that node's memory; on a cluster of
    bigger nodes it would hold all of one for the same cores. It becomes the memory the job had
    per core on the old node (rounded up to a whole G); a job that filled its node keeps it."""
    tasks, cpus = _source_shape(port)
    used = tasks * cpus
    node = _usual_cpu_node(port.source, used)
    new = _usual_cpu_node(port.target, used)
    if node is None or not node.cores or not node.memory_mib or (used >= node.cores and (new is None or (new.cores or 0) <= used)):
        return   # (a job that filled its node keeps mem: node where the new node is no bigger)
    if _asks_exclusive(port.spec):   # the whole node, its cores too: the program may use them all (OMP_NUM_THREADS=48)
        grown = new is not None and (new.cores or 0) > node.cores
        bigger = (f" of {new.cores} cores, charged whole, where it had {node.cores}: if the program uses {node.cores} cores, "
                  f"drop --exclusive and ask cpus_per_task: {node.cores} and the memory it needs") if grown and new else ""
        port.note("resources.mem", f"mem: node is kept with --exclusive: the job had a whole {port.source.name} node, and has "
                                   f"a whole {port.target.name} node{bigger}")
        return
    share = -(-node.memory_mib * min(used, node.cores) // (node.cores * 1024)) * 1024
    bigger = f" ({new.cores} cores, {format_size(new.memory_mib)})" if new and new.memory_mib else ""
    port.set("resources", "mem", format_size(share), f"mem: node gave the job all of a {port.source.name} node's "
             f"{format_size(node.memory_mib)} for {min(used, node.cores)} of its {node.cores} cores; on {port.target.name} it would "
             f"hold a whole node{bigger} for them: {format_size(share)} is the same memory per core")


def _asks_exclusive(spec: JobSpec) -> bool:
    """Whether the spec's extra directives ask the node for the job alone (--exclusive)."""
    return any(d.split("=")[0] == "--exclusive" for d in spec.extra_directives)


def _usual_cpu_node(profile: SiteProfile, cores: int) -> Optional[NodeType]:
    """The CPU node a job of ``cores`` per node most likely ran on: the most numerous that holds them."""
    fitting = [t for t in profile.node_types if not t.gpus and (t.cores or 0) >= cores]
    return max(fitting, key=lambda t: t.count or 0) if fitting else None


def _largest_cpu_node(profile: SiteProfile) -> Optional[NodeType]:
    cpu = [t for t in profile.node_types if not t.gpus]
    return max(cpu, key=lambda t: t.count or 0) if cpu else None


# ------------------------------------------------------------------------------------ time


def _port_time(port: _Port) -> None:
    limit = port.target.scheduling.max_walltime_seconds
    asked = port.spec.resources.time_s
    if not limit or asked <= limit:
        return
    if port.spec.stage and port.spec.stage.checkpoint:
        return   # the resolver makes it a chain, and says so
    allowed = format_duration(port.source.scheduling.max_walltime_seconds or asked)
    port.set("resources", "time", format_duration(limit), f"{format_duration(asked)} is above {port.target.name}'s maximum walltime "
             f"of {format_duration(limit)} ({port.source.name} allowed {allowed})")
    port.todos.append(f"resources.time: the job asked {format_duration(asked)} and now stops at {port.target.name}'s "
                      f"{format_duration(limit)}: add a stage.checkpoint the program resumes from (slurmkit then runs a "
                      "chain of jobs), or check that it finishes in time, then remove this line")


# --------------------------------------------------------------------------------- modules


def _port_modules(port: _Port) -> None:
    """Drop the source site's own stacks; move a pinned old StdEnv to the target's standard
    environment; check each module against the target's catalogue (modulecat.py), rewriting a
    version it does not have to the nearest one it has."""
    written = port.data.get("environment", {}).get("modules")
    if not written:
        return
    modules = [written] if isinstance(written, str) else list(written)
    kept, reason, checks, commands = _module_list_ported(port, modules)
    _port_renamed_commands(port, commands)
    if kept != modules:
        port.set("environment", "modules", kept, reason)
    for check in checks:
        if check.warning:
            port.warn("environment.modules", check.warning)
    if not port.target.software.catalogue:
        _warn_old_versions(port, kept)


def _module_list_ported(port: _Port, modules: List[str]) -> Tuple[List[str], str, List[ModuleCheck], Dict[str, str]]:
    """The modules ``modules`` become on the target, why (where they change), the catalogue's
    check of each, and the commands of renamed modules (singularity -> apptainer)."""
    renamed, renames, commands = renamed_modules(modules)
    renamed, pinned = with_old_defaults(renamed)
    renames += pinned
    moved = _stdenv_move(port, renamed)
    base, needless = _old_stack_base(port, renamed), _needless_tool_modules(port, renamed)
    kept, checks = _ported_modules(port, [m for m in renamed if m not in base and m not in needless], moved)
    kept, checks = _python_of_packages_made_anew(port, kept, checks)
    kept = _compiler_in_place(kept, checks)
    kept, history = _site_stack_to_stdenv(port, renamed, kept)
    kept, cores = _core_the_compiler_loads(port, kept, modules)
    kept, checks = _bindings_for_the_python(port, kept, checks, modules)
    if kept == modules:
        return kept, "", checks, commands
    history += renames + [f"{module} came with {stack}" for module, stack in base.items()] + list(needless.values())
    rewrites = [c.why for c in checks if c.why and c.new not in cores] + list(cores.values())
    return kept, _modules_reason(modules, moved, port, history + rewrites), checks, commands


def _python_of_packages_made_anew(port: _Port, kept: List[str], checks: List[ModuleCheck]) -> Tuple[List[str], List[ModuleCheck]]:
    """A python the target still has but builds no wheels for (python/3.10 where 3.12 is the
    oldest served), in a job that installs its packages anew each run (a virtualenv slurmkit
    makes in $SLURM_TMPDIR from its list): moved to the nearest served, since nothing built for
    the old one is reused and its wheels may be missing. A reused virtualenv keeps its python
    (changing it would break the environment; its rebuild to-do names the python), and so does a
    python that a module the job loads has Python packages for, where the nearest served has none."""
    venv = (port.data.get("environment") or {}).get("venv")
    written = (port.data.get("environment") or {}).get("modules") or ()
    if port.target.software.stdenv and port.target.software.stdenv in written:
        return kept, checks   # the spec pins the target's own stack: every version is kept, python too
    if not isinstance(venv, dict) or not (venv.get("packages") or venv.get("requirements")) or \
            not str(venv.get("path") or "$SLURM_TMPDIR").startswith(("$SLURM_TMPDIR", "${SLURM_TMPDIR}")):
        return kept, checks
    moved = [served_python(m, port.target) or ModuleCheck(m, m) for m in kept]
    if {c.module for c in python_bindings(port.target, [c.new for c in moved])} - {c.module for c in python_bindings(port.target, kept)}:
        return kept, checks   # a module's Python packages are built for the old python, not the new one
    return [c.new for c in moved], checks + [c for c in moved if c.why]


def _bindings_for_the_python(port: _Port, kept: List[str], checks: List[ModuleCheck],
                             written: List[str]) -> Tuple[List[str], List[ModuleCheck]]:
    """A module with Python packages (scipy-stack, arrow, opencv), built for other Pythons than the
    one the ported job loads: where port chose its version, the nearest built for that Python;
    where the job pinned it, a to-do (the job's code was written against that version)."""
    moved = []
    for check in python_bindings(port.target, kept):
        if check.module in written or check.new == check.module:
            checks = checks + [check]
            continue
        moved.append(ModuleCheck(check.module, check.new, why=check.why))
    renames = {c.module: c.new for c in moved}
    return [renames.get(m, m) for m in kept], checks + moved


def _compiler_in_place(kept: List[str], checks: Sequence[ModuleCheck]) -> List[str]:
    """A compiler a build needs (intel/2023.2.1 before nwchem/7.2.3) loaded where the job loaded
    its gcc, which it replaces, so that the MPI after it is the new compiler's build."""
    needed = [c.before for c in checks if c.before and c.before.startswith("intel/")]
    gcc = next((m for m in kept if m.startswith("gcc/")), None)
    if not needed or gcc is None:
        return kept
    return [needed[0] if m == gcc else m for m in kept if m != needed[0] or m == gcc]


def _port_renamed_commands(port: _Port, commands: Dict[str, str]) -> None:
    """The command of a renamed module (singularity -> apptainer), in the launch and setup lines."""
    if not commands:
        return
    _rewrite_launch(port, lambda text: renamed_commands(text, commands))
    _rewrite_setup(port, lambda text: renamed_commands(text, commands))


def _rewrite_launch(port: _Port, rewrite: Callable[[str], Tuple[str, List[str]]]) -> None:
    """launch.command and launch.shell as ``rewrite`` gives them, each change said with its reasons."""
    launch = port.data.get("launch")
    for key in ("command", "shell"):
        text = launch.get(key) if isinstance(launch, dict) else None
        if isinstance(text, str):
            new, reasons = rewrite(text)
            if reasons:
                port.set("launch", key, new, "; ".join(reasons))


def _rewrite_setup(port: _Port, rewrite: Callable[[str], Tuple[str, List[str]]]) -> None:
    """environment.setup's lines as ``rewrite`` gives them, the change said with every reason."""
    setup = port.data.get("environment", {}).get("setup") or []
    if isinstance(setup, list):
        moves = [rewrite(line) if isinstance(line, str) else (line, []) for line in setup]
        if any(reasons for _, reasons in moves):
            port.set("environment", "setup", [new for new, _ in moves], "; ".join(sorted({r for _, rs in moves for r in rs})))


#: a setup line that sources a file (``source $HOME/gromacs/bin/GMXRC``, ``. ~/env.sh``)
_SOURCED = re.compile(r"(?:^|[;&|\n])\s*(source|\.)\s+(\S+)")


def _port_programs(port: _Port) -> None:
    """A module moved to a new major version may run another program (NAMD 3 runs namd3, not
    namd2): a documented rename is made in the setup and launch lines, any other program of
    that module named there is a to-do (programs.py)."""
    written = port.data.get("environment", {}).get("modules") or []
    moved = major_moves(list(port.spec.environment.modules), [written] if isinstance(written, str) else list(written))
    if not moved:
        return
    launch = port.data.get("launch")
    setup = port.data.get("environment", {}).get("setup") or []
    own_build = _own_build(setup)
    for section, key in (("launch", "command"), ("launch", "shell")):
        text = launch.get(key) if isinstance(launch, dict) else None
        if isinstance(text, str):
            new, reasons, todos = program_moves(text, moved, own_build)
            if reasons:
                port.set(section, key, new, "; ".join(reasons))
            port.todos += [f"{section}.{key}: {todo}, then remove this line" for todo in todos]
    if isinstance(setup, list):
        _port_setup_programs(port, setup, moved, own_build)


def _own_build(setup) -> str:
    """The first file a setup line sources that is not a virtualenv's activate: it may put a
    build of the user's own first on PATH (programs.program_moves)."""
    lines = [line for line in setup if isinstance(line, str)] if isinstance(setup, list) else []
    return next((m.group(2) for line in lines for m in [_SOURCED.search(line)] if m and not m.group(2).endswith("/activate")), "")


def _port_setup_programs(port: _Port, setup: list, moved, own_build: str) -> None:
    moves = [program_moves(line, moved, own_build) if isinstance(line, str) else (line, [], []) for line in setup]
    if any(reasons for _, reasons, _ in moves):
        port.set("environment", "setup", [new for new, _, _ in moves], "; ".join(sorted({r for _, rs, _ in moves for r in rs})))
    port.todos += sorted({f"environment.setup: {t}, then remove this line" for _, _, ts in moves for t in ts})


def _port_python_words(port: _Port) -> None:
    """``python3.9`` (a command, or a venv's ``lib/python3.9``) in the launch, setup and variables,
    where the job now loads another Python: written for that Python (pythonwords.py)."""
    written = port.data.get("environment", {}).get("modules") or []
    version = python_version([written] if isinstance(written, str) else list(written))
    if version is None:
        return
    _rewrite_launch(port, lambda text: moved_python_words(text, version))
    environment = port.data.get("environment", {})
    setup, variables = environment.get("setup"), environment.get("variables")
    if isinstance(setup, list):
        _move_python_words(port, "setup", dict(enumerate(setup)), version, list)
    if isinstance(variables, dict):
        _move_python_words(port, "variables", variables, version, dict)


def _move_python_words(port: _Port, key: str, values: Dict[Any, Any], version: str, shape: Any) -> None:
    """environment.KEY's values (setup's lines by their index) with python3.N moved, said once."""
    moved: Dict[Any, Any] = {}
    reasons: List[str] = []
    for name, value in values.items():
        moved[name], why = moved_python_words(value, version) if isinstance(value, str) else (value, [])
        reasons += [reason for reason in why if reason not in reasons]
    if reasons:
        port.set("environment", key, list(moved.values()) if shape is list else moved, "; ".join(reasons))


def _port_unloaded_programs(port: _Port) -> None:
    """A science code (namd2, gmx, pw.x) the job runs with no module that provides it came from
    the old shell's modules: on the target nothing loads it, so a to-do names the module there."""
    if port.source.name == port.target.name:
        return
    written = port.data.get("environment", {}).get("modules") or []
    modules = [written] if isinstance(written, str) else list(written)
    texts = [text for _, text in spec_shell_fields(port.spec)]
    port.todos += [unloaded_todo(program, port.target) for program in unloaded_programs(modules, texts)]


def _port_old_paths(port: _Port) -> None:
    """A path into an older stack's folders (/cvmfs/.../easybuild/software/2020/...) that the
    job names by hand is kept, but not silently: a to-do names it and what replaces it (oldpaths.py)."""
    written = port.data.get("environment", {}).get("modules") or []
    loaded = {m.partition("/")[0] for m in ([written] if isinstance(written, str) else written)}
    paths = old_stack_paths(port.target, spec_fields(port.spec))
    for path in sorted(paths, key=lambda p: p.field.startswith("environment.variables.")):   # a variable moves into setup[0]: last
        instead = in_the_loaded_module(path) if path.module in loaded else None
        why = (f"{path.path} is in the {path.year} software stack, not {port.target.name}'s {port.target.software.stdenv}: "
               f"the same file of the {path.module} module the job loads, whose folder Lmod sets in ${eb_root(path.module)}")
        if instead is None or not _rewrite_field(port, path.field, (path.path, instead), why, module_file(path, instead)):
            port.todos.append(f"{path.field}: {advice(path, port.target)}, then remove this line")


def _rewrite_field(port: _Port, field: str, change: Tuple[str, str], why: str, declares: Tuple[Tuple[str, ...], ...]) -> bool:
    """``old`` replaced by ``new`` (which names a variable) in the spec's ``field`` (spec_fields'
    names: a variable, a set-up line, the launch), as a change; False where that field is not a
    plain string here. A variable's value is written as it is (single-quoted): one whose new
    value names a variable moves into the set-up, as an export bash expands."""
    match = re.fullmatch(r"environment\.variables\.(.+)|environment\.setup\[(\d+)\]|launch\.(command|shell)", field)
    old, new = change
    if match is None:
        return False
    if match.group(1):
        return _variable_into_setup(port, match.group(1), change, why, declares)
    section, key = ("launch", match.group(3)) if match.group(3) else ("environment", "setup")
    holder = port.data.get(section)
    value = holder.get(key) if isinstance(holder, dict) else None
    if match.group(2):
        index = int(match.group(2))
        if not isinstance(value, list) or index >= len(value) or not isinstance(value[index], str):
            return False
        port.set(section, key, [v.replace(old, new) if i == index else v for i, v in enumerate(value)], why, declares)
        return True
    if not isinstance(value, str):
        return False
    port.set(section, key, value.replace(old, new), why, declares)
    return True


def _variable_into_setup(port: _Port, name: str, change: Tuple[str, str], why: str, declares: Tuple[Tuple[str, ...], ...]) -> bool:
    old, new = change
    environment = port.data.get("environment") or {}
    variables = dict(environment.get("variables") or {})
    value = variables.get(name)
    if not isinstance(value, str) or not re.fullmatch(r"[\w$/.:+=-]*", value.replace(old, new)):
        return False
    del variables[name]
    port.set("environment", "variables", variables or None, why, declares)
    setup = environment.get("setup") or []
    port.set("environment", "setup", [f'export {name}="{value.replace(old, new)}"', *([setup] if isinstance(setup, str) else setup)],
             f"{name} names {new.split('/')[0]}, which bash expands in a set-up line (a variable's value is written as it is)")
    return True


def _port_kept_modules(port: _Port) -> None:
    """Module lines slurmkit keeps as written (environment.setup and launch.shell: in an if, a
    loop, a function; and those of a file they source that is beside the spec) are not rewritten
    with environment.modules. Each that would not load as written on the target (an old StdEnv,
    the source site's own stack, a module or version the target's catalogue lacks) is a to-do in
    the ported spec, which ``check`` reports until done (modulelines.py: check judges them alike)."""
    launch = port.data.get("launch")
    fields = shell_fields(port.spec.environment.setup, launch.get("shell") if isinstance(launch, dict) else None,
                          launch.get("command") if isinstance(launch, dict) else launch)
    for line in module_line_problems(port.target, fields, port.folder):
        if not _kept_module_line_ported(port, line):
            port.todos.append(port_todo(line, port.target.name))
    for field, command in unread_pipelines(fields, port.folder):
        port.todos.append(f"{field}: `{command}` runs a pipeline whose file is not beside the spec: the modules it loads, and "
                          f"the account (clusterOptions) and queue of the jobs it submits, were written for {port.source.name}; "
                          f"check them for {port.target.name} (module spider), then remove this line")


_MODULE_USE = re.compile(r"\bmodule\s+use\b")


def _kept_module_line_ported(port: _Port, line: ModuleLine) -> bool:
    """A kept ``module load`` line of the spec (not of a file it sources) rewritten as
    environment.modules is, where its modules are written out on one line and every module the
    rewrite loads would load on the target: ``module load StdEnv/2020 python/3.8`` in an if
    becomes ``module load StdEnv/2023 python/3.11.5``, the same as the spec's own list would."""
    command = bashtree.walk(bashtree.parse(line.command).statements)
    argv = next(iter(command), None)
    modules = bashtree.loaded_modules(argv.argv) if argv is not None and not line.sourced else None
    if not modules or any(m.startswith("-") for m in modules) or _MODULE_USE.search(" ".join(t for _, t in spec_shell_fields(port.spec))):
        return False   # after `module use`, the user's own modules load with these: rebuilt by the user, with the to-do
    new, reason, _, _ = _module_list_ported(port, modules)
    if not new or any(module_problem(port.target, m, False) for m in new):
        return False
    spelled = re.search(r"(?<!\S)" + r"\s+".join(map(re.escape, modules)) + r"(?!\S)", line.command)
    return spelled is not None and _rewrite_kept_line(port, line, line.command.replace(spelled.group(0), " ".join(new), 1), reason)


def _rewrite_kept_line(port: _Port, line: ModuleLine, command: str, reason: str) -> bool:
    """The kept field of ``line`` with its command (on that one line of the field) as ``command``."""
    section, key, index = ("launch", "shell", None) if line.field == "launch.shell" else \
        ("environment", "setup", int(line.field[len("environment.setup["):-1]))
    holder = port.data.get(section) or {}
    text = holder.get(key) if index is None else (holder.get(key) or [None] * (index + 1))[index]
    lines = text.split("\n") if isinstance(text, str) else []
    if "\n" in line.command or len(lines) < line.line or lines[line.line - 1].count(line.command) != 1:
        return False
    lines[line.line - 1] = lines[line.line - 1].replace(line.command, command)
    new_text = "\n".join(lines)
    why = f"`{line.command}` (its line {line.line}) -> `{command}`: {reason}"
    if index is None:
        port.set(section, key, new_text, why, declares=(("modules", "*"),))
    else:
        port.set(section, key, [new_text if i == index else old for i, old in enumerate(holder[key])], why, declares=(("modules", "*"),))
    return True


def _ported_modules(port: _Port, modules: List[str], moved: Optional[Tuple[str, str]]) -> Tuple[List[str], List[ModuleCheck]]:
    """The modules the ported spec loads, and the catalogue's check of each (none without one)."""
    kept = [m for m in modules if not SITE_STACK_MODULES.match(m)]
    if moved:
        kept = _under_stdenv(port, kept, moved[1])
    elif _pins_target_stack(port, kept):
        return _same_stack_checks(port, kept)
    checks = _checked_modules(port, kept)
    return ([m for c in checks for m in c.loads] if checks else kept), checks


def _same_stack_checks(port: _Port, modules: List[str]) -> Tuple[List[str], List[ModuleCheck]]:
    """Under the target's own StdEnv, a version the catalogue does not document is kept with a
    question (_pins_target_stack); one the target has not installed at all (blast+/2.14.0 is
    Narval's AVX2 build, not Fir's) cannot load there, so it is rewritten as on any port."""
    checks = [c if c.absent or c.before else ModuleCheck(c.module, c.module, warning=undocumented(c, port.target) if c.why else c.warning)
              for c in _checked_modules(port, modules)]
    return ([m for c in checks for m in c.loads] if checks else modules), checks


def _pins_target_stack(port: _Port, modules: List[str]) -> bool:
    """The spec pins the target's own standard environment (StdEnv/2023 to a StdEnv/2023 cluster):
    the Alliance's clusters serve one stack (CVMFS), so a version that loaded where the job ran
    loads on the target. The catalogue lists only the versions a page documents (r/4.4.0,
    r/4.5.0, not r/4.3.1): a version it lacks is kept with the question check asks, never
    rewritten, which would break an R or Julia library built for it."""
    stdenv = port.target.software.stdenv
    return bool(stdenv) and stdenv in modules and port.source.software.stdenv == stdenv


def _old_stack_base(port: _Port, modules: List[str]) -> Dict[str, str]:
    """{module: the old stack it came with}: the base layer of an old stack the spec loads
    (nixpkgs/16.09 with StdEnv/2016.4, software.old_stacks), which goes with that stack."""
    stacks = port.source.software.old_stacks
    named = {base: module for module in modules if module in stacks for base in stacks[module].base if base in modules}
    return {**_lone_old_stack_base(port, modules), **named}


def _lone_old_stack_base(port: _Port, modules: List[str]) -> Dict[str, str]:
    """{module: the old stacks it came with}: the base layer of old stacks loaded without their
    StdEnv (``module load nixpkgs/16.09 gcc/7.3.0`` ran under the stack the cluster gave by
    default then); it goes as that StdEnv would, unless the target's standard environment is one of them."""
    stacks: Dict[str, List[str]] = {}
    for name, stack in port.source.software.old_stacks.items():
        for base in stack.base:
            if base in modules:
                stacks.setdefault(base, []).append(name)
    return {base: " or ".join(names) for base, names in stacks.items() if port.target.software.stdenv not in names}


#: Module families that put GNU Parallel on PATH (Niagara's NiaEnv had one).
PARALLEL_MODULES = ("gnu-parallel", "parallel")


def _needless_tool_modules(port: _Port, modules: List[str]) -> Dict[str, str]:
    """{module: why it goes}: a GNU Parallel module, where the target's profile says that
    `parallel` needs none (``software.modules.parallel: ""``, from the site's own pages); the
    internet proxy module, where the target's compute nodes reach the internet themselves
    (``storage.internet_on_compute``) and it names no such module (``software.modules.httpproxy``)."""
    tools = port.target.software.modules
    needless = {}
    if tools.get("parallel") == "":
        needless.update({m: f"{m}: GNU Parallel is on PATH on {port.target.name} without a module" for m in modules
                         if m.split("/")[0].lower() in PARALLEL_MODULES})
    if not tools.get("httpproxy") and port.target.storage.internet_on_compute is True:
        needless.update({m: f"{m}: {port.target.name}'s compute nodes reach the internet without a proxy module" for m in modules
                         if m.split("/")[0].lower() == "httpproxy"})
    needless.update(_old_compatibility_layer(port, modules))
    return needless


def _old_compatibility_layer(port: _Port, modules: List[str]) -> Dict[str, str]:
    """gentoo/2020, the compatibility layer (the OS programs under /cvmfs/.../gentoo/2020) of
    StdEnv/2020, which loaded it, loaded again by hand: under StdEnv/2023, which loads its own
    gentoo/2023 (its module file, StdEnv/2023.lua), an old layer could only mix two stacks."""
    year = (port.target.software.stdenv or "").partition("/")[2][:4]
    return {m: f"{m} is the compatibility layer of StdEnv/{m.partition('/')[2]}; {port.target.software.stdenv} loads gentoo/{year} itself"
            for m in modules if m.partition("/")[0] == "gentoo" and year and m.partition("/")[2] != year}


#: hidden core modules and the module of each version that loads its own (gcc/12.3: gcccore/.12.3)
_CORE_OF = {"gcccore": ("gcc", "GCC's core libraries"), "cudacore": ("cuda", "CUDA's toolkit")}


def _core_the_compiler_loads(port: _Port, kept: List[str], written: List[str]) -> Tuple[List[str], Dict[str, str]]:
    """The modules without a core module that its parent loads itself: gcccore (GCC's core
    libraries) of each gcc, cudacore (the toolkit) of each cuda. Old scripts loaded them by hand
    to reach modules built on them; loaded again by a name Lmod may not know, or beside a parent
    the port moved to another version (cudacore/.11.8.0 after cuda/12.2), they could only stop
    the job or mix two toolkits. A gcccore goes where the port moved it and a gcc of its version
    loads (the job's, else the target's standard compiler, which its StdEnv loads); a cudacore,
    where the port moved it or its cuda. {new: why it goes}."""
    cores: Dict[str, str] = {}
    for module in kept:
        family, _, version = module.partition("/")
        if family in _CORE_OF:
            parent = _parent_loading(port, family, version.lstrip("."), kept, written, module not in written)
            if parent:
                old = next((w for w in written if w.partition("/")[0] == family), module)
                named = f" ({module})" if module not in written else ""   # the version the port moved it to
                cores[module] = f"{old} goes: {parent} loads {_CORE_OF[family][1]}{named} itself"
    return [m for m in kept if m not in cores], cores


def _parent_loading(port: _Port, family: str, version: str, kept: List[str], written: List[str], moved: bool) -> str:
    """The module the ported spec loads that loads this core module itself, where the core goes
    (_core_the_compiler_loads); '' where it stays."""
    parents = [m for m in kept if m.partition("/")[0] == _CORE_OF[family][0]]
    if family == "gcccore":
        compilers = parents or [port.target.software.modules.get("gcc") or ""]
        return next((m for m in compilers if moved and m.partition("/")[2] == version), "")
    moved_parents = [m for m in parents if m not in written]
    return next(iter(parents if moved else moved_parents), "")


def _site_stack_to_stdenv(port: _Port, modules: List[str], kept: List[str]) -> Tuple[List[str], List[str]]:
    """A site's own old stack (NiaEnv/2019b), dropped, is replaced by the target's standard
    environment, so that the ported spec says which stack its modules now come from."""
    stdenv = port.target.software.stdenv
    dropped = [m for m in modules if SITE_STACK_MODULES.match(m) and m in port.source.software.old_stacks]
    if not (stdenv and dropped) or any(m.startswith("StdEnv/") for m in kept):
        return kept, []
    return [stdenv] + kept, [f"{port.target.name}'s standard environment is {stdenv}"]


def _stdenv_move(port: _Port, modules: List[str]) -> Optional[Tuple[str, str]]:
    """(the StdEnv the spec pins, the target's standard environment) where the two differ; else None."""
    old, new = next((m for m in modules if m.startswith("StdEnv/")), None), port.target.software.stdenv
    return (old, new) if old and new and old != new else None


def _under_stdenv(port: _Port, modules: List[str], stdenv: str) -> List[str]:
    """The modules with the target's StdEnv in place of the old one; without a catalogue to
    check them against (_checked_modules), each version becomes the one the target's profile
    names (_module_under)."""
    if port.target.software.catalogue:
        return [stdenv if m.startswith("StdEnv/") else m for m in modules]
    return [stdenv if m.startswith("StdEnv/") else _module_under(m, stdenv, port.target) for m in modules]


def _checked_modules(port: _Port, modules: List[str]) -> List[ModuleCheck]:
    """Each module checked against the target's catalogue (none without one)."""
    return catalogue_checks(port.target, modules)


def _port_rebuilds(port: _Port) -> None:
    """A reused virtualenv and the programs the job runs from the user's folders were built for
    the old cluster's stack: each is a to-do to rebuild for the target's (rebuild.py); so are a
    Julia project and an R library, on a new cluster or a new julia or R (stackenvs.py)."""
    modules = port.data.get("environment", {}).get("modules") or []
    launch = port.data.get("launch")
    fields = shell_fields(port.spec.environment.setup, launch.get("shell") if isinstance(launch, dict) else None)
    port.todos += rebuild_todos(port.spec, [modules] if isinstance(modules, str) else list(modules), fields, port.source, port.target)
    gpus = port.data.get("resources", {}).get("gpus")
    port.todos += stack_environment_todos(port.spec, [modules] if isinstance(modules, str) else list(modules), fields,
                                          port.source, port.target, str(gpus) if gpus else "")


def _warn_old_versions(port: _Port, modules: List[str]) -> None:
    """A pinned version other than the one the target's profile names may be gone there (old
    scripts pin the versions of their day: python/3.6, gcc/9.3.0); the port cannot know, so it says so."""
    for module in modules:
        family, _, version = module.partition("/")
        usual = port.target.software.modules.get(family)
        if version and usual and not (usual + ".").startswith(module + ".") and family != "StdEnv":
            port.warn("environment.modules", f"{module}: {port.target.name}'s profile names {usual}; check that {module} "
                      f"exists there ('module spider {module}') or use {usual}")


def _module_under(module: str, stdenv: str, target: SiteProfile) -> str:
    family, _, version = module.partition("/")
    if family == "StdEnv":
        return stdenv
    if not version:
        return module
    return target.software.modules.get(family) or family


def _modules_reason(before: List[str], moved: Optional[Tuple[str, str]], port: _Port, rewrites: List[str]) -> str:
    reasons = []
    dropped = [m for m in before if SITE_STACK_MODULES.match(m)]
    if dropped:
        reasons.append(f"{', '.join(dropped)} belonged to {port.source.name}'s own stack; {port.target.name} uses the Alliance stack")
    if moved and port.target.software.catalogue:
        reasons.append(f"{moved[0]} is deprecated; {port.target.name}'s standard environment is {moved[1]}")
    elif moved:
        reasons.append(f"{moved[0]} is deprecated; {port.target.name}'s standard environment is {moved[1]}, and versions of "
                       "the old one become the site's (or the default: check them with 'module spider NAME')")
    return "; ".join(reasons + rewrites)


# ------------------------------------------------------------------------- directives, account


def _port_directives(port: _Port) -> None:
    written = port.data.get("extra_directives")
    if not written:
        return
    kept: List[str] = []
    dropped: List[str] = []
    for directive in written:
        option = directive.split("=", 1)[0]
        (dropped if option in SITE_BOUND_OPTIONS else kept).append(directive)
    if dropped:
        what = sorted({SITE_BOUND_OPTIONS[d.split("=", 1)[0]] for d in dropped})
        verb = "names" if len(dropped) == 1 else "name"
        port.set(None, "extra_directives", kept or None, f"{', '.join(dropped)} {verb} {port.source.name}'s {' and '.join(what)}, "
                 f"which {port.target.name} does not have")


def _port_submitted_options(port: _Port) -> None:
    """An sbatch the job runs keeps the options its line gives (submitlines): each that names the
    old cluster's GPUs, partitions or RAC account is a to-do."""
    if port.source.name == port.target.name:
        return
    port.todos.extend(submitted_option_todos(port.data, port.target.name, lambda gpu: _gpu_type_advice(port, gpu),
                                             lambda account: account.startswith(CLUSTER_BOUND_ACCOUNTS)))


def _gpu_type_advice(port: _Port, gpu_type: str) -> Optional[str]:
    """Why a GPU type an sbatch line asks for does not do on the target, and its closest GPU
    there (as the port chooses for the job's own); None where the target has that type."""
    for model in _gpu_models(port.target):
        if gpu_type in (mig_names(model.gpus, model.mig) if model.mig else whole_gpu_names(model.gpus)):
            return None
    wanted = _find_source_gpu(gpu_type, port.source)
    chosen = _closest_gpu(wanted, port.target)[0] if wanted else None
    if chosen is None:
        return f"{port.target.name} has no {gpu_type} GPU"
    spelling = chosen.spelling if chosen.mig else sbatch_gpu_name(chosen.gpus)
    return f"{port.target.name} has no {gpu_type} GPU; its closest is the {chosen.label} ({spelling})"


def _port_dependencies(port: _Port) -> None:
    """Job ids are one cluster's: on another the id names no job (sbatch refuses it) or someone
    else's. The ported spec leaves them out, with a to-do that says how to wait again."""
    deps = port.spec.dependencies
    if not deps or port.source.name == port.target.name:
        return
    ids = ", ".join(job for d in deps for job in d.job_ids)
    port.set(None, "dependencies", None, f"job {ids} is a job of {port.source.name}, which {port.target.name} does not know")
    port.todos.append(f"dependencies: the job waited for job {ids} of {port.source.name}: to wait for the job it stands for on "
                      f"{port.target.name}, `slurmkit submit SPEC --after JOBID`, or dependencies: [{{after: "
                      f"{deps[0].type}, jobs: [JOBID]}}], then remove this line")


def _port_site_paths(port: _Port) -> None:
    """What the job writes under a folder read-only inside the target's jobs (Trillium's
    /project), and paths of the source's own layout (Niagara's /scratch/g/group/user): each a
    to-do, since only the user knows where the files go now (sitepaths.py)."""
    fields = spec_shell_fields(port.spec)
    owners = [port.source] if port.source.name != port.target.name else []
    owners += [p for p in retired_layouts() if p.name not in (port.source.name, port.target.name)]
    said: set = set()
    for owner in owners:        # the source's layout first, then any retired cluster's (a script moved between them)
        own = [u for u in own_paths(owner, port.target, fields + log_fields(port.spec)) if u.path not in said]
        if own:
            port.todos.append(own_path_todo(own, owner, port.target))
            said.update(u.path for u in own)
    uses = read_only_uses(port.target, fields) + read_only_logs(port.target, port.spec)
    port.todos += [read_only_todo(use, port.target) for use in uses]
    place = files_moved_to(port.source, port.target)
    if place:
        port.todos.append(files_elsewhere_todo(user_paths(fields + log_fields(port.spec)), port.source, port.target, place))


def _port_account(port: _Port) -> None:
    """A RAC account (rrg-, rpp-) is granted for one cluster and may not exist on the target. A
    note, not a to-do: sbatch checks the account when the job is submitted and refuses one that
    does not exist at once, in its own words, so nothing can run wrong or fail late for it."""
    account = port.spec.account
    if account and account.startswith(CLUSTER_BOUND_ACCOUNTS) and port.source.name != port.target.name:
        port.note("account", f"{account!r} is a RAC allocation, granted for one cluster: if {port.target.name} has none by "
                  "that name, sbatch refuses the job at once (Invalid account); use your def- account then, which exists everywhere")


# ---------------------------------------------------------------------------------- output


def ported_text(ported: Ported, original: Optional[str] = None, original_data: Any = None) -> str:
    """The ported spec as YAML, headed by comments that list each change and why (so the file
    itself says what moved); the same port gives the same bytes. Given the ``original`` text
    of the spec (read as ``original_data``), the rest of that file is kept as written, with its
    comments, key order and quoting (roundtrip.py); else the mapping is written afresh."""
    from slurmkit.core.todos import TODO_PREFIX

    header = [f"{TODO_PREFIX}{todo}" for todo in written_todos(ported.todos, original)]
    header += [f"# Ported from {ported.source} to {ported.target} by slurmkit port."]
    header += [f"#   {line}" for change in ported.changes for line in _wrapped(str(change))]
    for note in ported.notes:
        first, *rest = _wrapped(note)
        header += [f"# note: {first}"] + [f"#   {line}" for line in rest]
    if original is not None:
        from slurmkit.core.roundtrip import rewritten_text

        return rewritten_text(original, original_data, ported.spec, header)
    import yaml

    body = yaml.safe_dump(ported.spec, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096)
    return "\n".join(header) + "\n" + body


def written_todos(todos: Sequence[str], original: Optional[str]) -> List[str]:
    """Each to-do once, and none the spec already holds: four kept module lines that would not
    load say it once; verification of the port finding what import's found (``script: verify:
    X``) adds nothing, as the kept line already asks it."""
    from slurmkit.core.todos import pending_import_notes

    pending = pending_import_notes(original) if original is not None else ()
    return [t for t in dict.fromkeys(todos) if not any(p == t or p.endswith(": " + t) for p in pending)]


def _wrapped(text: str, width: int = 96) -> List[str]:
    import textwrap

    return textwrap.wrap(text, width, subsequent_indent="    ") or [""]
