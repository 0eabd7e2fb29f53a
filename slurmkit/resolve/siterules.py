"""The site rules that decide whether a job runs at all, enforced from the profile's ``rules:``
section (slurmkit/sites/profiles.py ``_RULES``; each rule's ``source`` cites the site's documentation).

Two kinds of check, kept apart because resolve() reads nothing from the host:

- ``job_findings``: from the spec and the plan alone (a command that calls ``sbatch`` where jobs
  cannot submit jobs, a torch pin too old for the job's GPU, a python older than the site still
  builds wheels for, a ``--tmp`` above the site's range, part of each GPU node on several nodes,
  a partition's limits and job-size caps, a partition named where the site asks for none, a
  blocked module, a GPU request without a model, memory or cores above a GPU's share, a download
  where compute nodes reach no internet, Lustre's lfs where the file systems are not Lustre).
  resolve() calls it.
- ``host_findings``: from the submit host, where ``slurmkit check`` and ``slurmkit submit`` run
  (the cluster the host is on, the folders the job will write, the login node it is submitted
  from, a host that cannot submit at all, a requirements file). Job.check and Job.submit call it.
- ``tmp_for_staged``: from the bytes the staged inputs take on a node's disk, measured on the
  submit host at render time (localfacts.py) and passed to resolve(), which adds the --tmp.

Every finding names the rule's source and the fix.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from slurmkit.core.findings import Finding
from slurmkit.core.gpu_names import sbatch_gpu_name
from slurmkit.core.records import Record
from slurmkit.core.sbatch_options import full_long_name
from slurmkit.core.units import format_duration, format_size
from slurmkit.sites.modulecat import and_list, lacking_versions, python_held
from slurmkit.sites.profiles import SiteProfile

#: A shell word that runs sbatch: at the start, or after a separator, a pipe or a subshell.
_CALLS_SBATCH = re.compile(r"(?:^|[\s;&|(`])(?:\S*/)?sbatch(?=\s|$|[;&|)`])")
#: A requirement pin: name, operator, version (``torch==2.4.0``, ``torch<2.5``, ``torch~=2.3.0``).
_PIN = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(?:\[[^\]]*\])?\s*(==|<=|<|~=|===)\s*([0-9][0-9A-Za-z.+\-*]*)")


def _source(urls: Sequence[str]) -> str:
    return f" (source: {urls[0]})" if urls else ""


def _installs_packages(spec) -> bool:
    """Whether the job installs Python packages (a virtualenv it builds, a pip line): only then
    does the wheelhouse's python range matter to it."""
    return spec.environment.venv is not None or any(re.search(r"\bpip3?\b", line) for line in spec.environment.setup)


def _version(text: str) -> Tuple[int, ...]:
    """The numeric release of a version string: ``2.4.0+cu121`` -> (2, 4, 0); ``3.11.5`` -> (3, 11, 5)."""
    numbers = []
    for part in re.split(r"[.+\-]", text):
        match = re.match(r"\d+", part)
        if not match:
            break
        numbers.append(int(match.group()))
    return tuple(numbers)


def _older(pin_version: str, operator: str, minimum: str) -> bool:
    """Whether a pin allows only versions below ``minimum``."""
    pinned, least = _version(pin_version), _version(minimum)
    if operator == "<":
        return pinned <= least
    if operator == "~=":          # ~=2.3.0 means >=2.3.0, ==2.3.*: below when its prefix is
        return pinned[:-1] + (10 ** 6,) < least if len(pinned) > 1 else pinned < least
    return pinned < least         # ==, ===, <=


# ------------------------------------------------------------------------- from the spec alone

#: Modules whose code runs only on NVIDIA GPUs (CUDA and the libraries built on it).
CUDA_MODULES = ("cuda", "cudnn", "nccl", "cudacore")


def job_findings(spec, profile: SiteProfile, gpu_node_types: Sequence = (), modules: Sequence[str] = (),
                 gpu_count: int = 0, launcher: str = "") -> List[Finding]:
    """The rules resolve() can check: ``gpu_node_types`` are the node types the job's GPU
    request may run on, ``gpu_count`` the GPUs it asks for per node, ``launcher`` the name of
    the launcher that runs its command."""
    from slurmkit.resolve import joblines

    findings: List[Finding] = []
    rules = profile.rules
    gpu_models = [t.gpus.model for t in gpu_node_types]
    findings += _self_submission(spec, profile)
    findings += _gpu_node_rules(profile, gpu_node_types, modules, gpu_count)
    findings += multi_node_gpu_findings(spec, profile, gpu_node_types, gpu_count)
    findings += partition_findings(spec, profile, gpu_count)
    findings += _pins(spec.environment.venv.packages if spec.environment.venv else (), "environment.venv.packages",
                      profile, gpu_models)
    blocked = blocked_module_findings(spec.environment.modules, profile)
    findings += blocked
    findings += old_stack_findings([m for m in spec.environment.modules if not _blocked(m, profile)], profile)
    findings += gpu_model_findings(spec, profile)
    findings += internet_findings(spec, profile, modules)
    findings += joblines.host_cpu_flag_findings(spec, profile) + joblines.preload_launcher_findings(spec, profile, launcher)
    findings += joblines.venv_place_findings(spec, profile) + joblines.gpu_profiling_findings(spec, profile)
    findings += joblines.python_env_findings(spec, profile) + time_partition_findings(spec, profile)
    findings += joblines.lustre_command_findings(spec, profile)
    if rules.oldest_python and _installs_packages(spec):
        for module in modules:
            name, _, version = module.partition("/")
            # python/3 alone is Lmod's default python 3, the newest: only a minor version can be too old
            if name == "python" and len(_version(version)) >= 2 and _version(version)[:2] < _version(rules.oldest_python.version)[:2]:
                findings.append(Finding("warning", "environment.modules", old_python_advice(module, spec, profile, modules)))
    findings += [Finding("warning", "environment.modules", text) for text in lacking_versions(profile, spec.environment.modules)]
    tmp = rules.tmp_request
    if tmp and spec.resources.tmp_mb is not None and spec.resources.tmp_mb > tmp.max_mib:
        findings.append(Finding("error", "resources.tmp",
                                f"--tmp={format_size(spec.resources.tmp_mb)} is more local disk than any {profile.name} node gives "
                                f"(--tmp from {format_size(tmp.min_mib)} to {format_size(tmp.max_mib)}); stage less, or read the "
                                f"rest from scratch{_source(tmp.source)}"))
    return findings


#: The page of ``avail_wheels``, which lists the wheelhouse's wheels of a package for a python
#: (``avail_wheels 'numpy<1.23' --python 3.9``); it takes several names at once (the spaCy page
#: runs ``avail_wheels spacy thinc thinc_gpu_ops``).
AVAIL_WHEELS_SOURCE = "https://docs.alliancecan.ca/wiki/Python/en"


def old_python_advice(module: str, spec, profile: SiteProfile, modules: Sequence[str]) -> str:
    """What to do about ``module``, a python older than the oldest ``profile`` builds wheels for,
    that agrees with what the job pins: "load the oldest served or newer" where nothing holds
    it; with the job's pinned packages to check for a wheel (``pins_of``), which may have none for
    it; and where a module the job loads is built for older pythons only (python_held), keep it,
    or move that module with it (its nearest version built for the newer python)."""
    oldest = profile.rules.oldest_python
    assert oldest is not None
    head = f"{module} is older than the pythons {profile.name} still builds wheels for (python/{oldest.version} is the oldest)"
    pins, held = pins_of(spec), python_held(profile, modules, oldest.version)
    tool = f"avail_wheels {' '.join(shlex.quote(p) for p in pins)} --python {oldest.version}"
    urls = dict.fromkeys([*oldest.source[:1], *([AVAIL_WHEELS_SOURCE] if pins else [])])
    source = f" (source: {'; '.join(urls)})" if urls else ""
    if held is None:
        checked = f", and check that the pinned {and_list(pins)} {'has' if len(pins) == 1 else 'have'} a wheel for it ({tool})" \
            if pins else ""
        return f"{head}; load python/{oldest.version} or newer{checked}{source}"
    doubt = f", and {and_list(pins)} may have no wheel for python {oldest.version}" if pins else ""
    if held.stuck:
        move = f" until {and_list(held.stuck)} is built for python {oldest.version} or newer"
    else:
        move = f", or load python/{oldest.version} with {and_list(held.moves)} (the nearest built for it)" + \
            (f" and pins that have a wheel for it ({tool})" if pins else "")
    return f"{head}, but {held.conflict}{doubt}: keep {module} (no new wheels come for it){move}{source}"


