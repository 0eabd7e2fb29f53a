"""The site rules behind a script's #SBATCH values, as comment lines above the directives they
explain: the cores a GPU may have, what the memory asked is, and where a site's jobs must be
submitted from and write to. A reader sees why 12 and --mem=0 without the profile at hand.

Each note is a whole comment line above its directive, never a trailing ``# ...`` after an
#SBATCH value, which some Slurm versions read as part of the value. sbatch reads #SBATCH lines
up to the first command, so comment lines between them are safe.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from slurmkit.core.units import format_size
from slurmkit.resolve.siterules import node_sources
from slurmkit.resolve.sizing import gpu_fraction
from slurmkit.sites.profiles import NodeType, SiteProfile

#: A note: the directive it stands above ("" for the top of the header) and its text.
Note = Tuple[str, str]

#: The pages that state a site's cores per GPU, most specific first.
_CORES_PAGES = ("Using_GPUs_with_Slurm", "Allocations_and_compute_scheduling", "Quickstart")


def header_notes(profile: SiteProfile, gpus, node_types: Sequence[NodeType], memory: Optional[Tuple[str, str]],
                 memory_asked: bool) -> Tuple[Note, ...]:
    """The notes of a job's header. ``gpus``: resolve's GpuChoice (None: a CPU job);
    ``memory``: the --mem directive; ``memory_asked``: the spec set the memory (no rule to show)."""
    notes = _where_jobs_run(profile, gpus is not None)
    if gpus is not None:
        types = [t for t in node_types if t.gpus] or list(gpus.node_types)
        notes += _with_gpu_count_rule(_gpu_share(profile, gpus, types, memory, memory_asked), profile, gpus)
    return tuple(notes)


def _with_gpu_count_rule(notes: List[Note], profile: SiteProfile, gpus) -> List[Note]:
    """Where a site takes one GPU or whole GPU nodes (Trillium: 1 or a multiple of 4), the header
    says so (a user who edits 1 to 2, or 4 to 6, is refused at submission), on the cores line above
    the GPUs' where there is one, so that the part a user edits stays short."""
    rule = profile.rules.multi_node_gpus
    if rule is None:
        return notes
    source = f" ({rule.source[0]})" if rule.source else ""
    text = f"1 GPU or a multiple of {rule.gpus_per_node} per job{source}"
    if notes and notes[-1][0] == "--cpus-per-task":
        return notes[:-1] + [("--cpus-per-task", f"{notes[-1][1]}; {text}")]
    return notes + [("--gpus-per-node", f"{profile.name}: {text}")]


def _where_jobs_run(profile: SiteProfile, uses_gpus: bool) -> List[Note]:
    """Where a site's jobs must be submitted from and write to, where its rules say (Trillium:
    $HOME and $PROJECT are read-only in jobs; GPU jobs go from the GPU login node)."""
    read_only = profile.rules.read_only_in_job
    if read_only is None:
        return []
    places = " and ".join(p for p in read_only.paths if p.startswith("$")) or ", ".join(read_only.paths)
    login = profile.rules.login_nodes
    hosts = (login.gpu if uses_gpus else login.cpu) if login else ()
    where = [f"{'GPU' if uses_gpus else 'CPU'} jobs from {', '.join(hosts)}"] if hosts else []
    if uses_gpus and any(p.gpus and p.do_not_name for p in profile.rules.partition_limits):
        where.append("no --partition")
    source = f"({read_only.source[0]})." if read_only.source else ""
    where_to = (f"submit from {read_only.write_to} and write there" if read_only.write_to
                else "submit from and write to a folder outside them")
    rest = " ".join(filter(None, (", ".join(where), source)))
    return [("", f"{profile.name}: {where_to}: {places} are read-only in jobs;" + (f" {rest}" if rest else ""))]


def _gpu_share(profile: SiteProfile, gpus, types: Sequence[NodeType], memory: Optional[Tuple[str, str]],
               memory_asked: bool) -> List[Note]:
    """The cores a GPU may have and what the memory asked is, with the page that says so."""
    most = min((t.gpus.max_cores_per_gpu for t in types if t.gpus and t.gpus.max_cores_per_gpu), default=None)
    model = types[0].gpus.model.upper() if types and types[0].gpus else "GPU"
    if profile.scheduling.mem_request is False:
        share = f"{most} cores and " if most else ""
        return [("--cpus-per-task", f"{profile.name}: each {model} comes with {share}its share of the node's memory "
                                    "(--mem is ignored)")]
    notes = []
    if most:
        page = _cores_page(profile, types)
        notes.append(("--cpus-per-task", f"{profile.name}: at most {most} cores per {model}" + (f" ({page})" if page else "")))
    if memory and memory[0] == "--mem" and not memory_asked:
        notes.append(("--mem", _memory_rule(memory[1], gpus, types, profile)))
    return notes


def _cores_page(profile: SiteProfile, types: Sequence[NodeType]) -> str:
    sources = [url for t in types for url in node_sources(t, profile)]
    for page in _CORES_PAGES:
        for url in sources:
            if page in url:
                return url
    return sources[0] if sources else ""


def _memory_rule(value: str, gpus, types: Sequence[NodeType], profile: SiteProfile) -> str:
    if value == "0":
        return "--mem=0: all of each node's memory, as the job takes every core of its nodes"
    node = types[0] if len(types) == 1 else None
    if node is not None and node.gpus and node.gpus.host_memory_mib and gpu_fraction(gpus) == 1.0:
        page = next((url for url in node_sources(node, profile) if "Allocations_and_compute_scheduling" in url), "")
        return (f"--mem={value}: {profile.name} recommends {format_size(node.gpus.host_memory_mib)} per "
                f"{node.gpus.model.upper()}" + (f" ({page})" if page else ""))
    if node is not None and node.memory_mib and node.gpus and node.gpus.count > 1 and gpu_fraction(gpus) == 1.0:
        return (f"--mem={value}: for each GPU, its share of the node's memory "
                f"({format_size(node.memory_mib)} over {node.gpus.count} GPUs)")
    return f"--mem={value}: for each GPU, its share of the node's memory"
