"""Build a site profile from the live cluster (``slurmkit profiles detect``).

It reads what SLURM itself knows: ``scontrol show config``, ``scontrol -o show node``,
``scontrol -o show partition``, ``sacctmgr`` (where the user may read it) and one
``sbatch --test-only`` (which submits nothing) to learn whether ``--account`` is required. Nodes are
grouped into node types by cores, sockets, memory, local disk and GRES. What SLURM does not
know (quotas, GPU memory, site advice) is written as ``null`` with a comment that says so, so
the file passes ``profiles validate`` and a person can fill in the rest.

Parsing is kept apart from running the commands: the ``parse_*`` functions take captured text.
"""

from __future__ import annotations

import getpass
import os
import re
import shutil
import socket
import subprocess
from pathlib import Path
from types import MappingProxyType
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from slurmkit.core.errors import ClusterError
from slurmkit.core.records import Record
from slurmkit.core.slurmconf import check_slurm_conf, config_failure
from slurmkit.core.units import format_size, parse_duration

KeyPath = Tuple[str, ...]

_ACCOUNT_ENV = ["SLURM_ACCOUNT", "SBATCH_ACCOUNT", "SALLOC_ACCOUNT"]
_MIG_RE = re.compile(r"(\d+g\.\d+gb)$", re.IGNORECASE)
_KEY_RE = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9_/:.]*)=")
_WHEELHOUSE = Path("/cvmfs/soft.computecanada.ca/custom/python/wheelhouse")
#: the variables of the shell that ran detect that the profile is built from
_ENVIRONMENT = ("HOME", "USER", "CC_CLUSTER", "LOADEDMODULES", "LMOD_CMD", "LMOD_VERSION", "I_MPI_ROOT")


# ------------------------------------------------------------------------------------- facts

class Gres(Record):
    """One GRES entry of a node, ``gpu:p100:2`` -> name gpu, type p100, count 2."""

    name: str
    type: Optional[str]
    # mypy: a field named count overrides tuple.count, which nothing calls on a record;
    # namedtuple allows the name, and mypy itself types gres.count as int.
    count: int  # type: ignore[assignment]

    @property
    def mig_profile(self) -> Optional[str]:
        match = _MIG_RE.search(self.type or "")
        return match.group(1).lower() if match else None


class NodeInfo(Record):
    name: str
    cores: int
    sockets: int
    threads_per_core: int
    memory_mib: int
    tmp_disk_mib: int
    gres: Tuple[Gres, ...]
    partitions: Tuple[str, ...]
    state: str


class PartitionInfo(Record):
    name: str
    default: bool
    max_time: Optional[str]  # SLURM's own text, None when UNLIMITED
    total_nodes: int
    state: str
    exclusive: bool


class NodeGroup(Record):
    """Nodes that are the same to a job: one node type of the profile."""

    name: str
    nodes: Tuple[str, ...]
    cores: int
    sockets: int
    threads_per_core: int
    memory_mib: int
    tmp_disk_mib: int
    gpus: Tuple[Gres, ...]

    @property
    def whole_gpus(self) -> Tuple[Gres, ...]:
        return tuple(g for g in self.gpus if not g.mig_profile)

    @property
    def mig(self) -> Tuple[Gres, ...]:
        return tuple(g for g in self.gpus if g.mig_profile)


class ClusterFacts(Record):
    """Everything ``profiles detect`` learned, before it becomes a profile."""

    cluster_name: str
    slurm_version: Optional[str]
    config: Mapping[str, str]
    nodes: Tuple[NodeInfo, ...]
    partitions: Tuple[PartitionInfo, ...]
    accounting: bool
    accounts: Tuple[str, ...] = ()
    account_required: Optional[bool] = None
    max_submit: Optional[int] = None
    hostname: str = ""
    environment: Mapping[str, str] = MappingProxyType({})
    mpi_flavour: Optional[str] = None
    fabric: Optional[str] = None
    wheelhouse: bool = False
    notes: Tuple[str, ...] = ()

    @property
    def groups(self) -> List[NodeGroup]:
        return group_nodes(self.nodes)

    @property
    def default_partition(self) -> Optional[PartitionInfo]:
        return next((p for p in self.partitions if p.default), None)