def pins_of(spec) -> List[str]:
    """The packages the job installs at a fixed or capped version (``numpy==1.23.5``,
    ``tqdm<4.60``, ``torch~=2.3.0``), from its venv and the ``pip install`` lines of its setup: a
    newer python's wheelhouse may have no wheel of them. A bare name or a lower bound gets the
    newest wheel there is."""
    words = list(spec.environment.venv.packages) if spec.environment.venv else []
    for line in spec.environment.setup:
        try:
            argv = shlex.split(line, comments=True)
        except ValueError:
            continue
        if re.search(r"\bpip3?\b", line) and "install" in argv:
            words += argv[argv.index("install") + 1:]
    return list(dict.fromkeys(w.split("#", 1)[0].strip() for w in words if not w.startswith("-") and _PIN.match(w)))


#: How far above a partition's walltime bound a job is said to be just above it (a tenth).
JUST_ABOVE = 0.10


def time_partition_findings(spec, profile: SiteProfile) -> List[Finding]:
    """A warning for a walltime a little above one of the bounds of the site's time partitions
    (rules.time_partitions): the job can run only in the longer partitions, where the bound
    would have let it run in more (the page: more scheduling opportunities)."""
    rule, asked = profile.rules.time_partitions, spec.resources.time_s
    if rule is None:
        return []
    bound = next((b for b in rule.bounds[:-1] if b < asked <= b * (1 + JUST_ABOVE)), None)
    if bound is None:
        return []
    return [Finding("warning", "resources.time", f"{format_duration(asked)} is just above {profile.name}'s {format_duration(bound)} "
                    f"partitions: a job of {format_duration(bound)} or less can also run in them, which gives it more scheduling "
                    f"opportunities; ask "
                    f"{format_duration(bound)} if the job fits in it{_source(rule.source)}")]


def old_stack_findings(modules: Sequence[str], profile: SiteProfile) -> List[Finding]:
    """A module stack of the cluster's past (software.old_stacks: StdEnv/2016.4, NiaEnv/2019b)
    loads only where it still exists, and builds against compilers of its day: said, with what it
    was, so that an old script's spec does not pass as current."""
    findings = []
    for module in modules:
        stack = profile.software.old_stacks.get(module)
        if stack is None:
            continue
        doubt = "; UNVERIFIED: seen in user scripts, in no documentation read" if stack.unverified else ""
        now = f"{profile.software.stdenv} is the standard environment now" if profile.software.stdenv else "the site has newer stacks"
        move = "load that, and module versions of it, instead"
        if profile.is_retired and profile.status.successor:
            move = (f"{profile.name} is retired: `slurmkit port` moves the job to {profile.status.successor} "
                    "and the stack to its standard environment")
        findings.append(Finding("warning", "environment.modules", f"{module} is an old stack ({stack.note}{doubt}); {now}; {move}"
                                f"{_source(stack.source)}"))
    return findings


def _blocked(module: str, profile: SiteProfile) -> Optional[str]:
    """The blocked version ``module`` is (StdEnv/2018 blocks StdEnv/2018.3), or None."""
    rule = profile.rules.blocked_modules
    return next((b for b in rule.modules if module == b or module.startswith(b + ".")), None) if rule else None


def blocked_module_findings(modules: Sequence[str], profile: SiteProfile) -> List[Finding]:
    """An error for a module version the site blocked on purpose (Narval: StdEnv/2016 and
    2018): ``module load`` fails in the job, which then runs without what it needs."""
    rule = profile.rules.blocked_modules
    findings = []
    for module in modules:
        blocked = _blocked(module, profile)
        if rule and blocked:
            now = f"load {profile.software.stdenv} and module versions of it" if profile.software.stdenv else "load a newer one"
            findings.append(Finding("error", "environment.modules", f"{module}: {profile.name} has blocked {blocked} on purpose "
                                    f"(module load fails in the job); {now}, or ask technical support for software only the old "
                                    f"environment has{_source(rule.source)}"))
    return findings


def gpu_kinds(profile: SiteProfile) -> List[str]:
    """The GPU models and MIG instances a request without a model may land on, as sbatch spells them."""
    kinds = [t.gpus for t in profile.node_types if t.gpus]
    return list(dict.fromkeys([sbatch_gpu_name(g) for g in kinds] + [m.gres for g in kinds for m in g.mig]))


def gpu_model_findings(spec, profile: SiteProfile) -> List[Finding]:
    """A warning for a GPU request that names no model where the cluster has more than one kind
    of GPU or MIG instance: the site asks for a model, and the job may be refused or land on any
    of them (Nibi: the MI300A nodes, AMD GPUs where CUDA code does not run)."""
    rule, request = profile.rules.gpu_model_asked, spec.resources.gpus
    if rule is None or request is None or request.model is not None:
        return []
    names = gpu_kinds(profile)
    if len(names) < 2:
        return []
    amd = [t.gpus.model for t in profile.node_types if t.gpus and t.gpus.vendor == "amd"]
    risk = (f"; it may land on the {amd[0]} nodes, whose GPUs are AMD (ROCm: CUDA code does not run there)"
            if amd else "")
    return [Finding("warning", "resources.gpus", f"'gpus: {request.count}' names no GPU model: {profile.name} has {', '.join(names)}, "
                    f"and the site asks every GPU request to name one (one without may be refused, or sent to any of them){risk}; "
                    f"ask e.g. 'gpus: {names[0]}:{request.count}'{_source(rule.source)}")]


def internet_findings(spec, profile: SiteProfile, modules: Sequence[str] = ()) -> List[Finding]:
    """Where compute nodes reach no internet (rules.no_internet): a download in the job's
    command or setup is an error (a warning where the site grants exceptions on request), and a
    ``pip install`` from the index a warning (pip retries the index, then may fall back to the
    wheelhouse). None where the job loads the site's proxy module (httpproxy)."""
    rule = profile.rules.no_internet
    proxy = profile.software.modules.get("httpproxy")
    if rule is None:
        return wheelhouse_findings(spec, profile)
    if proxy and any(m.split("/")[0] == proxy.split("/")[0] for m in modules):
        return []
    where = f"{profile.name}'s compute nodes reach no internet"
    findings = []
    for field, fetched, pips in _fetches_by_field(spec):
        if pips:
            findings.append(Finding("warning", field, f"{_named(pips)} from the package index, but {where}: add --no-index "
                                    f"(the wheelhouse), or list the packages in environment.venv.packages (slurmkit installs "
                                    f"them so){_proxy_hint(proxy)}{_source(rule.source)}"))
        for kind, piece, host in fetched:
            if kind != "pip":
                level, unless = ("warning", " unless support granted your group an exception") if rule.exceptions else ("error", "")
                findings.append(Finding(level, field, f"'{piece}' reaches {host}, but {where}{unless}: download it on the login "
                                        f"node before you submit (into the spec's folder, or stage it){_proxy_hint(proxy)}"
                                        f"{_source(rule.source)}"))
    return findings


def wheelhouse_findings(spec, profile: SiteProfile) -> List[Finding]:
    """Where compute nodes reach the package index but the site builds wheels for its stack and
    asks pip to take them (rules.wheelhouse): a ``pip install`` without --no-index is a warning."""
    rule = profile.rules.wheelhouse
    if rule is None:
        return []
    found = []
    for field, _, pips in _fetches_by_field(spec):
        if pips:
            found.append(Finding("warning", field, f"{_named(pips)} from PyPI, but {profile.name} "
                                 f"provides wheels built for its software stack and strongly recommends them: add --no-index (the "
                                 f"wheelhouse; a package it lacks can be downloaded first), or list the packages in "
                                 f"environment.venv.packages{_source(rule.source)}"))
    return found


def _fetches_by_field(spec) -> List[Tuple[str, List[Tuple[str, str, str]], List[str]]]:
    """(field, what its lines fetch, its pip lines) for the launch and the set-up."""
    from slurmkit.resolve.downloads import fetches

    command = (spec.launch.shell,) if spec.launch.shell else (" ".join(spec.launch.command),)
    places = [("launch.shell" if spec.launch.shell else "launch.command", command), ("environment.setup", spec.environment.setup)]
    found = [(field, list(fetches(lines))) for field, lines in places]
    return [(field, fetched, [piece for kind, piece, _ in fetched if kind == "pip"]) for field, fetched in found]


def _named(pips: Sequence[str]) -> str:
    """The pip lines of one field, said in one finding ("'pip install a' and 'pip install b'
    install"): five lines from PyPI are one thing to change, not five."""
    quoted = [f"'{piece}'" for piece in pips]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
    return f"{listed} install{'s' if len(quoted) == 1 else ''}"


def _proxy_hint(proxy: Optional[str]) -> str:
    return f", or load the {proxy} module (environment.modules), which lets a job through" if proxy else ""


def gpu_share_findings(profile: SiteProfile, gpus, cores: int, memory: Optional[Tuple[str, str]], node_types: Sequence,
                       need_mib: int = 0) -> List[Finding]:
    """Warnings for memory per node above the GPUs' share of their node (its memory over its
    GPUs, or the site's figure per MIG instance) by more than one GPU's share: a little above it
    (what ``report --apply`` writes with its headroom) leaves every other GPU nearly its share,
    more takes a whole other GPU's. And for cores above a MIG instance's share
    (whole GPUs' cores: resolve's cores-per-GPU advice). The site recommends at most the share;
    more than a whole node has is resolve's error (no node fits). ``need_mib``: the host memory
    the job's GPU processes hold (sizing.process_floor_mib): asking that much is never warned of,
    so that check agrees with what ``report --apply`` writes."""
    rule = profile.rules.gpu_share
    if rule is None or gpus is None or not node_types or profile.scheduling.mem_request is False:
        return []
    from slurmkit.resolve.sizing import bundle

    share, name = bundle(gpus, node_types), gpus.spelling.rsplit(":", 1)[0] if ":" in gpus.spelling else "GPU"
    each = "instance" if "g." in name else "GPU"
    findings = []
    asked = _memory_mib(memory, cores)
    if share.memory_mib and asked and asked > max(share.memory_mib * (gpus.count + 1), need_mib):
        findings.append(Finding("warning", "resources.mem", f"{format_size(asked)} per node for {gpus.count} {name} is more than "
                                f"the memory of {gpus.count + 1} ({profile.name} recommends at most {format_size(share.memory_mib)} "
                                f"per {each}, a node's share): the job is charged for it as for more GPUs, and leaves another GPU "
                                f"of the node without its memory; ask at most {format_size(share.memory_mib * gpus.count)}, or a "
                                f"larger {each}{_source(rule.source)}"))
    if each == "instance" and cores > share.cores * gpus.count:
        findings.append(Finding("warning", "resources.cpus_per_task", f"{cores} cores for one {name} instance is more than "
                                f"{profile.name} recommends ({share.cores} at most); ask cpus_per_task: {share.cores}, or a larger "
                                f"instance or a whole GPU{_source(rule.source)}"))
    return findings


def _memory_mib(memory: Optional[Tuple[str, str]], cores: int) -> Optional[int]:
    """MiB per node a memory directive asks (None for --mem=0, a whole node's)."""
    if memory is None or memory[1] == "0":
        return None
    from slurmkit.core.units import parse_size

    return parse_size(memory[1]) * (cores if memory[0] == "--mem-per-cpu" else 1)


def _gpu_node_rules(profile: SiteProfile, node_types: Sequence, modules: Sequence[str], count: int) -> List[Finding]:
    """Per node type: GPUs taken whole (Nibi's MI300A nodes), and CUDA asked on AMD GPUs."""
    findings = []
    whole = [t for t in node_types if t.gpus.whole_node and count != t.gpus.count]
    if whole and len(whole) == len(node_types):
        kind = whole[0]
        findings.append(Finding("error", "resources.gpus",
                                f"{profile.name}'s {kind.name} nodes are scheduled whole: ask for all {kind.gpus.count} "
                                f"{kind.gpus.model} GPUs of a node ({sbatch_gpu_name(kind.gpus)}:{kind.gpus.count}), "
                                f"not {count}{_source(node_sources(kind, profile))}"))
    cuda = [m for m in modules if m.split("/")[0] in CUDA_MODULES]
    amd = [t for t in node_types if t.gpus.vendor == "amd"]
    if cuda and amd and len(amd) == len(node_types):
        findings.append(Finding("error", "environment.modules",
                                f"{', '.join(cuda)} is NVIDIA's CUDA, but {profile.name}'s {amd[0].gpus.model} GPUs are AMD: CUDA "
                                f"code does not run there; build for ROCm (/opt/rocm) and drop the CUDA modules, or ask for NVIDIA "
                                f"GPUs{_source(node_sources(amd[0], profile))}"))
    return findings


def multi_node_gpu_findings(spec, profile: SiteProfile, node_types: Sequence, count: int) -> List[Finding]:
    """A GPU job on several nodes where the site gives such jobs whole GPU nodes only (Trillium:
    --gpus-per-node=4); a part of each node is refused by the scheduler."""
    rule, nodes = profile.rules.multi_node_gpus, spec.resources.nodes
    if rule is None or nodes <= 1 or not count or count == rule.gpus_per_node:
        return []
    name = sbatch_gpu_name(node_types[0].gpus) if node_types else "GPU"
    return [Finding("error", "resources.gpus",
                    f"{count} GPU(s) per node on {nodes} nodes: {profile.name} gives a job on more than one node whole GPU nodes "
                    f"only; ask 'gpus: {name}:{rule.gpus_per_node}' ({rule.gpus_per_node * nodes} GPUs in all), or 'nodes: 1'"
                    f"{_source(rule.source)}")]


def named_partition(spec) -> Optional[Tuple[int, str]]:
    """The index in extra_directives and the partition it names (``--partition=debug``,
    ``-p=debug``, a prefix sbatch reads as --partition), or None: the default partition takes it."""
    for index, directive in enumerate(spec.extra_directives):
        option, _, value = directive.partition("=")
        name = "partition" if option == "-p" else full_long_name(option[2:]) if option.startswith("--") else None
        if name == "partition" and value:
            return index, value
    return None