# ----------------------------------------------------------------------------------- parsing

def parse_config(text: str) -> Dict[str, str]:
    """``scontrol show config``: ``Key = Value`` lines (the header line has no ``=``)."""
    config = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() and " " not in key.strip():
            config[key.strip()] = value.strip()
    return config


def parse_records(text: str) -> List[Dict[str, str]]:
    """``scontrol -o show node|partition``: one record a line, ``Key=Value`` pairs whose values
    may hold spaces (``OS=Linux 6.1 #1 SMP``), so a pair ends where the next ``Key=`` starts."""
    records = []
    for line in text.splitlines():
        starts = list(_KEY_RE.finditer(line))
        if not starts:
            continue
        record = {}
        for index, match in enumerate(starts):
            end = starts[index + 1].start() if index + 1 < len(starts) else len(line)
            record[match.group(1)] = line[match.end():end].strip()
        records.append(record)
    return records


def parse_gres(text: str) -> Tuple[Gres, ...]:
    """``gpu:p100:2(S:0-1),gpu:2,mps:100`` -> Gres entries (``(null)`` and empty: none)."""
    text = re.sub(r"\([^)]*\)", "", text or "")
    entries = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        parts = item.split(":")
        if len(parts) == 1 or not parts[-1].isdigit():
            continue
        kind = parts[1] if len(parts) >= 3 else None
        entries.append(Gres(parts[0], kind, int(parts[-1])))
    return tuple(entries)


def _int(record: Mapping[str, str], key: str, default: int = 0) -> int:
    try:
        return int(record.get(key, "").split("(")[0])
    except ValueError:
        return default


def parse_node(record: Mapping[str, str]) -> NodeInfo:
    sockets = max(1, _int(record, "Sockets", 1))
    cores = sockets * max(1, _int(record, "CoresPerSocket", 1))
    return NodeInfo(
        name=record.get("NodeName", "?"),
        cores=cores,
        sockets=sockets,
        threads_per_core=max(1, _int(record, "ThreadsPerCore", 1)),
        memory_mib=_int(record, "RealMemory") - _int(record, "MemSpecLimit"),
        tmp_disk_mib=_int(record, "TmpDisk"),
        gres=tuple(g for g in parse_gres(record.get("Gres", "")) if g.name == "gpu"),
        partitions=tuple(p for p in record.get("Partitions", "").split(",") if p),
        state=record.get("State", ""),
    )


def parse_partition(record: Mapping[str, str]) -> PartitionInfo:
    max_time = record.get("MaxTime", "UNLIMITED")
    return PartitionInfo(
        name=record.get("PartitionName", "?"),
        default=record.get("Default", "NO").upper() == "YES",
        max_time=None if max_time.upper() in ("UNLIMITED", "INFINITE", "") else max_time,
        total_nodes=_int(record, "TotalNodes"),
        state=record.get("State", ""),
        exclusive=record.get("OverSubscribe", "").upper().startswith("EXCLUSIVE"),
    )


def group_nodes(nodes: Sequence[NodeInfo]) -> List[NodeGroup]:
    """Group identical nodes; name groups ``cpu`` / ``gpu-<model>``, with a size suffix only
    where two groups would share a name."""
    groups: Dict[tuple, List[NodeInfo]] = {}
    for node in nodes:
        key = (node.cores, node.sockets, node.threads_per_core, node.memory_mib, node.tmp_disk_mib, node.gres)
        groups.setdefault(key, []).append(node)
    built = []
    for (cores, sockets, threads, memory, tmp, gres), members in groups.items():
        built.append(NodeGroup("", tuple(n.name for n in members), cores, sockets, threads, memory, tmp, gres))
    built.sort(key=lambda g: (bool(g.gpus), g.cores, g.memory_mib, g.nodes))
    base_names = [_base_name(g) for g in built]
    named: List[NodeGroup] = []
    for group, base in zip(built, base_names):
        name = base if base_names.count(base) == 1 else f"{base}-{group.cores}c-{format_size(group.memory_mib).lower()}"
        while name in (g.name for g in named):
            name += "-b"
        named.append(NodeGroup(name, *_fields_after_name(group)))
    return named