def partition_naming_findings(spec, profile: SiteProfile) -> List[Finding]:
    """A warning for a partition named where the site asks jobs to name none (the Alliance's
    general-purpose clusters: the scheduler picks one from the resources asked; said only where
    the profile gives the site's source), or names one the site asks jobs not to name
    (Trillium's GPU compute partition: rules.partition_limits' do_not_name)."""
    rule, named = profile.scheduling.partitions, named_partition(spec)
    if named is None:
        return []
    index, partition = named
    if rule.source and rule.name_partition == "never" and partition not in rule.allowed:
        other = f" (--partition={rule.allowed[0]} where software insists on one)" if rule.allowed else ""
        return [Finding("warning", f"extra_directives.{index}", f"--partition={partition}: {profile.name} asks jobs not to name a "
                        f"partition: the scheduler picks one from the resources asked; leave it out{other}{_source(rule.source)}")]
    uses_gpus = bool(spec.resources.gpus)
    return [Finding("warning", f"extra_directives.{index}", f"--partition={partition}: {profile.name} asks "
                    f"{'GPU' if uses_gpus else 'CPU'} jobs not to name the {partition} partition: the scheduler picks it; "
                    f"leave it out{_source(limit.source)}")
            for limit in profile.rules.partition_limits if limit.do_not_name and limit.gpus == uses_gpus and limit.partition == partition]


def partition_findings(spec, profile: SiteProfile, gpu_count: int) -> List[Finding]:
    """The limits of the partition the job runs in (the one it names, else the default) for its
    subcluster: nodes, GPUs, and time, as the site's partition table states them."""
    named_at, uses_gpus = named_partition(spec), bool(spec.resources.gpus)
    named = named_at[1] if named_at else None
    findings: List[Finding] = partition_naming_findings(spec, profile)
    for rule in profile.rules.partition_limits:
        if rule.gpus == uses_gpus and (named == rule.partition or (named is None and rule.default)):
            findings += _partition_limit_findings(spec, profile, rule, gpu_count * spec.resources.nodes)
    return findings


def _partition_limit_findings(spec, profile: SiteProfile, rule, gpus: int) -> List[Finding]:
    """Each limit of one partition the job breaks, with the fix."""
    where = f"{profile.name}'s {rule.partition} partition" + (" (where a job that names no partition runs)" if rule.default else "")
    nodes, time_s, cited = spec.resources.nodes, spec.resources.time_s, _source(rule.source)
    findings = _size_findings(rule, where, nodes, gpus, cited, _rac_account(spec.account))
    limit = next((t for most, t in rule.max_time_by_gpus if gpus <= most), rule.max_time_s) if gpus else rule.max_time_s
    if limit and time_s > limit:
        size = f" for {gpus} GPU(s)" if gpus and rule.max_time_by_gpus else ""
        findings.append(Finding("error", "resources.time", f"{format_duration(time_s)} is longer than {where} allows{size} "
                                f"({format_duration(limit)} at most); ask less time{_other_partition(rule)}{cited}"))
    if rule.min_time_s and time_s < rule.min_time_s:
        findings.append(Finding("error", "resources.time", f"{format_duration(time_s)} is shorter than {where} takes "
                                f"({format_duration(rule.min_time_s)} at least); ask {format_duration(rule.min_time_s)} or more, "
                                f"or bundle short tasks into one longer job{_shorter_partition(profile, rule)}{cited}"))
    return findings


#: The account prefixes of a RAC allocation (Trillium_Quickstart: "rrg- or rpp-").
RAC_PREFIXES = ("rrg-", "rpp-")


def _rac_account(account: Optional[str]) -> bool:
    return bool(account) and str(account).startswith(RAC_PREFIXES)


def _size_findings(rule, where: str, nodes: int, gpus: int, cited: str, rac: bool = False) -> List[Finding]:
    """Nodes and GPUs in all above the partition's caps: an error above the largest (with an
    allocation, where the site caps jobs without one lower); between the two a warning, since
    slurmkit cannot see whether the job's account has the allocation that lifts the cap (an
    rrg- or rpp- account is one: no warning)."""
    findings = []
    sizes = (("resources.nodes", nodes, "nodes", rule.max_nodes, rule.nodes_without_allocation),
             ("resources.gpus", gpus, "GPUs in all", rule.max_gpus, rule.gpus_without_allocation))
    for field, asked, what, most, lower in sizes:
        with_one = " with a RAC allocation" if lower else ""
        if most and asked > most:
            findings.append(Finding("error", field, f"{asked} {what} is more than {where} takes ({most} at most{with_one}); "
                                    f"ask fewer{_other_partition(rule)}{cited}"))
        elif lower and asked > lower and not rac:
            findings.append(Finding("warning", field, f"{asked} {what} is more than {where} takes without a RAC allocation "
                                    f"({lower} at most; {most or 'more'} with one): the job runs only under an account with a RAC "
                                    f"allocation (rrg-, rpp-), which slurmkit cannot see; without one ask {lower} or fewer{cited}"))
    return findings


def _other_partition(rule) -> str:
    return ", or leave the partition out (extra_directives) for the default one" if not rule.default else ""


def _shorter_partition(profile: SiteProfile, rule) -> str:
    """A partition of the same subcluster with no minimum time, for a short test."""
    other = next((r.partition for r in profile.rules.partition_limits
                  if r.gpus == rule.gpus and not r.default and not r.min_time_s), None)
    return f"; a short test may go to the {other} partition (extra_directives: [--partition={other}])" if other else ""


def node_sources(node_type, profile: SiteProfile) -> Tuple[str, ...]:
    """The pages a node type of the profile cites (its `source:`)."""
    source = (profile.raw.get("node_types") or {}).get(node_type.name, {}).get("source")
    return tuple(source) if isinstance(source, list) else ((source,) if source else ())


def _self_submission(spec, profile: SiteProfile) -> List[Finding]:
    rule = profile.rules.jobs_submit_jobs
    if rule is None or rule.allowed:
        return []
    # The argv, the bash line of launch.shell, and the setup lines: each runs inside the job.
    command = (spec.launch.shell,) if spec.launch.shell else spec.launch.command
    places = [("launch.shell" if spec.launch.shell else "launch.command", command), ("environment.setup", spec.environment.setup)]
    field = next((name for name, lines in places if any(_CALLS_SBATCH.search(line) for line in lines)), None)
    if field is None:
        return []
    return [Finding("error", field,
                    f"the job calls sbatch, but jobs cannot submit jobs on {profile.name}{_source(rule.source)}; submit "
                    f"the next job from the login node: 'resubmit:' in the spec (slurmkit submits every link of the chain from "
                    f"the login node) or 'slurmkit submit --after JOBID'")]


def _pins(requirements: Iterable[str], field: str, profile: SiteProfile, gpu_models: Iterable[str],
          where: str = "") -> List[Finding]:
    models = set(gpu_models)
    findings = []
    for rule in profile.rules.min_versions:
        if rule.gpu_models and not models & set(rule.gpu_models):
            continue
        for line in requirements:
            line = line.split("#", 1)[0]
            match = _PIN.match(line)
            if match and match.group(1).lower().replace("_", "-") == rule.package.lower() \
                    and _older(match.group(3), match.group(2), rule.version):
                on = f" on {'/'.join(rule.gpu_models).upper()} GPUs" if rule.gpu_models else ""
                findings.append(Finding("warning", field,
                                        f"{line.strip()!r}{where} pins {rule.package} below {rule.version}, which {profile.name} "
                                        f"needs{on}; ask for {rule.package}>={rule.version}{_source(rule.source)}"))
    return findings


# ---------------------------------------------------------------------------- from the host

def _expand(path: str, env: Mapping[str, str]) -> Optional[str]:
    """``$VAR`` and ``~`` expanded from ``env``; None when a variable is unset (the rule's
    path is then unknown here, and not guessed)."""
    unset = [name for name in re.findall(r"\$\{?(\w+)\}?", path) if not env.get(name)]
    if unset or "$$" in path:   # $$ is a literal $ in a stage path (userpaths.py): not a variable to expand
        return None
    expanded = re.sub(r"\$\{?(\w+)\}?", lambda m: env[m.group(1)], path)
    if expanded.startswith("~"):
        expanded = env.get("HOME", "~") + expanded[1:]
    return expanded


def expand_variables(path: str, env: Mapping[str, str]) -> Optional[str]:
    """``path`` with its ``$VAR`` and ``~`` from ``env``; None when one is unset."""
    return _expand(path, env)


def _real(path: str) -> str:
    """The path with links resolved (``$HOME/links/scratch`` is /scratch), as far as it exists."""
    return os.path.realpath(path)


def _under(path: str, prefixes: Sequence[Tuple[str, str]]) -> Optional[str]:
    real = _real(path)
    for shown, prefix in prefixes:
        if real == prefix or real.startswith(prefix.rstrip("/") + "/"):
            return shown
    return None


def read_only_findings(spec, profile: SiteProfile, base_dir: Path, log_folder: Path, env: Mapping[str, str]) -> List[Finding]:
    """Errors for each place the job writes that the site makes read-only inside jobs: the log
    folder (slurmkit submit's --folder, by default logs/ beside the spec; a plain sbatch writes
    %x-%j.out in the folder it runs in) and the stage outputs' and checkpoint's destinations
    (relative ones are from the spec's folder, where slurmkit runs sbatch)."""
    rule = profile.rules.read_only_in_job
    if rule is None:
        return []
    prefixes = [(shown, _real(expanded)) for shown in rule.paths for expanded in [_expand(shown, env)] if expanded]
    if not prefixes:
        return []
    fix = rule.fix or "submit from a folder the job can write, or set the output folder there"
    places: List[Tuple[str, Optional[str], str]] = [("folder", str(log_folder), "the job's log and exit-status files")]
    stage = spec.stage
    for index, out in enumerate(stage.outputs if stage else ()):
        places.append((f"stage.outputs.{index}.to", _destination(out.to, base_dir, env), "a copy-back destination"))
    if stage and stage.checkpoint:
        places.append(("stage.checkpoint.to", _destination(stage.checkpoint.to, base_dir, env), "the checkpoint destination"))
    places += [(field, folder, "the job's log folder") for field, folder in log_folders(spec, base_dir, env)]
    findings = []
    for field, path, what in places:
        shown = _under(path, prefixes) if path else None
        if shown:
            findings.append(Finding("error", field,
                                    f"{path} ({what}) is under {shown}, which is read-only inside {profile.name} jobs, so the job "
                                    f"cannot write it; {fix}{_source(rule.source)}"))
    return findings


def _destination(to: str, base_dir: Path, env: Mapping[str, str]) -> Optional[str]:
    expanded = _expand(to, env)
    if expanded is None:
        return None
    return expanded if expanded.startswith("/") else str(base_dir / expanded)


def login_node_findings(profile: SiteProfile, hostname: str, uses_gpus: bool) -> List[Finding]:
    """A GPU job from a CPU login node, or a CPU job from the GPU login node, where the site
    splits them (Trillium); nothing when the host is not one of the site's login nodes."""
    rule = profile.rules.login_nodes
    if rule is None or not hostname:
        return []
    short = hostname.split(".")[0]
    on_gpu = any(fnmatch.fnmatch(short, p) for p in rule.gpu)
    on_cpu = any(fnmatch.fnmatch(short, p) for p in rule.cpu)
    if uses_gpus and on_cpu and rule.gpu:
        return [Finding("error", "resources.gpus", f"{hostname} is a CPU login node: {profile.name} takes GPU jobs only from its GPU "
                        f"login node ({', '.join(rule.gpu)}); log in there and submit again{_source(rule.source)}")]
    if not uses_gpus and on_gpu and rule.cpu:
        return [Finding("error", "resources", f"{hostname} is the GPU login node: {profile.name} takes CPU jobs only from its CPU "
                        f"login nodes ({', '.join(rule.cpu)}); log in there and submit again{_source(rule.source)}")]
    return []


def no_submit_host_findings(profile: SiteProfile, hostname: str) -> List[Finding]:
    """An error on a host the site lets submit no jobs (Trillium's data movers): sbatch fails
    there; the fix is the login node."""
    rule = profile.rules.no_submit_hosts
    short = hostname.split(".")[0]
    if rule is None or not short or not any(fnmatch.fnmatch(short, p) or fnmatch.fnmatch(hostname, p) for p in rule.hosts):
        return []
    login = profile.rules.login_nodes
    there = f" ({', '.join(login.cpu + login.gpu)})" if login else ""
    return [Finding("error", "host", f"{hostname} is one of {profile.name}'s {rule.what}, which cannot submit jobs: log in to a "
                    f"login node{there} and submit from there{_source(rule.source)}")]


def requirements_findings(spec, profile: SiteProfile, base_dir: Path, gpu_models: Iterable[str]) -> List[Finding]:
    """Old pins in the venv's requirements file (read on the submit host)."""
    venv = spec.environment.venv
    if venv is None or not venv.requirements:
        return []
    from slurmkit.core.userpaths import on_submit_host  # ~ and $HOME as the job reads them
    from slurmkit.resolve.loginenv import MAX_REQUIREMENTS_BYTES

    path = on_submit_host(venv.requirements, base_dir)
    if path is None:
        return []
    from slurmkit.core.files import NotARegularFile, TooLarge, read_bytes_bounded

    try:
        lines = read_bytes_bounded(path, MAX_REQUIREMENTS_BYTES).decode("utf-8", "replace").splitlines()
    except (NotARegularFile, TooLarge) as error:
        return [Finding("error", "environment.venv.requirements", f"{path}: {error.strerror}")]
    except OSError:
        return []   # a missing requirements file is reads.missing_local_paths' finding
    return _pins(lines, "environment.venv.requirements", profile, gpu_models, where=f" in {venv.requirements}")


def log_folders(spec, base_dir: Path, env: Mapping[str, str]) -> List[Tuple[str, str]]:
    """``(field, folder)`` of the logs the spec names (logs.output, logs.error): the folder part
    with the job's name and the user filled in (what submit makes), from the spec's folder."""
    from slurmkit.core.logpatterns import absolute, at_submit, folder_part

    logs = spec.logs
    named = [("logs.output", logs.output), ("logs.error", logs.error)] if logs else []
    user = env.get("USER") or env.get("LOGNAME") or ""
    return [(field, absolute(at_submit(folder_part(pattern), spec.name, user).replace("%%", "%") or ".", str(base_dir)))
            for field, pattern in named if pattern]


def log_folder_findings(spec, base_dir: Path, env: Mapping[str, str]) -> List[Finding]:
    """An error for a log folder that cannot be made here: a file in its way, or a folder above
    it that this user cannot write (sbatch writes no log at all into a folder that is not there)."""
    findings = []
    for field, folder in log_folders(spec, base_dir, env):
        problem = _unmakeable(Path(folder))
        if problem:
            findings.append(Finding("error", field, f"the log folder {folder} cannot be made: {problem}; choose a folder "
                                                    "you can write in logs, or make it first"))
    return findings


def _unmakeable(folder: Path) -> Optional[str]:
    """Why ``folder`` cannot be made (or used) by this user, or None."""
    for place in (folder, *folder.parents):
        if place.is_dir():
            return None if os.access(place, os.W_OK | os.X_OK) else f"{place} is not writable by you"
        if place.exists() or place.is_symlink():
            return f"{place} is a file, not a folder"
    return None


def host_findings(spec, profile: SiteProfile, plan, base_dir: Path, log_folder: Path,
                  env: Mapping[str, str], hostname: str) -> List[Finding]:
    """Every rule that needs the submit host; ``plan`` may be None (the spec has errors). A
    job for another cluster than this host's comes first: it is what submit refuses it for."""
    from slurmkit.sites.elsewhere import cluster_findings

    models = gpu_models_of(plan, profile) if plan else ()
    uses_gpus = bool(spec.resources.gpus)
    return (cluster_findings(profile, spec.source, env, hostname)
            + read_only_findings(spec, profile, base_dir, log_folder, env) + log_folder_findings(spec, base_dir, env)
            + login_node_findings(profile, hostname, uses_gpus) + no_submit_host_findings(profile, hostname)
            + requirements_findings(spec, profile, base_dir, models) + prebuilt_env_findings(profile, plan, env, hostname, base_dir))