def _fields_after_name(group: NodeGroup) -> tuple:
    return (group.nodes, group.cores, group.sockets, group.threads_per_core, group.memory_mib, group.tmp_disk_mib, group.gpus)


def _base_name(group: NodeGroup) -> str:
    """``cpu``, ``gpu-<model>``, ``gpu-<model>-mig`` (MIG slices only) or ``gpu`` (untyped)."""
    if not group.gpus:
        return "cpu"
    whole = group.whole_gpus
    model = _gpu_model(whole[0] if whole else group.gpus[0])
    return "gpu" if model == "gpu" else f"gpu-{model}" + ("" if whole else "-mig")


def _gpu_model(gres: Gres) -> str:
    """``p100`` -> p100; ``nvidia_a100_3g.20gb`` -> a100; untyped -> gpu."""
    if not gres.type:
        return "gpu"
    if gres.mig_profile:
        match = re.match(r"(?:nvidia_)?([a-z]+\d+)", gres.type.lower())
        return match.group(1) if match else gres.type.lower()
    return gres.type.lower()


#: Host names that say nothing about the cluster: a glob built on them would claim every site.
GENERIC_HOSTS = ("login", "node", "compute", "cn", "gpu", "cpu", "vm", "localhost", "head", "master", "submit")


def host_patterns(hostname: str) -> List[str]:
    """Globs that recognise this machine's siblings: ``narval2`` -> ``narval*``;
    ``login1.fir.alliancecan.ca`` -> ``*.fir.alliancecan.ca``; none for ``login1`` or ``vm``."""
    host = hostname.strip().lower()
    if "." in host:
        return [f"*.{host.split('.', 1)[1]}"]
    stem = host.rstrip("0123456789-")
    if not stem or stem in GENERIC_HOSTS:
        return []
    return [f"{stem}*"] if stem != host else [host]


# ----------------------------------------------------------------------------------- running

class CommandResult(Record):
    returncode: int
    stdout: str
    stderr: str


def run_command(argv: Sequence[str], env: Optional[Mapping[str, str]] = None) -> CommandResult:
    """Run one SLURM client command; a missing command or a hang is a ClusterError, a
    configuration SLURM cannot read a SlurmConfigError (before it runs, when SLURM_CONF names
    no readable file: SLURM would retry that for a minute)."""
    check_slurm_conf(env)
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=60, env=None if env is None else dict(env))
    except FileNotFoundError:
        raise ClusterError(f"{argv[0]} not found: run `slurmkit profiles detect` where the SLURM client "
                           f"commands are installed (a login node)") from None
    except subprocess.TimeoutExpired:
        raise ClusterError(f"`{' '.join(argv)}` did not answer within 60 s: is slurmctld up?") from None
    unreadable = config_failure(done.stderr, env) if done.returncode else None
    if unreadable is not None:
        raise unreadable
    return CommandResult(done.returncode, done.stdout, done.stderr)


def _required(argv: Sequence[str]) -> str:
    result = run_command(argv)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["no message"])[-1]
        raise ClusterError(f"`{' '.join(argv)}` failed (exit {result.returncode}): {last}")
    return result.stdout


def gather_facts(env: Optional[Mapping[str, str]] = None) -> ClusterFacts:
    """Ask the live cluster; the optional probes (sacctmgr, sbatch --test-only) may fail
    quietly, leaving their facts unknown and a note saying why."""
    env = dict(os.environ if env is None else env)
    config = parse_config(_required(["scontrol", "show", "config"]))
    nodes = tuple(parse_node(r) for r in parse_records(_required(["scontrol", "-o", "show", "node"])))
    partitions = tuple(parse_partition(r) for r in parse_records(_required(["scontrol", "-o", "show", "partition"])))
    if not nodes:
        raise ClusterError("`scontrol show node` lists no nodes: nothing to describe")
    accounting = config.get("AccountingStorageType", "accounting_storage/none") != "accounting_storage/none"
    notes: List[str] = []
    user = env.get("USER") or getpass.getuser()
    accounts, max_submit = _associations(user, notes) if accounting else ((), None)
    return ClusterFacts(
        cluster_name=config.get("ClusterName", "cluster"),
        slurm_version=config.get("SLURM_VERSION"),
        config=config,
        nodes=nodes,
        partitions=partitions,
        accounting=accounting,
        accounts=accounts,
        account_required=_account_required(env, notes) if accounting else False,
        max_submit=max_submit,
        hostname=socket.gethostname(),
        environment={k: v for k, v in env.items() if k in _ENVIRONMENT},
        mpi_flavour=_mpi_flavour(env),
        fabric=_fabric(),
        wheelhouse=_WHEELHOUSE.is_dir(),
        notes=tuple(notes),
    )


def _associations(user: str, notes: List[str]) -> Tuple[Tuple[str, ...], Optional[int]]:
    result = run_command(["sacctmgr", "-n", "-P", "show", "assoc", "where", f"user={user}", "format=account,maxsubmit"])
    if result.returncode != 0:
        notes.append("sacctmgr could not be read: accounts unknown")
        return (), None
    accounts, limits = [], []
    for line in result.stdout.splitlines():
        account, _, limit = line.partition("|")
        if account and account != "root" and account not in accounts:  # SLURM's own root account
            accounts.append(account)
        if limit.strip().isdigit():
            limits.append(int(limit))
    qos = run_command(["sacctmgr", "-n", "-P", "show", "qos", "format=name,maxsubmitpu"])
    if qos.returncode == 0:
        limits += [int(v) for _, _, v in (line.partition("|") for line in qos.stdout.splitlines()) if v.strip().isdigit()]
    return tuple(sorted(accounts)), (min(limits) if limits else None)


def _account_required(env: Mapping[str, str], notes: List[str]) -> Optional[bool]:
    """``sbatch --test-only`` without an account: the scheduler answers, nothing is queued."""
    clean = {k: v for k, v in env.items() if k not in _ACCOUNT_ENV}
    result = run_command(["sbatch", "--test-only", "--wrap=true", "--time=1", "--output=/dev/null"], env=clean)
    if result.returncode == 0:
        return False
    if "account" in result.stderr.lower():
        return True
    notes.append(f"sbatch --test-only failed for another reason ({(result.stderr.strip().splitlines() or ['?'])[0]})")
    return None


def _mpi_flavour(env: Mapping[str, str]) -> Optional[str]:
    if env.get("I_MPI_ROOT"):
        return "intelmpi"
    if shutil.which("ompi_info"):
        return "openmpi"
    if shutil.which("mpiname"):
        return "mvapich2"
    return None


def _fabric() -> Optional[str]:
    devices = Path("/sys/class/infiniband")
    names = [d.name for d in devices.iterdir()] if devices.is_dir() else []
    if not names:
        return None
    return "omnipath" if any(n.startswith("hfi") for n in names) else "infiniband"


# ---------------------------------------------------------------------------- to a profile

class DetectedProfile(Record):
    """The profile as data, the comments that go with it, and the finished YAML text."""

    name: str
    data: Dict[str, object]
    comments: Mapping[KeyPath, str]
    text: str


def build_profile(facts: ClusterFacts, name: str) -> DetectedProfile:
    """Turn facts into a profile that follows docs/site-profiles.md, with comments on every
    null and on every value a person should check."""
    comments: Dict[KeyPath, str] = {}
    where = f"slurmkit profiles detect on {facts.hostname or 'this machine'}"
    node_types: Dict[str, object] = {}
    data: Dict[str, object] = {
        "name": name,
        "description": f"{facts.cluster_name}, as `slurmkit profiles detect` found it"
                       + (f" (SLURM {facts.slurm_version})" if facts.slurm_version else ""),
        "aliases": [facts.cluster_name] if facts.cluster_name != name else [],
        "docs": [f"`scontrol show config` on {facts.cluster_name}"],
        "status": {"state": "in-service", "source": f"{where}: scontrol show config"},
        "detect": _detect_section(facts, where, comments),
        "node_types": node_types,
        "scheduling": _scheduling(facts, where, comments),
        "accounts": _accounts(facts, where, comments),
        "storage": _storage(facts, where, comments),
        "software": _software(facts, comments),
        "launch": _launch(facts, where, comments),
    }
    for group in facts.groups:
        node_types[group.name] = _node_type(group, comments)
    types = len(node_types)
    headers = {"node_types": [f"{len(facts.nodes)} nodes in {types} node type{'s' * (types != 1)} (scontrol show node)"],
               "scheduling": [_partition_line(p) for p in facts.partitions] or ["no partitions"]}
    if facts.notes:
        headers["status"] = [f"note: {n}" for n in facts.notes]
    intro = [f"Site profile of the SLURM cluster {facts.cluster_name!r}, written by {where}.",
             "Values SLURM does not know are null with a comment: fill them in from the site's docs."]
    return DetectedProfile(name, data, comments, render_yaml(data, comments, intro, headers))