#: how prebuilt_env_findings starts: submit, which runs sbatch from this host, makes it an error
#: wherever it is said (the job activates the environment from the files this host sees).
NO_PREBUILT_ENV = "no virtualenv is built for this job"


def prebuilt_env_findings(profile: SiteProfile, plan, env: Mapping[str, str], hostname: str = "",
                          base_dir: Optional[Path] = None) -> List[Finding]:
    """An error when the job activates an environment built on the login node (Trillium) and
    none is built here for it (loginenv.py): the job would stop at its first line. A warning
    instead on a host that is none of the site's login nodes (a laptop: the environment may
    well be built on the cluster)."""
    venv = plan.venv if plan else None
    if venv is None or not venv.prebuilt_key:
        return []
    from slurmkit.resolve.loginenv import built_key

    path = _expand(venv.path, env)
    if path is not None and not path.startswith("/") and base_dir is not None:
        path = str(base_dir / path)    # relative: from the spec's folder, where the job starts
    if path is None or built_key(path) == venv.prebuilt_key:
        return []
    rule, login = profile.rules.env_build, profile.rules.login_nodes
    elsewhere = login is not None and bool(hostname) and not any(fnmatch.fnmatch(hostname.split(".")[0], p) for p in login.gpu + login.cpu)
    where = f"on {profile.name}'s login node" if elsewhere else "here"
    return [Finding("warning" if elsewhere else "error", "environment.venv",
                    f"{NO_PREBUILT_ENV} at {path}: {profile.name} builds Python environments on its login "
                    f"nodes and its jobs only activate them; run '{venv.build_command}' {where}, then submit"
                    f"{_source(rule.source if rule else ())}")]


def gpu_models_of(plan, profile: SiteProfile) -> Tuple[str, ...]:
    """The GPU models a planned job may get: those whose spelling its --gpus-per-node names."""
    asked = dict(plan.directives).get("--gpus-per-node") if plan else None
    if not asked:
        return ()
    name = asked.rsplit(":", 1)[0] if ":" in asked else None
    models = []
    for node_type in profile.node_types:
        gpus = node_type.gpus
        if gpus and (name is None or name in (gpus.model, gpus.gres) or any(name == m.gres for m in gpus.mig)):
            models.append(gpus.model)
    return tuple(dict.fromkeys(models))