def _partition_line(p: PartitionInfo) -> str:
    flags = ", ".join(filter(None, ["default" if p.default else "", f"{p.total_nodes} nodes", f"MaxTime {p.max_time or 'UNLIMITED'}",
                                   "whole nodes" if p.exclusive else "", p.state.lower() if p.state != "UP" else ""]))
    return f"partition {p.name}: {flags}"


def _detect_section(facts: ClusterFacts, where: str, comments: Dict[KeyPath, str]) -> Dict[str, object]:
    cc = facts.environment.get("CC_CLUSTER")
    patterns = host_patterns(facts.hostname)
    comments[("detect", "hostnames")] = (f"from this machine's hostname, {facts.hostname}" if patterns
                                         else f"this machine's hostname, {facts.hostname}, is too generic to tell the cluster")
    return {"cc_cluster": [cc] if cc else [], "slurm_cluster_name": [facts.cluster_name],
            "hostnames": patterns, "source": f"{where}: ClusterName, hostname"}


def _node_type(group: NodeGroup, comments: Dict[KeyPath, str]) -> Dict[str, object]:
    path = ("node_types", group.name)
    listed = ", ".join(group.nodes[:4]) + (f" and {len(group.nodes) - 4} more" if len(group.nodes) > 4 else "")
    node: Dict[str, object] = {"count": len(group.nodes), "cores": group.cores, "sockets": group.sockets,
                               "memory": f"{group.memory_mib}M"}
    comments[path + ("count",)] = listed
    comments[path + ("memory",)] = "RealMemory (less MemSpecLimit): what a job may ask for"
    if group.threads_per_core > 1:
        comments[path + ("cores",)] = f"physical cores; SLURM counts {group.cores * group.threads_per_core} CPUs (hyperthreads)"
    node["local_disk"] = {"size": f"{group.tmp_disk_mib}M" if group.tmp_disk_mib else None, "kind": None}
    comments[path + ("local_disk",)] = ("kind: not reported by SLURM" if group.tmp_disk_mib
                                        else "size: TmpDisk is not set; kind: not reported by SLURM")
    if group.gpus:
        node["gpus"] = _gpus(group, path + ("gpus",), comments)
    node["source"] = f"scontrol show node ({listed})"
    return node


def _gpus(group: NodeGroup, path: KeyPath, comments: Dict[KeyPath, str]) -> Dict[str, object]:
    """The node type's GPUs: its whole GPUs (the first type of them), else its MIG slices."""
    whole = group.whole_gpus
    main = whole[0] if whole else group.gpus[0]
    count = main.count if whole else sum(g.count for g in group.mig)
    gpus: Dict[str, object] = {"model": _gpu_model(main), "count": count, "memory": None,
                               "gres": main.type if whole else None,
                               "max_cores_per_gpu": max(1, group.cores // count)}
    comments[path + ("memory",)] = "not in SLURM's configuration: check the site's docs"
    comments[path + ("gres",)] = (f"--gres=gpu:{main.type}:N" if main.type and whole else "untyped GRES: --gres=gpu:N")
    comments[path + ("max_cores_per_gpu",)] = "this node type's cores / GPUs; the site may advise fewer"
    if group.mig:
        gpus["mig"] = [_mig(g) for g in group.mig]
    if len(whole) > 1:
        comments[path + ("model",)] = "other GPU types on these nodes: " + ", ".join(g.type or "gpu" for g in whole[1:])
    return gpus


def _mig(slice_: Gres) -> Dict[str, object]:
    """One MIG slice: ``nvidia_a100_3g.20gb`` -> profile 3g.20gb, memory 20G."""
    profile = slice_.mig_profile or ""   # a slice always has one: NodeGroup.mig holds only those
    return {"profile": slice_.mig_profile, "gres": slice_.type, "memory": profile.split(".")[1][:-1].upper()}


def _scheduling(facts: ClusterFacts, where: str, comments: Dict[KeyPath, str]) -> Dict[str, object]:
    config = facts.config
    chosen = _walltime_partition(facts)
    exclusive = bool(facts.partitions) and all(p.exclusive for p in facts.partitions)
    comments.update(_scheduling_comments(facts, chosen, exclusive))
    def_mem = config.get("DefMemPerCPU", "")
    array = config.get("MaxArraySize", "")
    return {
        "max_walltime": chosen.max_time if chosen else None,
        "min_walltime_advice": None,
        "whole_node": {"cores": min(g.cores for g in facts.groups)} if exclusive else None,
        "mem_request": "MEMORY" in config.get("SelectTypeParameters", "").upper(),
        "default_mem_per_cpu": f"{def_mem}M" if def_mem.isdigit() and int(def_mem) > 0 else None,
        "partitions": {"name_partition": "never" if facts.default_partition else "required",
                       "allowed": [p.name for p in facts.partitions if p.state == "UP"]},
        "max_jobs_per_user": facts.max_submit,
        "max_array_size": int(array) if array.isdigit() and int(array) > 0 else None,
        "source": f"{where}: scontrol show config, scontrol show partition, sacctmgr",
    }


def _walltime_partition(facts: ClusterFacts) -> Optional[PartitionInfo]:
    """The partition whose MaxTime is the profile's max_walltime: the default one, else the one
    with the longest; None where the default partition has no MaxTime (or none has one)."""
    default = facts.default_partition
    if default is not None:
        return default if default.max_time else None
    limits = [(parse_duration(p.max_time), p) for p in facts.partitions if p.max_time]
    return max(limits, key=lambda limit: limit[0])[1] if limits else None


def _scheduling_comments(facts: ClusterFacts, chosen: Optional[PartitionInfo], exclusive: bool) -> Dict[KeyPath, str]:
    """Where each scheduling value came from, or why it is null."""
    config, default = facts.config, facts.default_partition
    return {
        ("scheduling", "max_walltime"): f"MaxTime of partition {chosen.name}" if chosen else "the default partition has no MaxTime",
        ("scheduling", "mem_request"): f"SelectTypeParameters={config.get('SelectTypeParameters', '?')}",
        ("scheduling", "default_mem_per_cpu"): ("DefMemPerCPU" if config.get("DefMemPerCPU", "").isdigit() else
                                                f"DefMemPerCPU is not set (DefMemPerNode={config.get('DefMemPerNode', '?')})"),
        ("scheduling", "min_walltime_advice"): "site advice, not in SLURM's configuration",
        ("scheduling", "whole_node"): ("every partition is OverSubscribe=EXCLUSIVE" if exclusive
                                       else "nodes are shared: no partition is OverSubscribe=EXCLUSIVE"),
        ("scheduling", "max_jobs_per_user"): ("MaxSubmitJobs of your association or QOS" if facts.max_submit
                                              else "no MaxSubmitJobs limit found for your association or QOS"),
        ("scheduling", "max_array_size"): "MaxArraySize" if config.get("MaxArraySize", "").isdigit() else "MaxArraySize not reported",
        ("scheduling", "partitions", "name_partition"): (f"{default.name} is the default partition" if default
                                                         else "no default partition: jobs must name one"),
    }


def _accounts(facts: ClusterFacts, where: str, comments: Dict[KeyPath, str]) -> Dict[str, object]:
    if not facts.accounting:
        comments[("accounts", "required")] = "AccountingStorageType=accounting_storage/none"
        return {"required": "never", "prefixes": [], "env": list(_ACCOUNT_ENV), "source": f"{where}: scontrol show config"}
    required = {True: "always", False: "auto", None: None}[facts.account_required]
    comments[("accounts", "required")] = {
        True: "sbatch --test-only without --account was refused",
        False: "sbatch --test-only without --account was accepted (the default account is used)",
        None: "could not tell: sbatch --test-only failed for another reason"}[facts.account_required]
    dashed = bool(facts.accounts) and all("-" in a for a in facts.accounts)
    prefixes = sorted({a.split("-", 1)[0] + "-" for a in facts.accounts}) if dashed else []
    if facts.accounts:
        comments[("accounts", "prefixes")] = "from your accounts: " + ", ".join(facts.accounts)
    return {"required": required, "prefixes": prefixes, "env": list(_ACCOUNT_ENV),
            "source": f"{where}: sacctmgr show assoc, sbatch --test-only"}


def _storage(facts: ClusterFacts, where: str, comments: Dict[KeyPath, str]) -> Dict[str, object]:
    home = facts.environment.get("HOME")
    user = facts.environment.get("USER") or ""
    if home and user and home.rstrip("/").endswith("/" + user) and home.rstrip("/").count("/") >= 2:
        home = home.rstrip("/")[: -len(user)] + "$USER"
    comments[("storage", "home")] = "quota and purging are not in SLURM's configuration"
    comments[("storage", "project")] = "not detectable from SLURM"
    comments[("storage", "scratch")] = "not detectable from SLURM"
    tmpfs = facts.config.get("TmpFS", "?")
    sizes = [g.tmp_disk_mib for g in facts.groups if g.tmp_disk_mib]
    comments[("storage", "slurm_tmpdir")] = f"TmpFS={tmpfs}; kind and memory accounting are not reported by SLURM"
    comments[("storage", "internet_on_compute")] = "not probed"
    return {
        "home": {"path": home or "$HOME", "quota": None, "purged": None},
        "project": None,
        "scratch": None,
        "slurm_tmpdir": {"kind": None, "size": f"{min(sizes)}M" if sizes else None, "counts_against_memory": None},
        "internet_on_compute": None,
        "source": f"{where}: $HOME, scontrol show config",
    }


def _software(facts: ClusterFacts, comments: Dict[KeyPath, str]) -> Dict[str, object]:
    env = facts.environment
    lmod = bool(env.get("LMOD_CMD") or env.get("LMOD_VERSION"))
    loaded = [m for m in env.get("LOADEDMODULES", "").split(":") if "/" in m]
    stdenv = next((m for m in loaded if m.startswith("StdEnv/")), None)
    modules = {m.split("/")[0].lower(): m for m in loaded if not m.startswith("StdEnv/")}
    comments[("software", "module_system")] = "$LMOD_CMD is set" if lmod else "no Lmod in this shell"
    comments[("software", "stdenv")] = "loaded in this shell" if stdenv else "no StdEnv module is loaded in this shell"
    if modules:
        comments[("software", "modules")] = "the modules loaded in this shell"
    comments[("software", "virtualenv", "wheelhouse")] = (f"{_WHEELHOUSE} exists" if facts.wheelhouse
                                                          else "no Alliance wheelhouse under /cvmfs")
    return {
        "module_system": "lmod" if lmod else "none",
        "stdenv": stdenv,
        "preload": [],
        "modules": modules,
        "virtualenv": {"command": "virtualenv --no-download" if facts.wheelhouse else "python3 -m venv",
                       "wheelhouse": facts.wheelhouse},
        "source": "slurmkit profiles detect: the environment of the shell that ran it",
    }


def _launch(facts: ClusterFacts, where: str, comments: Dict[KeyPath, str]) -> Dict[str, object]:
    mpi_default = facts.config.get("MpiDefault", "none")
    comments[("launch", "mpi", "flavour")] = "found on PATH" if facts.mpi_flavour else "no MPI on PATH"
    comments[("launch", "mpi", "srun_mpi")] = f"MpiDefault={mpi_default}"
    comments[("launch", "interconnect")] = ("as seen from this machine" if facts.fabric
                                            else "no InfiniBand device on this machine; speed not detected")
    flags = ["--bind-to", "core", "--map-by", "slot:PE={cpus_per_task}"] if facts.mpi_flavour == "openmpi" else []
    return {
        "default": "srun",
        "mpi": {"flavour": facts.mpi_flavour, "srun_mpi": None if mpi_default in ("none", "") else mpi_default, "bind_flags": flags},
        "interconnect": {"fabric": facts.fabric, "speed": None},
        "env": {},
        "source": f"{where}: scontrol show config, PATH, /sys/class/infiniband",
    }


def summary_lines(facts: ClusterFacts) -> List[str]:
    """What detect found, for people: one line per node type and partition."""
    lines = [f"cluster {facts.cluster_name}" + (f" (SLURM {facts.slurm_version})" if facts.slurm_version else "")
             + f": {len(facts.nodes)} node{'s' * (len(facts.nodes) != 1)}"]
    for group in facts.groups:
        gpus = "".join(f", {g.count} x {g.type or 'gpu'} GPU" for g in group.gpus)
        listed = ", ".join(group.nodes[:4]) + (", ..." if len(group.nodes) > 4 else "")
        lines.append(f"  node type {group.name}: {len(group.nodes)} x ({group.cores} cores, {group.sockets} socket"
                     f"{'s' * (group.sockets != 1)}, {format_size(group.memory_mib)} memory{gpus}) [{listed}]")
    lines += [f"  {_partition_line(p)}" for p in facts.partitions]
    if facts.accounting:
        required = {True: "--account required", False: "--account optional", None: "--account requirement unknown"}
        lines.append(f"  accounting: on; {required[facts.account_required]}"
                     + (f"; your accounts: {', '.join(facts.accounts)}" if facts.accounts else ""))
    else:
        lines.append("  accounting: off")
    lines += [f"  note: {note}" for note in facts.notes]
    return lines


def profile_name(text: str) -> str:
    """A profile name from a cluster name: lower case, letters, digits, ``-`` and ``_``."""
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-") or "cluster"


# ----------------------------------------------------------------------------- YAML writing

def render_yaml(data: Mapping[str, object], comments: Mapping[KeyPath, str], intro: Sequence[str] = (),
                headers: Optional[Mapping[str, Sequence[str]]] = None) -> str:
    """Block-style YAML with trailing comments per key path and comment lines before top-level
    sections; empty and flat values are written inline. Every null gets a comment (a null
    must say why: docs/site-profiles.md)."""
    import yaml

    headers = headers or {}
    out = [f"# {line}" for line in intro]

    def flow(value) -> str:
        text = yaml.safe_dump(value, default_flow_style=True, width=1 << 30, sort_keys=False)
        return text[:-5].strip() if text.endswith("\n...\n") else text.strip()

    def has_null(value) -> bool:
        if isinstance(value, (dict, list)):
            return any(has_null(v) for v in (value.values() if isinstance(value, dict) else value))
        return value is None

    def emit(mapping: Mapping[str, object], depth: int, path: KeyPath) -> None:
        for key, value in mapping.items():
            here = path + (key,)
            block = value if isinstance(value, dict) and _is_block(value) else None
            comment = comments.get(here) or ("not detected" if block is None and has_null(value) else "")
            if depth == 0 and out and (block is not None or key in headers):
                out.append("")
            out.extend(f"# {line}" for line in (headers.get(key, ()) if depth == 0 else ()))
            tail = f"  # {comment}" if comment else ""
            if block is not None:
                out.append(f"{'  ' * depth}{key}:{tail}")
                emit(block, depth + 1, here)
            else:
                out.append(f"{'  ' * depth}{key}: {flow(value)}{tail}")

    emit(data, 0, ())
    return "\n".join(out) + "\n"


def _is_block(value: Mapping[str, object]) -> bool:
    """Nested or long mappings get block style; small flat ones stay on one line."""
    return bool(value) and (any(isinstance(v, (dict, list)) and v for v in value.values()) or "source" in value or len(value) > 3)