def tmp_for_staged(spec, profile: SiteProfile, staged) -> Tuple[Optional[int], List[Finding]]:
    """The --tmp (MiB) to add for staged inputs above the default local disk where --tmp reaches
    nodes with more (Rorqual), with a warning saying what was added and why; or an error when even
    the range's largest cannot hold them, or when the spec's own tmp is smaller than they are.
    ``staged`` is localdisk.staged_sizes' (measured on the submit host at render time)."""
    rule, tmpdir = profile.rules.tmp_request, profile.storage.slurm_tmpdir
    if rule is None or tmpdir is None or tmpdir.size_mib is None or not staged:
        return None, []
    from slurmkit.resolve.localdisk import HEADROOM_PERCENT, gib, tmp_for

    total = sum(s.bytes for s in staged)
    staged_mib, need = -(-total // (1 << 20)), tmp_for(total)
    what = f"{gib(total)} staged ({_staged_detail(staged)})"
    asked = spec.resources.tmp_mb
    if asked is not None:
        if staged_mib <= asked:
            return None, []
        return None, [Finding("error", "resources.tmp", f"{what} does not fit the --tmp={format_size(asked)} the spec asks; ask "
                              f"'tmp: {format_size(min(max(need, rule.min_mib), rule.max_mib))}' (--tmp from {format_size(rule.min_mib)} "
                              f"to {format_size(rule.max_mib)}){_source(rule.source)}")]
    if need <= tmpdir.size_mib:
        return None, []
    if staged_mib > rule.max_mib:
        return None, [Finding("error", "stage.inputs", f"{what} is more than any {profile.name} node's local disk holds (--tmp at "
                              f"most {format_size(rule.max_mib)}); stage less, or read the rest from scratch"
                              + ("; if the estimate is too high, set resources.tmp yourself" if any(s.estimated for s in staged) else "")
                              + _source(rule.source))]
    tmp = min(max(need, rule.min_mib), rule.max_mib)
    room = f"{HEADROOM_PERCENT}%"
    sized = f"the staged bytes and {room} more for what the job writes there, rounded up to whole gigabytes"
    if tmp < need:
        sized = f"the range's largest, which leaves less than the {room} beyond the staged bytes that slurmkit asks for what the job writes"
    return tmp, [Finding("warning", "resources.tmp",
                         f"{what} does not fit {profile.name}'s default {format_size(tmpdir.size_mib)} $SLURM_TMPDIR: slurmkit "
                         f"added --tmp={format_size(tmp)} ({sized}), which sends the job to the nodes with more local disk "
                         f"(--tmp from {format_size(rule.min_mib)} to {format_size(rule.max_mib)}; the disk is shared with other "
                         f"jobs on the node); set resources.tmp to choose the size yourself{_source(rule.source)}")]


def _staged_detail(staged) -> str:
    return "; ".join(f"{s.path}: {s.how}" for s in staged)


# ---------------------------------------------------------------------------- as text

#: What ``check`` gives a job that breaks a rule (an "error" stops render, check and submit).
SEVERITIES = ("error", "warning")


class RuleLine(Record):
    """One rule of one profile, as ``profiles show``, docs/profiles.md and the site-rules table
    (``check --site-rules``, docs/site-rules.md) print it: the table groups the lines of every
    cluster by ``rule`` and ``text``, so a rule reaches it only through rule_lines."""

    rule: str       # a stable id, the table's first column (``partition-limits``)
    severity: str   # one of SEVERITIES: what check gives a job that breaks it
    text: str       # what slurmkit checks, in this profile's terms
    source: str     # the rule's first source


def rule_lines(profile: SiteProfile) -> List[RuleLine]:
    """Each rule of ``profile`` as a RuleLine: ``profiles show``, docs/profiles.md and the
    site-rules table print these, so that what is enforced and what is documented agree."""
    lines = (_place_rule_lines(profile) + _limit_rule_lines(profile) + _node_rule_lines(profile) + _partition_rule_lines(profile)
             + _software_rule_lines(profile))
    tmp = profile.rules.tmp_request
    if tmp:
        lines.append(RuleLine("tmp-request", "error",
                              f"--tmp from {format_size(tmp.min_mib)} to {format_size(tmp.max_mib)} reaches nodes with more local disk "
                              f"(slurmkit adds it, sized from the staged inputs, when they do not fit the default $SLURM_TMPDIR; "
                              f"above the range is refused)", tmp.source[0]))
    return lines


def _place_rule_lines(profile: SiteProfile) -> List[RuleLine]:
    """Where a job may write, where it may be submitted from, and what its file systems take."""
    rules, lines = profile.rules, []
    ro = rules.read_only_in_job
    if ro:
        lines.append(RuleLine("read-only-in-job", "error",
                              f"read-only inside jobs: {', '.join(ro.paths)}; check and submit refuse a log folder or copy-back "
                              f"destination there ({ro.fix or 'write elsewhere'})", ro.source[0]))
    if rules.jobs_submit_jobs and not rules.jobs_submit_jobs.allowed:
        lines.append(RuleLine("jobs-submit-jobs", "error",
                              "jobs cannot submit jobs: a command that calls sbatch is refused; slurmkit's chains (resubmit:) "
                              "and --after are submitted from the login node", rules.jobs_submit_jobs.source[0]))
    login = rules.login_nodes
    if login:
        lines.append(RuleLine("login-nodes", "error",
                              f"GPU jobs only from {', '.join(login.gpu) or '?'}, CPU jobs only from {', '.join(login.cpu) or '?'} "
                              f"(check and submit match the host name)", login.source[0]))
    if rules.no_submit_hosts:
        lines.append(RuleLine("no-submit-hosts", "error",
                              f"no job is submitted from the {rules.no_submit_hosts.what} ({', '.join(rules.no_submit_hosts.hosts)}): "
                              "check and submit refuse it there (they match the host name)", rules.no_submit_hosts.source[0]))
    if rules.no_internet:
        exceptions = rules.no_internet.exceptions
        level = "warned about (support may grant an exception)" if exceptions else "refused"
        lines.append(RuleLine("no-internet", "warning" if exceptions else "error",
                              f"compute nodes reach no internet: a download in the command or setup (curl, wget, git clone, a URL) is "
                              f"{level}", rules.no_internet.source[0]))
        lines.append(RuleLine("no-internet-pip", "warning", "compute nodes reach no internet: a pip install without --no-index is "
                              "warned about", rules.no_internet.source[0]))
    filesystem = profile.storage.filesystem
    if filesystem and filesystem.type != "lustre":
        lines.append(RuleLine("lustre-commands", "warning", f"the shared file systems are {filesystem.words()}, not Lustre: a "
                              "Lustre command (lfs setstripe, lfs getstripe, lfs quota, ...) in the command or setup is warned "
                              "about, and port writes it as a to-do", filesystem.source[0]))
    return lines


def _limit_rule_lines(profile: SiteProfile) -> List[RuleLine]:
    """The scheduling limits every job meets (walltime, array size), which resolve() checks."""
    sched, source, lines = profile.scheduling, _first(profile.raw.get("scheduling")), []
    if sched.max_walltime_seconds:
        lines.append(RuleLine("max-walltime", "error", f"{format_duration(sched.max_walltime_seconds)} of walltime at most; "
                              "a longer job is refused (a chain, resubmit:, splits it)", source))
    if sched.min_walltime_advice_seconds:
        lines.append(RuleLine("short-jobs", "warning", f"production jobs should run {format_duration(sched.min_walltime_advice_seconds)} "
                              "or more; a shorter one is warned about", source))
    if sched.max_array_size:
        lines.append(RuleLine("max-array-size", "error", f"{sched.max_array_size} tasks per array at most; a larger array "
                              "is refused", source))
    if sched.max_jobs_per_user:
        lines.append(RuleLine("max-jobs-per-user", "error", f"{sched.max_jobs_per_user} jobs queued or running per user, each "
                              "array task one: a larger array is refused, one above half of it warned about (the user's other "
                              "jobs count too, which slurmkit cannot see)", source))
    whole = sched.whole_node
    if whole and whole.cores:
        lines.append(RuleLine("whole-cpu-nodes", "error", f"CPU jobs take whole nodes of {whole.cores} cores: fewer cores per "
                              "node is refused", source))
    if sched.mem_request is False:
        lines.append(RuleLine("mem-ignored", "error", "memory comes with the node (or GPU): a memory request is refused", source))
    return lines


def _node_rule_lines(profile: SiteProfile) -> List[RuleLine]:
    """How GPU nodes are taken: the GPU counts a node is asked with, whole nodes, AMD GPUs."""
    lines = []
    whole = profile.scheduling.whole_node
    if whole and whole.gpu_counts:
        lines.append(RuleLine("gpus-per-node", "error", f"GPUs per node: {' or '.join(map(str, whole.gpu_counts))}",
                              _first(profile.raw.get("scheduling"))))
    for node_type in profile.node_types:
        gpus = node_type.gpus
        if gpus and gpus.whole_node:
            lines.append(RuleLine("whole-gpu-nodes", "error", f"{node_type.name}: whole nodes only ({sbatch_gpu_name(gpus)}:{gpus.count})",
                                  node_sources(node_type, profile)[0]))
        if gpus and gpus.vendor == "amd":
            lines.append(RuleLine("amd-gpus", "error", f"{node_type.name}: AMD GPUs (ROCm); CUDA modules are refused there",
                                  node_sources(node_type, profile)[0]))
    return lines + _gpu_request_rule_lines(profile)


def _gpu_request_rule_lines(profile: SiteProfile) -> List[RuleLine]:
    """A GPU model named, and memory and cores within the GPUs' share (warnings)."""
    rules = profile.rules
    lines: List[RuleLine] = []
    if not profile.gpu_models:
        return lines
    if rules.gpu_model_asked and len(gpu_kinds(profile)) > 1:
        lines.append(RuleLine("gpu-model-asked", "warning",
                              "name a GPU model: a GPU request without one is warned about where the cluster has more than one kind "
                              "of GPU or MIG instance", rules.gpu_model_asked.source[0]))
    lines += _gpu_node_type_lines(profile)
    if rules.gpu_share and profile.scheduling.mem_request is not False:
        lines.append(RuleLine("gpu-share", "warning",
                              "memory per GPU (and cores per MIG instance) at most the GPU's share of its node: memory above the shares "
                              "of one GPU more, and more cores, are warned about; more than a node has is refused",
                              rules.gpu_share.source[0]))
    return lines


def _gpu_node_type_lines(profile: SiteProfile) -> List[RuleLine]:
    """Per GPU node type: the cores per GPU the site advises, one MIG instance per job, and the
    GPU names the site documents besides the one slurmkit writes."""
    lines = []
    for node_type in profile.node_types:
        gpus, sources = node_type.gpus, node_sources(node_type, profile) or ("",)
        if gpus is None:
            continue
        if gpus.max_cores_per_gpu and not gpus.whole_node and profile.scheduling.mem_request is not False:
            lines.append(RuleLine("cores-per-gpu", "warning", f"{node_type.name}: at most {gpus.max_cores_per_gpu} cores per "
                                  f"{gpus.model} GPU (more is warned about)", _cited(sources, "Using_GPUs_with_Slurm")))
        if gpus.mig:
            lines.append(RuleLine("one-mig-instance", "error", f"{node_type.name}: one MIG instance per job "
                                  f"({', '.join(m.gres for m in gpus.mig)}); more is refused", _cited(sources, "Multi-Instance_GPU")))
        names = [(n, sbatch_gpu_name(gpus)) for n in gpus.synonyms] + [(n, m.gres) for m in gpus.mig for n in m.synonyms]
        if names:
            lines.append(RuleLine("gpu-names", "warning", f"{node_type.name}: the site's other names for its GPUs are read and "
                                  f"written as slurmkit's, with a note: {', '.join(f'{a} as {b}' for a, b in names)}",
                                  (gpus.source or sources)[0]))
    return lines


def _cited(sources: Sequence[str], page: str) -> str:
    """The source that is ``page``'s (the page that states the rule) where the node type cites it, else its first."""
    return next((s for s in sources if f"/{page}" in s), sources[0])


def _partition_rule_lines(profile: SiteProfile) -> List[RuleLine]:
    """Whole GPU nodes for multi-node jobs, and each partition's limits (errors in check)."""
    rules, lines, naming = profile.rules, [], profile.scheduling.partitions
    if naming.source and naming.name_partition == "never":
        but = f" but {' or '.join(naming.allowed)}" if naming.allowed else ""
        lines.append(RuleLine("name-no-partition", "warning",
                              f"name no partition{but}: the scheduler picks one (a partition named in extra_directives is warned about)",
                              naming.source[0]))
    if rules.multi_node_gpus:
        lines.append(RuleLine("multi-node-gpus", "error",
                              f"a GPU job on more than one node takes whole GPU nodes ({rules.multi_node_gpus.gpus_per_node} GPUs per "
                              "node); fewer is refused", rules.multi_node_gpus.source[0]))
    for rule in rules.partition_limits:
        limits = [f"{rule.max_nodes} nodes at most" if rule.max_nodes else "", f"{rule.max_gpus} GPUs at most" if rule.max_gpus else "",
                  f"{format_duration(rule.min_time_s)} at least" if rule.min_time_s else "",
                  f"{format_duration(rule.max_time_s)} at most" if rule.max_time_s else ""]
        limits += [f"{format_duration(t)} at most for up to {g} GPU(s)" for g, t in rule.max_time_by_gpus]
        which = f"{'GPU' if rule.gpus else 'CPU'} jobs in the {rule.partition} partition" + (" (the default)" if rule.default else "")
        limits += [f"{rule.nodes_without_allocation} nodes without a RAC allocation (more is warned about)"
                   if rule.nodes_without_allocation else "",
                   f"{rule.gpus_without_allocation} GPUs without a RAC allocation (more is warned about)"
                   if rule.gpus_without_allocation else ""]
        lines.append(RuleLine("partition-limits", "error", f"{which}: {', '.join(x for x in limits if x)}; check refuses a job "
                              "outside them", rule.source[0]))
        if rule.do_not_name:
            lines.append(RuleLine("partition-not-named", "warning", f"{'GPU' if rule.gpus else 'CPU'} jobs do not name the "
                                  f"{rule.partition} partition: the scheduler picks it (naming it is warned about)", rule.source[0]))
    return lines


def _software_rule_lines(profile: SiteProfile) -> List[RuleLine]:
    """The versions a site needs, and where its Python environments are built."""
    rules, lines = profile.rules, []
    for rule in rules.min_versions:
        if rule.gpu_models and not set(rule.gpu_models) & set(profile.gpu_models):
            continue   # no such GPUs here (Narval has no H100)
        on = f" on {', '.join(rule.gpu_models)} GPUs" if rule.gpu_models else ""
        lines.append(RuleLine("min-versions", "warning",
                              f"{rule.package} {rule.version} or later{on} (a lower pin in venv packages or requirements is warned about)",
                              rule.source[0]))
    if rules.blocked_modules:
        lines.append(RuleLine("blocked-modules", "error",
                              f"blocked on purpose: {', '.join(rules.blocked_modules.modules)} (and their versions); "
                              "loading one is refused",
                              rules.blocked_modules.source[0]))
    if rules.oldest_python:
        lines.append(RuleLine("oldest-python", "warning",
                              f"python/{rules.oldest_python.version} is the oldest python served "
                              "(an older module is warned about where the job installs packages; the advice names the "
                              "job's pinned versions to check with avail_wheels, and keeps the python where a module the "
                              "job loads is built for older pythons only)",
                              rules.oldest_python.source[0]))
    if rules.host_cpu_flags:
        lines.append(RuleLine("host-cpu-flags", "warning", f"compiler flags that build for the host CPU "
                              f"({', '.join(rules.host_cpu_flags.flags)}) in the command or setup are warned about"
                              + (f" (build with {rules.host_cpu_flags.instead})" if rules.host_cpu_flags.instead else ""),
                              rules.host_cpu_flags.source[0]))
    if rules.preload_launcher:
        lines.append(RuleLine("preload-launcher", "warning", f"{rules.preload_launcher.preload} takes effect only under "
                              f"{rules.preload_launcher.launcher}: a job that preloads it and runs with another launcher is "
                              "warned about", rules.preload_launcher.source[0]))
    if rules.time_partitions:
        bounds = ", ".join(format_duration(b) for b in rules.time_partitions.bounds)
        lines.append(RuleLine("time-partitions", "warning", f"partitions by walltime ({bounds}): a time up to a tenth above a bound "
                              "is warned about (at the bound the job can run in more partitions)", rules.time_partitions.source[0]))
    if rules.python_env:
        lines.append(RuleLine("python-env", "warning", "a setup line that sets PYTHONPATH, or loads a module while a virtual "
                              "environment is active, is warned about", rules.python_env.source[0]))
    if rules.mig_no_graphics:
        lines.append(RuleLine("mig-no-graphics", "warning", "MIG instances offer no graphics API (OpenGL, Vulkan): a MIG job whose "
                              "command, setup or variables use one (vglrun, MUJOCO_GL=egl, ...) is warned about",
                              rules.mig_no_graphics.source[0]))
    if rules.wheelhouse and not rules.no_internet:
        lines.append(RuleLine("wheelhouse", "warning", "pip takes the site's wheels (--no-index): a pip install from PyPI in the "
                              "command or setup is warned about", rules.wheelhouse.source[0]))
    if rules.gpu_profiling:
        how = ("only with DCGM disabled at submission (DISABLE_DCGM=1): a GPU job that runs a profiler without the wait for it "
               "is warned about") if rules.gpu_profiling.available else "not available: a GPU job that runs a profiler is warned about"
        lines.append(RuleLine("gpu-profiling", "warning", f"profiling GPUs ({', '.join(('nsys', 'ncu', 'nvprof'))}) is {how}",
                              rules.gpu_profiling.source[0]))
    if rules.venv_not_under:
        lines.append(RuleLine("venv-not-under", "warning", f"no Python virtual environment under {', '.join(rules.venv_not_under.paths)}"
                              " (it may get partially deleted): a venv path or a virtualenv line there is warned about",
                              rules.venv_not_under.source[0]))
    if rules.env_build:
        lines.append(RuleLine("env-build", "error",
                              f"Python environments are built on a login node, in {rules.env_build.path}: 'slurmkit env build SPEC' "
                              "builds the job's there and the job only activates it (check and submit refuse a job whose environment "
                              "is not built)", rules.env_build.source[0]))
    return lines


def _first(section) -> str:
    source = (section or {}).get("source") if isinstance(section, dict) else None
    return (source[0] if isinstance(source, list) else source) or ""


# ---------------------------------------------------------------------------- the table

class RuleRow(Record):
    """One row of the site-rules table: a rule line that ``clusters`` state word for word, and
    the sources they cite for it (one each, in the clusters' order, the same once)."""

    rule: str
    clusters: Tuple[str, ...]
    severity: str
    text: str
    sources: Tuple[str, ...]


def rule_table(profiles: Sequence[SiteProfile]) -> List[RuleRow]:
    """The rule lines of ``profiles``, one row for each (rule, severity, text) with the clusters
    that state it, ordered by rule id: what ``check --site-rules`` prints and docs/site-rules.md
    holds. A line that names no rule id or a severity outside SEVERITIES is refused: a new rule
    reaches the table only by naming both."""
    rows: Dict[Tuple[str, str, str], List[Tuple[str, str]]] = {}
    for profile in sorted(profiles, key=lambda p: p.name):
        for line in rule_lines(profile):
            if line.severity not in SEVERITIES or not line.rule:
                raise ValueError(f"rule line {line.text!r} of {profile.name} names no rule id or severity (one of {SEVERITIES})")
            rows.setdefault((line.rule, line.severity, line.text), []).append((profile.name, line.source))
    table = [RuleRow(rule, tuple(name for name, _ in found), severity, text, tuple(dict.fromkeys(s for _, s in found if s)))
             for (rule, severity, text), found in rows.items()]
    return sorted(table, key=lambda row: (row.rule, row.text))


def rule_table_markdown(rows: Sequence[RuleRow]) -> List[str]:
    """The table as Markdown lines (docs/site-rules.md, ``check --site-rules``)."""
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    def link(source: str) -> str:
        return f"<{source}>" if source.startswith(("http://", "https://")) else f"`{cell(source)}`"

    out = ["| rule | clusters | check gives | what slurmkit checks | source |", "|---|---|---|---|---|"]
    out += [f"| `{row.rule}` | {', '.join(row.clusters)} | {row.severity} | {cell(row.text)} | "
            f"{'<br>'.join(map(link, row.sources)) or '-'} |" for row in rows]
    return out
