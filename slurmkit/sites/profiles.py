"""Site profiles: find them, merge ``extends:`` chains, validate, and detect the current cluster.

The schema is docs/site-profiles.md; ``SCHEMA`` below is that document as data. A profile is
loaded in four steps, each of which can fail with a one-line :class:`ProfileError` that names
file, line and key path:

1. parse each file with yaml's composed nodes, keeping the line of every key path;
2. merge the ``extends:`` chain (deeply; lists and scalars from the child replace);
3. check the merged mapping against ``SCHEMA`` (the line comes from whichever file set the key);
4. convert it into immutable records (slurmkit/core/records.py) (sizes in MiB, durations in seconds).

``SiteProfile.raw`` keeps the merged mapping itself, as plain dicts and lists.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import warnings
from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import yaml

from slurmkit.core.bundled import profiles_dir
from slurmkit.core.errors import NoProfileDetected, ProfileError, ProfileNotFound, UnitError, closest
from slurmkit.core.folders import config_folder
from slurmkit.core.records import Record
from slurmkit.core.units import parse_duration, parse_size
from slurmkit.core.yamlfile import KeyPath, format_keypath, parse_yaml, read_text

#: Keys a child never takes from the profile it extends: they say what the child itself is.
NOT_INHERITED = ("name", "abstract", "aliases", "extends")
#: the most links of an ``extends:`` chain: the bundled profiles use 1 (cedar extends alliance),
#: a user's file adds one or two (docs/site-profiles.md).
MAX_EXTENDS = 16

#: Mappings that state facts and so must carry a source (docs/site-profiles.md, "Sources").
FACT_SECTIONS = ("status", "detect", "scheduling", "accounts", "storage", "software", "launch")


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for a close match, else an empty string."""
    match = closest(word, choices)
    return f" (did you mean {match!r}?)" if match else ""


# ------------------------------------------------------------------------------------ schema

Problem = Tuple[KeyPath, str]


class Spec:
    """One node of the schema: says what it allows and reports what breaks it."""

    nullable = True

    def allowed(self) -> str:
        raise NotImplementedError

    def check(self, value: Any, path: KeyPath, complete: bool, problems: List[Problem]) -> None:
        if value is None:
            if not self.nullable:
                problems.append((path, f"must not be null; allowed: {self.allowed()}"))
            return
        message = self.check_value(value, path, complete, problems)
        if message:
            problems.append((path, message))

    def check_value(self, value, path, complete, problems) -> Optional[str]:
        raise NotImplementedError

    def _wrong(self, value) -> str:
        shown = repr(value) if not isinstance(value, (dict, list)) else ("a mapping" if isinstance(value, dict) else "a list")
        return f"got {shown}; allowed: {self.allowed()}"


class Str(Spec):
    def __init__(self, nullable=True, numbers=False):
        self.nullable, self.numbers = nullable, numbers

    def allowed(self):
        return "a string"

    def check_value(self, value, path, complete, problems):
        ok = isinstance(value, str) or (self.numbers and isinstance(value, (int, float)) and not isinstance(value, bool))
        if not ok:
            return self._wrong(value)
        if isinstance(value, str) and not value.strip() and not self.nullable:
            return f"must not be empty; allowed: {self.allowed()}"
        return None


class Int(Spec):
    def __init__(self, minimum=0, nullable=True):
        self.minimum, self.nullable = minimum, nullable

    def allowed(self):
        return f"a whole number >= {self.minimum}"

    def check_value(self, value, path, complete, problems):
        if isinstance(value, bool) or not isinstance(value, int) or value < self.minimum:
            return self._wrong(value)
        return None


class Bool(Spec):
    def __init__(self, nullable=True):
        self.nullable = nullable

    def allowed(self):
        return "true or false"

    def check_value(self, value, path, complete, problems):
        return None if isinstance(value, bool) else self._wrong(value)


class Enum(Spec):
    def __init__(self, *choices, nullable=True):
        self.choices, self.nullable = choices, nullable

    def allowed(self):
        return "one of " + ", ".join(self.choices)

    def check_value(self, value, path, complete, problems):
        if value in self.choices:
            return None
        return self._wrong(value) + (did_you_mean(value, self.choices) if isinstance(value, str) else "")


class Unit(Spec):
    """A size or a duration, checked by the same parser that later converts it."""

    def __init__(self, parse: Callable[[Any], int], example: str, nullable=True):
        self.parse, self.example, self.nullable = parse, example, nullable

    def allowed(self):
        return self.example

    def check_value(self, value, path, complete, problems):
        if isinstance(value, (dict, list)):
            return self._wrong(value)
        try:
            self.parse(value)
        except UnitError:
            return self._wrong(value)
        return None


def Size(nullable=True) -> Unit:
    return Unit(parse_size, "a size such as 125G, 4000M, 7T, 512K (a bare number is MiB)", nullable)


def Duration(nullable=True) -> Unit:
    return Unit(parse_duration, "a duration such as 7-00:00:00, 24:00:00, 7d, 24h, 90m", nullable)


class Date(Spec):
    def __init__(self, nullable=True):
        self.nullable = nullable

    def allowed(self):
        return "a date YYYY-MM-DD"

    def check_value(self, value, path, complete, problems):
        return None if _as_date(value) is not None else self._wrong(value)


class Sources(Spec):
    """``source:`` and ``docs:``: one reference or a list of them (URLs, or for a detected
    or local profile the command or file the facts came from)."""

    def __init__(self, nullable=True):
        self.nullable = nullable

    def allowed(self):
        return "a URL, or a list of URLs"

    def check_value(self, value, path, complete, problems):
        items = value if isinstance(value, list) else [value]
        if not items or not all(isinstance(item, str) and item.strip() for item in items):
            return self._wrong(value)
        return None


class ListOf(Spec):
    def __init__(self, item: Spec, nullable=True):
        self.item, self.nullable = item, nullable

    def allowed(self):
        return f"a list of ({self.item.allowed()})"

    def check_value(self, value, path, complete, problems):
        if not isinstance(value, list):
            return self._wrong(value)
        for index, item in enumerate(value):
            self.item.check(item, path + (index,), complete, problems)
        return None


class MapOf(Spec):
    """An open mapping: any names as keys (node types, modules, environment variables)."""

    def __init__(self, value: Spec, what: str):
        self.value, self.what = value, what

    def allowed(self):
        return f"a mapping of {self.what}"

    def check_value(self, value, path, complete, problems):
        if not isinstance(value, dict):
            return self._wrong(value)
        for key, item in value.items():
            self.value.check(item, path + (key,), complete, problems)
        return None


class Fields(Spec):
    """A closed mapping: exactly the keys the schema lists; ``required`` only in complete
    (merged, non-abstract) profiles, since a base or a child may leave them to the other."""

    def __init__(self, fields: Dict[str, Spec], required: Sequence[str] = (), nullable=True):
        self.fields, self.required, self.nullable = fields, tuple(required), nullable

    def allowed(self):
        return "a mapping with keys " + ", ".join(self.fields)

    def check_value(self, value, path, complete, problems):
        if not isinstance(value, dict):
            return self._wrong(value)
        for key, item in value.items():
            if key not in self.fields:
                problems.append((path + (key,), f"unknown key; allowed: {', '.join(self.fields)}{did_you_mean(key, self.fields)}"))
            else:
                self.fields[key].check(item, path + (key,), complete, problems)
        if complete:
            for key in self.required:
                if value.get(key) is None:
                    problems.append((path + (key,), f"required; allowed: {self.fields[key].allowed()}"))
        return None


def _as_date(value) -> Optional[date]:
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            return None
    return None


_SOURCE = Sources()
_NAMES = ListOf(Str(nullable=False))
_DISK_KINDS = ("ssd", "nvme", "disk", "ramdisk")
#: What the shared file systems (/home, /project, /scratch) are: Lustre has its own commands (lfs).
FILESYSTEM_TYPES = ("lustre", "vast", "gpfs")
_AREA = Fields({"path": Str(), "quota": Size(), "purged": Bool()})

#: GPU makers; code built for one (CUDA, ROCm) does not run on the other's GPUs.
GPU_VENDORS = ("nvidia", "amd")

_GPUS = Fields({
    "model": Str(nullable=False),
    "count": Int(1, nullable=False),
    "memory": Size(),
    "gres": Str(),
    "max_cores_per_gpu": Int(1),
    "host_memory": Size(),       # the site's recommended node memory per GPU, where below its share (Fir: 280G)
    "vendor": Enum(*GPU_VENDORS),
    "whole_node": Bool(),        # true: a job takes every GPU of the node (Nibi's MI300A nodes)
    "aliases": _NAMES,           # other names old scripts gave these GPUs (Cedar's lgpu): read, never written
    # Other names the site documents for these GPUs (Nibi's h100_80gb): read, written as gres, said so
    "synonyms": _NAMES,
    "source": _SOURCE,           # where the synonyms are documented
    "mig": ListOf(Fields({"profile": Str(nullable=False), "gres": Str(nullable=False), "memory": Size(),
                          "synonyms": _NAMES,
                          # the site's recommended cores and node memory per instance, where its own
                          # figures are not the GPU's bundle in proportion (Nibi)
                          "cores": Int(1), "host_memory": Size(),
                          "source": _SOURCE},
                         required=("profile", "gres"))),
}, required=("model", "count"))

_NODE_TYPE = Fields({
    "count": Int(0),
    "cores": Int(1, nullable=False),
    "sockets": Int(1),
    "memory": Size(nullable=False),
    "local_disk": Fields({"size": Size(), "kind": Enum(*_DISK_KINDS)}),
    "gpus": _GPUS,
    # A type the cluster had and took out of service: old scripts that ask for it still read
    # (import, port), and a job for it is refused with the date (resolve.py).
    "since": Date(),
    "retired_on": Date(),
    "source": _SOURCE,
}, required=("cores", "memory"))

#: Rules that decide whether a job runs at all. Each carries its own ``source`` so
#: that the finding it gives can name it; slurmkit/resolve/siterules.py enforces them.
_RULE_SOURCE = Sources(nullable=False)
_RULES = Fields({
    # Paths the job cannot write (Trillium: $HOME and $PROJECT); $VARS expand on the submit host.
    "read_only_in_job": Fields({"paths": _NAMES, "write_to": Str(), "fix": Str(), "source": _RULE_SOURCE},
                               required=("paths", "source")),
    # false: a job's own sbatch fails (Trillium); chains go from the login node.
    "jobs_submit_jobs": Fields({"allowed": Bool(nullable=False), "source": _RULE_SOURCE}, required=("allowed", "source")),
    # Login-node roles: a GPU job submitted from a CPU login node (matched by hostname) is refused.
    "login_nodes": Fields({"gpu": _NAMES, "cpu": _NAMES, "source": _RULE_SOURCE}, required=("source",)),
    # Lowest package versions that work on a GPU model (torch on H100).
    "min_versions": ListOf(Fields({"package": Str(nullable=False), "version": Str(nullable=False, numbers=True),
                                   "gpu_models": _NAMES, "source": _RULE_SOURCE},
                                  required=("package", "version", "source"))),
    # The oldest python the wheelhouse is still built for.
    "oldest_python": Fields({"version": Str(nullable=False, numbers=True), "source": _RULE_SOURCE}, required=("version", "source")),
    # --tmp steers a job to nodes with more local disk (Rorqual: 370G to 3360G).
    "tmp_request": Fields({"min": Size(nullable=False), "max": Size(nullable=False), "source": _RULE_SOURCE},
                          required=("min", "max", "source")),
    # Python environments are built on a login node, under ``path``, and jobs only activate them
    # (Trillium); ``slurmkit env build`` builds them (slurmkit/resolve/loginenv.py, slurmkit/build/envbuild.py).
    "env_build": Fields({"path": Str(nullable=False), "source": _RULE_SOURCE}, required=("path", "source")),
    # A GPU job on more than one node takes whole GPU nodes: this many GPUs per node (Trillium: 4).
    "multi_node_gpus": Fields({"gpus_per_node": Int(1, nullable=False), "source": _RULE_SOURCE},
                              required=("gpus_per_node", "source")),
    # A partition's limits, for GPU jobs (gpus: true) or CPU jobs; ``default``: the partition a
    # job that names none runs in. ``max_time_by_gpus``: the limit of a job of up to ``gpus`` GPUs.
    "partition_limits": ListOf(Fields({
        "partition": Str(nullable=False),
        "gpus": Bool(nullable=False),
        "default": Bool(),
        "max_nodes": Int(1),
        "max_gpus": Int(1),
        "min_time": Duration(),
        "max_time": Duration(),
        "max_time_by_gpus": ListOf(Fields({"gpus": Int(1, nullable=False), "time": Duration(nullable=False)},
                                          required=("gpus", "time"))),
        "do_not_name": Bool(),    # true: the site asks jobs not to name it (a warning where one does)
        # The caps of a job without an allocation (Trillium: 10 CPU nodes; max_nodes is the cap
        # with one, 128): above them is a warning, since slurmkit cannot see the allocation.
        "without_allocation": Fields({"max_nodes": Int(1), "max_gpus": Int(1)}),
        "source": _RULE_SOURCE,
    }, required=("partition", "gpus", "source"))),
    # Hosts that cannot submit jobs (Trillium's data movers): submitting from one is an error.
    "no_submit_hosts": Fields({"hosts": _NAMES, "what": Str(), "source": _RULE_SOURCE}, required=("hosts", "source")),
    # The site asks every GPU request to name a model: a request without one is a warning where
    # the cluster has more than one kind of GPU (or MIG instance) it may land on.
    "gpu_model_asked": Fields({"source": _RULE_SOURCE}, required=("source",)),
    # Module versions the site blocked (Narval: StdEnv/2016 and 2018): loading one is an error.
    "blocked_modules": Fields({"modules": _NAMES, "source": _RULE_SOURCE}, required=("modules", "source")),
    # Memory and cores per GPU (per MIG instance) above its share of the node: a warning.
    "gpu_share": Fields({"source": _RULE_SOURCE}, required=("source",)),
    # Compute nodes reach no internet: a download in the job is an error (a warning where the site
    # grants exceptions), a pip install from the index a warning.
    "no_internet": Fields({"exceptions": Bool(), "source": _RULE_SOURCE}, required=("source",)),
    # Compiler flags that build for the submit host's CPU (Narval: -xHost, -march=native, Intel's
    # -x<code>), which do not run, or run as slowly as the oldest CPU, on the site's nodes: a warning.
    "host_cpu_flags": Fields({"flags": _NAMES, "instead": Str(), "source": _RULE_SOURCE}, required=("flags", "source")),
    # A library a job's setup preloads that takes effect only under one launcher (Trillium's VAST
    # MPI-IO preload: mpirun, not srun): a warning where the job uses another.
    "preload_launcher": Fields({"preload": Str(nullable=False), "launcher": Str(nullable=False), "source": _RULE_SOURCE},
                               required=("preload", "launcher", "source")),
    # Folders a Python virtual environment must not be made in (the Python page: not under
    # $SCRATCH, "as it may get partially deleted"): a venv path or a virtualenv line there is a warning.
    "venv_not_under": Fields({"paths": _NAMES, "source": _RULE_SOURCE}, required=("paths", "source")),
    # Profiling GPU jobs (nsys, ncu): not available (Fir, Nibi), or only with DCGM disabled at
    # submission, DISABLE_DCGM=1 (Narval, Rorqual): a job that runs a GPU profiler is warned about.
    "gpu_profiling": Fields({"available": Bool(nullable=False), "disable_dcgm": Bool(), "source": _RULE_SOURCE},
                            required=("available", "source")),
    # The site builds wheels for its stack and asks pip to take them (--no-index): a pip install
    # from the index is a warning where compute nodes do reach it (rules.no_internet says the rest).
    "wheelhouse": Fields({"source": _RULE_SOURCE}, required=("source",)),
    # The Python page's "do not modify PYTHONPATH" and "do not load a module while a virtual
    # environment is activated": a setup line that does either is a warning.
    "python_env": Fields({"source": _RULE_SOURCE}, required=("source",)),
    # MIG instances offer no graphics API (OpenGL, Vulkan): a MIG job whose lines use one is a warning.
    "mig_no_graphics": Fields({"source": _RULE_SOURCE}, required=("source",)),
    # The walltimes that bound the general-purpose clusters' partitions (3h, 12h, 24h, 72h, 7d):
    # a shorter job runs on more nodes, so a time just above a bound is a warning.
    "time_partitions": Fields({"bounds": ListOf(Duration(nullable=False)), "source": _RULE_SOURCE}, required=("bounds", "source")),
})

SCHEMA = Fields({
    "name": Str(nullable=False),
    "extends": Str(),
    "abstract": Bool(nullable=False),
    "description": Str(numbers=True),
    "aliases": _NAMES,
    "docs": Sources(),
    "status": Fields({
        "state": Enum("in-service", "retired", nullable=False),
        "since": Date(),
        "retired_on": Date(),
        "successor": Str(),
        "files_on_successor": Bool(),
        "files_gone_on": Date(),
        "note": Str(numbers=True),
        "source": _SOURCE,
    }, required=("state",)),
    "detect": Fields({"cc_cluster": _NAMES, "slurm_cluster_name": _NAMES, "hostnames": _NAMES, "source": _SOURCE}),
    # Where `--remote` connects (remote.py; docs/laptop.md): a host, and its role where the site
    # has login nodes for CPU and for GPU jobs (Trillium).
    "login_hosts": ListOf(Fields({"host": Str(nullable=False), "role": Enum("cpu", "gpu"), "source": _SOURCE},
                                 required=("host",))),
    "node_types": MapOf(_NODE_TYPE, "node-type name -> node type"),
    "scheduling": Fields({
        "max_walltime": Duration(),
        "min_walltime_advice": Duration(),
        "whole_node": Fields({"cores": Int(1), "threads_per_core": Int(1), "gpu_counts": ListOf(Int(1, nullable=False))}),
        "mem_request": Bool(),
        "default_mem_per_cpu": Size(),
        # source: where the site says so; check then warns of a partition named against it (siterules.py)
        "partitions": Fields({"name_partition": Enum("never", "debug-only", "required"), "allowed": _NAMES, "source": _SOURCE}),
        "max_jobs_per_user": Int(1),
        "max_array_size": Int(1),
        "source": _SOURCE,
    }),
    "accounts": Fields({
        "required": Enum("always", "when-several", "auto", "never"),
        "prefixes": _NAMES,
        "env": _NAMES,
        "source": _SOURCE,
    }),
    "storage": Fields({
        "home": _AREA,
        "project": _AREA,
        "scratch": _AREA,
        # source: the page that says what $SLURM_TMPDIR is there (the job script cites it).
        "slurm_tmpdir": Fields({"kind": Enum(*_DISK_KINDS), "size": Size(), "counts_against_memory": Bool(), "source": _SOURCE}),
        # source: the page that names the shared file systems' type; absent where none does.
        # Where they are not Lustre, a Lustre command (lfs setstripe) in a job is warned about.
        "filesystem": Fields({"type": Enum(*FILESYSTEM_TYPES, nullable=False), "source": _SOURCE}, required=("type", "source")),
        "internet_on_compute": Bool(),
        # Paths of this cluster's own layout (shell patterns: ? one character, * any text) that
        # another cluster does not have: a port off it names each one a job uses as a to-do.
        "own_paths": _NAMES,
        "source": _SOURCE,
    }),
    "software": Fields({
        "module_system": Enum("lmod", "none"),
        "stdenv": Str(),
        "preload": _NAMES,
        "modules": MapOf(Str(), "tool -> module name/version (null: unverified)"),
        "catalogue": _NAMES,
        # Every version of a family the cluster has installed, of any StdEnv (the site's module
        # list): a pinned version not among them does not exist there (modulecat.py).
        "installed": MapOf(_NAMES, "module family -> its installed versions"),
        "setrpaths": Str(),
        # Module stacks of the cluster's past (StdEnv/2016.4, NiaEnv/2019b): old scripts load them;
        # check says they are old, port moves them to the target's stdenv (base: modules loaded with one).
        "old_stacks": MapOf(Fields({"note": Str(nullable=False), "base": _NAMES, "unverified": Bool(), "source": _SOURCE},
                                   required=("note", "source")), "old stack module -> what it was"),
        "virtualenv": Fields({"command": Str(), "wheelhouse": Bool()}),
        "source": _SOURCE,
    }),
    "launch": Fields({
        "default": Enum("srun", "mpirun"),
        "mpi": Fields({
            "flavour": Enum("openmpi", "intelmpi", "mvapich2"),
            "srun_mpi": Str(),
            "bind_flags": _NAMES,
        }),
        "interconnect": Fields({"fabric": Enum("infiniband", "omnipath", "ethernet"), "speed": Str(numbers=True),
                                 "one_switch": Str()}),   # the page that advises --switches=1 for coupled jobs
        "env": MapOf(Str(nullable=False, numbers=True), "variable -> value"),
        "source": _SOURCE,
    }),
    "rules": _RULES,
}, required=("name", "status"), nullable=False)


# ------------------------------------------------------------------------------ typed profile

class Status(Record):
    state: str = "in-service"
    since: Optional[date] = None
    retired_on: Optional[date] = None
    successor: Optional[str] = None
    files_on_successor: bool = False   # the successor mounts this cluster's /home, /project, /scratch
    note: Optional[str] = None
    files_gone_on: Optional[date] = None   # its /home, /project, /scratch decommissioned: no data access since


class Detect(Record):
    cc_cluster: Tuple[str, ...] = ()
    slurm_cluster_name: Tuple[str, ...] = ()
    hostnames: Tuple[str, ...] = ()


class LocalDisk(Record):
    size_mib: Optional[int] = None
    kind: Optional[str] = None


class MigProfile(Record):
    profile: str
    gres: str
    memory_mib: Optional[int] = None
    synonyms: Tuple[str, ...] = ()        # names the site documents besides gres (read, never written)
    cores: Optional[int] = None           # the site's recommended cores per instance, where it gives its own
    host_memory_mib: Optional[int] = None  # the site's recommended node memory per instance, likewise
    source: Tuple[str, ...] = ()


class Gpus(Record):
    """A node type's GPUs. ``model`` and ``count`` are never None in a concrete profile (the
    schema requires them); an abstract base may leave them to its children."""

    model: str
    # mypy: a field named count overrides tuple.count, which nothing calls on a record;
    # namedtuple allows the name, and mypy itself types gpus.count as int.
    count: int  # type: ignore[assignment]
    memory_mib: Optional[int] = None
    gres: Optional[str] = None  # None: untyped GRES, asked as --gres=gpu:N
    max_cores_per_gpu: Optional[int] = None
    mig: Tuple[MigProfile, ...] = ()
    vendor: str = "nvidia"
    whole_node: bool = False
    aliases: Tuple[str, ...] = ()         # names old scripts used for them (read by the resolver, never rendered)
    synonyms: Tuple[str, ...] = ()        # names the site documents for them (read, a note says the spelling written)
    source: Tuple[str, ...] = ()          # where the synonyms are documented
    host_memory_mib: Optional[int] = None  # the site's recommended node memory per GPU (Fir: 280G of a 281G share)


class NodeType(Record):
    """One kind of node. ``cores`` and ``memory_mib`` are never None in a concrete profile
    (the schema requires them); an abstract base may leave them to its children."""

    name: str
    cores: Optional[int]
    memory_mib: Optional[int]
    # mypy: count overrides tuple.count, as for Gpus.count
    count: Optional[int] = None  # type: ignore[assignment]
    sockets: Optional[int] = None
    local_disk: Optional[LocalDisk] = None
    gpus: Optional[Gpus] = None
    since: Optional[date] = None
    retired_on: Optional[date] = None     # set: no longer in service (SiteProfile.retired_node_types)

    @property
    def is_gpu(self) -> bool:
        return self.gpus is not None


class WholeNode(Record):
    cores: Optional[int] = None
    gpu_counts: Tuple[int, ...] = ()
    threads_per_core: int = 1          # 2: Hyper-Threading on, so a node takes twice its cores in tasks


class Partitions(Record):
    name_partition: Optional[str] = None
    allowed: Tuple[str, ...] = ()
    source: Tuple[str, ...] = ()


class Scheduling(Record):
    max_walltime_seconds: Optional[int] = None
    min_walltime_advice_seconds: Optional[int] = None
    whole_node: Optional[WholeNode] = None
    mem_request: Optional[bool] = None
    default_mem_per_cpu_mib: Optional[int] = None
    partitions: Partitions = Partitions()
    max_jobs_per_user: Optional[int] = None
    max_array_size: Optional[int] = None


class Accounts(Record):
    required: Optional[str] = None
    prefixes: Tuple[str, ...] = ()
    env: Tuple[str, ...] = ()


class StorageArea(Record):
    path: Optional[str] = None
    quota_mib: Optional[int] = None
    purged: Optional[bool] = None


#: What $SLURM_TMPDIR is, by its kind, as the job script says it.
_TMPDIR_WORDS = {"ramdisk": "the node's RAM disk", "nvme": "the node's local NVMe disk", "ssd": "the node's local SSD"}


class SlurmTmpdir(Record):
    kind: Optional[str] = None
    size_mib: Optional[int] = None
    counts_against_memory: Optional[bool] = None
    source: Tuple[str, ...] = ()

    def words(self) -> str:
        """What it is, for the script's comments: a RAM disk is not the disk a reader assumes,
        and what it holds is memory the job's program no longer has."""
        what = _TMPDIR_WORDS.get(self.kind or "", "the node-local disk")
        return what + (", whose files count against the job's memory" if self.counts_against_memory else "")


#: How a file system type is written for a reader.
_FILESYSTEM_NAMES = {"lustre": "Lustre", "vast": "VAST", "gpfs": "GPFS (IBM Spectrum Scale)"}


class FileSystem(Record):
    """What the shared file systems (/home, /project, /scratch) are, and the page that says so."""

    type: str
    source: Tuple[str, ...] = ()

    def words(self) -> str:
        return _FILESYSTEM_NAMES.get(self.type, self.type)


class Storage(Record):
    home: Optional[StorageArea] = None
    project: Optional[StorageArea] = None
    scratch: Optional[StorageArea] = None
    slurm_tmpdir: Optional[SlurmTmpdir] = None
    filesystem: Optional[FileSystem] = None   # None: no page the profile cites names it
    internet_on_compute: Optional[bool] = None
    own_paths: Tuple[str, ...] = ()        # shell patterns of paths only this cluster has (Niagara's /scratch/g/group/user)


class Virtualenv(Record):
    command: Optional[str] = None
    wheelhouse: Optional[bool] = None


class OldStack(Record):
    """A module stack the cluster had in the past (software.old_stacks): what it was and where
    that is written; ``base``: the modules that came with it and go with it."""

    module: str
    note: str
    base: Tuple[str, ...] = ()
    unverified: bool = False
    source: Tuple[str, ...] = ()


class Software(Record):
    module_system: Optional[str] = None
    stdenv: Optional[str] = None
    preload: Tuple[str, ...] = ()
    modules: Mapping[str, str] = MappingProxyType({})
    virtualenv: Virtualenv = Virtualenv()
    catalogue: Tuple[str, ...] = ()        # family/version of the stack's modules that port checks against (modulecat.py)
    installed: Mapping[str, Tuple[str, ...]] = MappingProxyType({})   # family -> every version installed, any StdEnv
    setrpaths: Optional[str] = None        # the site's command that fixes up binaries installed by hand (setrpaths.sh)
    old_stacks: Mapping[str, OldStack] = MappingProxyType({})


class Mpi(Record):
    flavour: Optional[str] = None
    srun_mpi: Optional[str] = None
    bind_flags: Tuple[str, ...] = ()


class Interconnect(Record):
    fabric: Optional[str] = None
    speed: Optional[str] = None
    one_switch: Optional[str] = None   # the URL of the site's advice: #SBATCH --switches=1 for tightly coupled jobs


class Launch(Record):
    default: Optional[str] = None
    mpi: Mpi = Mpi()
    interconnect: Interconnect = Interconnect()
    env: Mapping[str, str] = MappingProxyType({})


class ReadOnlyInJob(Record):
    paths: Tuple[str, ...]
    write_to: Optional[str]        # where jobs write instead (the header's note names it, where given)
    fix: Optional[str]
    source: Tuple[str, ...]


class JobsSubmitJobs(Record):
    allowed: bool
    source: Tuple[str, ...]


class LoginNodes(Record):
    gpu: Tuple[str, ...]
    cpu: Tuple[str, ...]
    source: Tuple[str, ...]


class MinVersion(Record):
    package: str
    version: str
    gpu_models: Tuple[str, ...]
    source: Tuple[str, ...]


class OldestPython(Record):
    version: str
    source: Tuple[str, ...]


class TmpRequest(Record):
    min_mib: int
    max_mib: int
    source: Tuple[str, ...]


class EnvBuild(Record):
    path: str                      # where environments are built: a shell word ($HOME/...)
    source: Tuple[str, ...]


class MultiNodeGpus(Record):
    gpus_per_node: int
    source: Tuple[str, ...]


class PartitionLimit(Record):
    partition: str
    gpus: bool                     # for GPU jobs (true) or CPU jobs (false)
    default: bool                  # the partition a job that names none runs in
    max_nodes: Optional[int]
    max_gpus: Optional[int]        # in all, over the job's nodes
    min_time_s: Optional[int]
    max_time_s: Optional[int]
    max_time_by_gpus: Tuple[Tuple[int, int], ...]   # (GPUs up to, seconds), by GPUs
    source: Tuple[str, ...]
    do_not_name: bool = False      # the site asks jobs not to name it
    nodes_without_allocation: Optional[int] = None   # the cap of a job without an allocation
    gpus_without_allocation: Optional[int] = None


class NoSubmitHosts(Record):
    hosts: Tuple[str, ...]         # host-name patterns (tri-dm*)
    what: str                      # what they are, for the error ("data-mover nodes")
    source: Tuple[str, ...]


class SourcedRule(Record):
    """A rule that is its source alone: where the profile has it, check applies it."""

    source: Tuple[str, ...]


class BlockedModules(Record):
    modules: Tuple[str, ...]       # family/version; StdEnv/2016 blocks StdEnv/2016.4 too
    source: Tuple[str, ...]


class NoInternet(Record):
    exceptions: bool               # the site grants some groups internet access on request
    source: Tuple[str, ...]


class HostCpuFlags(Record):
    flags: Tuple[str, ...]         # as written (-xHost); one ending in * matches a prefix (-x*)
    instead: Optional[str]         # the flag that builds for the site's CPUs (-march=core-avx2)
    source: Tuple[str, ...]


class PreloadLauncher(Record):
    preload: str                   # a word of the setup line that loads it (vastpreload)
    launcher: str                  # the only launcher under which it takes effect (mpirun)
    source: Tuple[str, ...]


class VenvNotUnder(Record):
    paths: Tuple[str, ...]         # as written in a spec ($SCRATCH, /scratch, ~/scratch)
    source: Tuple[str, ...]


class GpuProfiling(Record):
    available: bool                # false: the site's GPU nodes cannot be profiled yet
    disable_dcgm: bool             # true: only with DISABLE_DCGM=1 in sbatch's environment
    source: Tuple[str, ...]


class TimePartitions(Record):
    bounds: Tuple[int, ...]        # seconds, ascending
    source: Tuple[str, ...]


class Rules(Record):
    """What decides whether a job runs at all; None or () where the site states nothing."""

    read_only_in_job: Optional[ReadOnlyInJob] = None
    jobs_submit_jobs: Optional[JobsSubmitJobs] = None
    login_nodes: Optional[LoginNodes] = None
    min_versions: Tuple[MinVersion, ...] = ()
    oldest_python: Optional[OldestPython] = None
    tmp_request: Optional[TmpRequest] = None
    env_build: Optional[EnvBuild] = None
    multi_node_gpus: Optional[MultiNodeGpus] = None
    partition_limits: Tuple[PartitionLimit, ...] = ()
    no_submit_hosts: Optional[NoSubmitHosts] = None
    gpu_model_asked: Optional[SourcedRule] = None
    blocked_modules: Optional[BlockedModules] = None
    gpu_share: Optional[SourcedRule] = None
    no_internet: Optional[NoInternet] = None
    host_cpu_flags: Optional[HostCpuFlags] = None
    preload_launcher: Optional[PreloadLauncher] = None
    venv_not_under: Optional[VenvNotUnder] = None
    gpu_profiling: Optional[GpuProfiling] = None
    wheelhouse: Optional[SourcedRule] = None
    python_env: Optional[SourcedRule] = None
    mig_no_graphics: Optional[SourcedRule] = None
    time_partitions: Optional[TimePartitions] = None


class SiteProfile(Record):
    """One cluster, merged and checked; ``raw`` is the merged mapping as YAML gave it."""

    name: str
    path: Path
    abstract: bool
    extends: Optional[str]
    description: Optional[str]
    aliases: Tuple[str, ...]
    docs: Tuple[str, ...]
    status: Status
    detect: Detect
    node_types: Tuple[NodeType, ...]
    scheduling: Scheduling
    accounts: Accounts
    storage: Storage
    software: Software
    launch: Launch
    raw: Dict[str, Any]
    rules: Rules = Rules()
    #: node types the cluster had and retired (their ``retired_on`` is set); ``node_types`` holds
    #: the others, the only ones a job is placed on. Old scripts still name these.
    retired_node_types: Tuple[NodeType, ...] = ()

    @property
    def is_retired(self) -> bool:
        return self.status.state == "retired"

    @property
    def gpu_models(self) -> Tuple[str, ...]:
        """Distinct GPU models, in node-type order."""
        return tuple(dict.fromkeys(t.gpus.model for t in self.node_types if t.gpus))

    def node_type(self, name: str) -> NodeType:
        for node_type in self.node_types:
            if node_type.name == name:
                return node_type
        raise KeyError(f"{self.name} has no node type {name!r}; it has {', '.join(t.name for t in self.node_types)}")


def _sub(data: Optional[dict], key: str) -> dict:
    value = (data or {}).get(key)
    return value if isinstance(value, dict) else {}


def _mib(value) -> Optional[int]:
    return None if value is None else parse_size(value)


def _seconds(value) -> Optional[int]:
    return None if value is None else parse_duration(value)


def _names(value) -> Tuple[str, ...]:
    if value is None:
        return ()
    return tuple(value) if isinstance(value, list) else (value,)


def _build_profile(path: Path, data: dict) -> SiteProfile:
    """Convert a merged, validated mapping; no checks here (``SCHEMA`` did them)."""
    status, sched, storage, software, launch = (_sub(data, k) for k in ("status", "scheduling", "storage", "software", "launch"))
    whole = sched.get("whole_node")
    node_types = [_build_node_type(name, spec) for name, spec in (data.get("node_types") or {}).items()]
    return SiteProfile(
        name=data["name"],
        path=path,
        abstract=bool(data.get("abstract", False)),
        extends=data.get("extends"),
        description=None if data.get("description") is None else str(data["description"]),
        aliases=_names(data.get("aliases")),
        docs=_names(data.get("docs")),
        status=Status(
            state=status.get("state") or "in-service",
            since=_as_date(status.get("since")),
            retired_on=_as_date(status.get("retired_on")),
            successor=status.get("successor"),
            files_on_successor=bool(status.get("files_on_successor")),
            note=None if status.get("note") is None else str(status["note"]),
            files_gone_on=_as_date(status.get("files_gone_on")),
        ),
        detect=Detect(**{k: _names(_sub(data, "detect").get(k)) for k in ("cc_cluster", "slurm_cluster_name", "hostnames")}),
        node_types=tuple(t for t in node_types if t.retired_on is None),
        retired_node_types=tuple(t for t in node_types if t.retired_on is not None),
        scheduling=Scheduling(
            max_walltime_seconds=_seconds(sched.get("max_walltime")),
            min_walltime_advice_seconds=_seconds(sched.get("min_walltime_advice")),
            whole_node=None if whole is None else WholeNode(whole.get("cores"), tuple(whole.get("gpu_counts") or ()),
                                                             whole.get("threads_per_core") or 1),
            mem_request=sched.get("mem_request"),
            default_mem_per_cpu_mib=_mib(sched.get("default_mem_per_cpu")),
            partitions=Partitions(_sub(sched, "partitions").get("name_partition"), _names(_sub(sched, "partitions").get("allowed")),
                                  _names(_sub(sched, "partitions").get("source"))),
            max_jobs_per_user=sched.get("max_jobs_per_user"),
            max_array_size=sched.get("max_array_size"),
        ),
        accounts=Accounts(_sub(data, "accounts").get("required"), _names(_sub(data, "accounts").get("prefixes")),
                          _names(_sub(data, "accounts").get("env"))),
        storage=_build_storage(storage),
        software=Software(
            module_system=software.get("module_system"),
            stdenv=software.get("stdenv"),
            preload=_names(software.get("preload")),
            modules=MappingProxyType(dict(software.get("modules") or {})),
            virtualenv=Virtualenv(_sub(software, "virtualenv").get("command"), _sub(software, "virtualenv").get("wheelhouse")),
            catalogue=_names(software.get("catalogue")),
            installed=_installed(software.get("installed")),
            setrpaths=software.get("setrpaths"),
            old_stacks=_old_stacks(software.get("old_stacks")),
        ),
        launch=Launch(
            default=launch.get("default"),
            mpi=Mpi(_sub(launch, "mpi").get("flavour"), _sub(launch, "mpi").get("srun_mpi"), _names(_sub(launch, "mpi").get("bind_flags"))),
            interconnect=Interconnect(_sub(launch, "interconnect").get("fabric"),
                                      None if _sub(launch, "interconnect").get("speed") is None else str(launch["interconnect"]["speed"]),
                                      _sub(launch, "interconnect").get("one_switch")),
            env=MappingProxyType({k: str(v) for k, v in (launch.get("env") or {}).items()}),
        ),
        raw=data,
        rules=_build_rules(_sub(data, "rules")),
    )


def _installed(installed: Optional[dict]) -> Mapping[str, Tuple[str, ...]]:
    return MappingProxyType({str(family): _names(versions) for family, versions in (installed or {}).items()})


def _old_stacks(stacks: Optional[dict]) -> Mapping[str, OldStack]:
    return MappingProxyType({str(module): OldStack(str(module), str(spec["note"]), _names(spec.get("base")), bool(spec.get("unverified")),
                                                   _names(spec.get("source")))
                             for module, spec in (stacks or {}).items() if isinstance(spec, dict)})


def _build_rules(rules: dict) -> Rules:
    def given(key):
        value = rules.get(key)
        return value if isinstance(value, dict) and value else None

    ro, submit, login, python, tmp, env = (given(k) for k in ("read_only_in_job", "jobs_submit_jobs", "login_nodes", "oldest_python",
                                                               "tmp_request", "env_build"))
    return Rules(
        read_only_in_job=ro and ReadOnlyInJob(_names(ro.get("paths")), ro.get("write_to"), ro.get("fix"), _names(ro.get("source"))),
        jobs_submit_jobs=submit and JobsSubmitJobs(bool(submit.get("allowed")), _names(submit.get("source"))),
        login_nodes=login and LoginNodes(_names(login.get("gpu")), _names(login.get("cpu")), _names(login.get("source"))),
        min_versions=tuple(MinVersion(str(m["package"]), str(m["version"]), _names(m.get("gpu_models")), _names(m.get("source")))
                           for m in rules.get("min_versions") or ()),
        oldest_python=python and OldestPython(str(python["version"]), _names(python.get("source"))),
        tmp_request=tmp and TmpRequest(parse_size(tmp["min"]), parse_size(tmp["max"]), _names(tmp.get("source"))),
        env_build=env and EnvBuild(str(env["path"]), _names(env.get("source"))),
        multi_node_gpus=given("multi_node_gpus") and MultiNodeGpus(int(rules["multi_node_gpus"]["gpus_per_node"]),
                                                                   _names(rules["multi_node_gpus"].get("source"))),
        partition_limits=tuple(_partition_limit(limit) for limit in rules.get("partition_limits") or ()),
        **_more_rules(given),
    )


def _more_rules(given) -> dict:
    """The rules about hosts, GPU requests, modules and downloads (``Rules``' last fields)."""
    hosts, model, blocked, share, offline = (given(k) for k in ("no_submit_hosts", "gpu_model_asked", "blocked_modules",
                                                                  "gpu_share", "no_internet"))
    return dict(
        no_submit_hosts=hosts and NoSubmitHosts(_names(hosts.get("hosts")), str(hosts.get("what") or "these hosts"),
                                                _names(hosts.get("source"))),
        gpu_model_asked=model and SourcedRule(_names(model.get("source"))),
        blocked_modules=blocked and BlockedModules(_names(blocked.get("modules")), _names(blocked.get("source"))),
        gpu_share=share and SourcedRule(_names(share.get("source"))),
        no_internet=offline and NoInternet(bool(offline.get("exceptions")), _names(offline.get("source"))),
        **_build_rules_more(given),
    )


def _build_rules_more(given) -> dict:
    """The rules about what the job's own lines build and preload."""
    flags, preload, venv, profiling = (given(k) for k in ("host_cpu_flags", "preload_launcher", "venv_not_under", "gpu_profiling"))
    return dict(
        host_cpu_flags=flags and HostCpuFlags(_names(flags.get("flags")), flags.get("instead"), _names(flags.get("source"))),
        preload_launcher=preload and PreloadLauncher(str(preload["preload"]), str(preload["launcher"]),
                                                     _names(preload.get("source"))),
        venv_not_under=venv and VenvNotUnder(_names(venv.get("paths")), _names(venv.get("source"))),
        gpu_profiling=profiling and GpuProfiling(bool(profiling["available"]), bool(profiling.get("disable_dcgm")),
                                                 _names(profiling.get("source"))),
        wheelhouse=given("wheelhouse") and SourcedRule(_names(given("wheelhouse").get("source"))),
        python_env=given("python_env") and SourcedRule(_names(given("python_env").get("source"))),
        mig_no_graphics=given("mig_no_graphics") and SourcedRule(_names(given("mig_no_graphics").get("source"))),
        time_partitions=given("time_partitions") and TimePartitions(
            tuple(sorted(parse_duration(str(b)) for b in given("time_partitions")["bounds"])),
            _names(given("time_partitions").get("source"))),
    )


def _partition_limit(limit: dict) -> PartitionLimit:
    steps = sorted((int(step["gpus"]), parse_duration(step["time"])) for step in limit.get("max_time_by_gpus") or ())
    return PartitionLimit(str(limit["partition"]), bool(limit["gpus"]), bool(limit.get("default")), limit.get("max_nodes"),
                          limit.get("max_gpus"), _seconds(limit.get("min_time")), _seconds(limit.get("max_time")),
                          tuple(steps), _names(limit.get("source")), bool(limit.get("do_not_name")),
                          _sub(limit, "without_allocation").get("max_nodes"), _sub(limit, "without_allocation").get("max_gpus"))


def _build_storage(storage: dict) -> Storage:
    return Storage(
        home=_build_area(storage.get("home")),
        project=_build_area(storage.get("project")),
        scratch=_build_area(storage.get("scratch")),
        slurm_tmpdir=None if storage.get("slurm_tmpdir") is None else SlurmTmpdir(
            storage["slurm_tmpdir"].get("kind"), _mib(storage["slurm_tmpdir"].get("size")),
            storage["slurm_tmpdir"].get("counts_against_memory"), _names(storage["slurm_tmpdir"].get("source"))),
        filesystem=None if storage.get("filesystem") is None else FileSystem(
            storage["filesystem"]["type"], _names(storage["filesystem"].get("source"))),
        internet_on_compute=storage.get("internet_on_compute"),
        own_paths=_names(storage.get("own_paths")),
    )


def _build_area(area: Optional[dict]) -> Optional[StorageArea]:
    return None if area is None else StorageArea(area.get("path"), _mib(area.get("quota")), area.get("purged"))


def _build_node_type(name: str, spec: dict) -> NodeType:
    gpus = spec.get("gpus")
    disk = spec.get("local_disk")
    return NodeType(
        name=name,
        cores=spec.get("cores"),
        memory_mib=_mib(spec.get("memory")),
        count=spec.get("count"),
        sockets=spec.get("sockets"),
        local_disk=None if disk is None else LocalDisk(_mib(disk.get("size")), disk.get("kind")),
        gpus=None if gpus is None else Gpus(
            # None only in an abstract base that leaves the model to its children (see Gpus): the
            # type is the one every profile a job uses has.
            model=None if gpus.get("model") is None else str(gpus["model"]),  # type: ignore[arg-type]
            count=gpus.get("count"),
            memory_mib=_mib(gpus.get("memory")),
            gres=gpus.get("gres"),
            max_cores_per_gpu=gpus.get("max_cores_per_gpu"),
            mig=tuple(_build_mig(m) for m in gpus.get("mig") or ()),
            vendor=gpus.get("vendor") or "nvidia",
            whole_node=bool(gpus.get("whole_node")),
            aliases=_names(gpus.get("aliases")),
            synonyms=_names(gpus.get("synonyms")),
            source=_names(gpus.get("source")),
            host_memory_mib=_mib(gpus.get("host_memory")),
        ),
        since=_as_date(spec.get("since")),
        retired_on=_as_date(spec.get("retired_on")),
    )


def _build_mig(mig: dict) -> MigProfile:
    return MigProfile(mig["profile"], mig["gres"], _mib(mig.get("memory")), _names(mig.get("synonyms")), mig.get("cores"),
                      _mib(mig.get("host_memory")), _names(mig.get("source")))


# ----------------------------------------------------------------------------------- parsing

class ParsedFile(Record):
    """One YAML file: its data, the line of every key path, and its nodes (for comments)."""

    path: Path
    data: Dict[str, Any]
    lines: Dict[KeyPath, int]
    root: Any
    text_lines: Tuple[str, ...]


def parse_profile_text(text: str, path: Union[str, Path]) -> ParsedFile:
    """Parse one profile, keeping key-path lines; bad YAML is a located ProfileError."""
    path = Path(path)
    data, lines, root = parse_yaml(text, path, ProfileError)
    if root is None:
        raise ProfileError(path, 1, "", "empty file; a profile is a mapping that starts with `name:`")
    if not isinstance(root, yaml.MappingNode):
        raise ProfileError(path, root.start_mark.line + 1, "", "a profile must be a mapping of keys (name:, status:, ...)")
    _refuse_yaml_1_1_numbers(path, data, lines)
    return ParsedFile(path, data, lines, root, tuple(text.splitlines()))


def _refuse_yaml_1_1_numbers(path: Path, data: dict, lines) -> None:
    """A number YAML 1.1 reads otherwise than it looks (``cores: 010`` is 8) is an error, as in a
    job spec (sanity.number_spelling_problem): a profile's counts and sizes are facts."""
    from slurmkit.core.sanity import number_spelling_problem

    for keypath, spelling in getattr(lines, "spellings", {}).items():
        value = data
        for part in keypath:
            value = value[part]
        problem = number_spelling_problem(spelling, value, "count")
        if problem:
            raise ProfileError(path, lines.get(keypath), format_keypath(keypath), problem)


class BundledFile:
    """A profile shipped with slurmkit, read as plain data with libyaml: the line of each key and
    the node tree (what error messages and ``profiles validate --provenance`` need) are made by
    the tracking reader only when asked. Every command loads two bundled profiles, and the
    tracking reader was most of a render's own time (bench/startup.py); the bundled files are
    slurmkit's own, checked by its tests with the tracking reader (test_profiles), never input
    from a user, whose profiles (./site_profiles, the config folder) always take that reader."""

    def __init__(self, path: Path, text: str) -> None:
        self.path, self._text = path, text
        self.data: Dict[str, Any] = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        self._full: Optional[ParsedFile] = None

    def _parsed(self) -> ParsedFile:
        if self._full is None:
            self._full = parse_profile_text(self._text, self.path)
        return self._full

    @property
    def lines(self) -> Dict[KeyPath, int]:
        return self._parsed().lines

    @property
    def root(self) -> Any:
        return self._parsed().root

    @property
    def text_lines(self) -> Tuple[str, ...]:
        return self._parsed().text_lines


#: a profile file as read: by the tracking reader, or (a bundled one) as plain data first
ReadFile = Union[ParsedFile, BundledFile]


def _read(path: Path) -> ReadFile:
    text = read_text(path, ProfileError)
    if os.path.dirname(os.path.realpath(path)) == os.path.realpath(profiles_dir()):
        bundled = BundledFile(path, text)
        if isinstance(bundled.data, dict):
            return bundled
    return parse_profile_text(text, path)


# ------------------------------------------------------------------------------- search path

def search_path(cwd: Union[str, Path, None] = None, env: Optional[Mapping[str, str]] = None) -> List[Path]:
    """``./site_profiles``, then ``$XDG_CONFIG_HOME/slurmkit/site_profiles``, then the bundled
    folder; a folder that appears twice (running inside the repository) is kept once."""
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else Path(cwd)
    return _unique_dirs([cwd / "site_profiles", config_folder(env) / "site_profiles", profiles_dir()])


def _unique_dirs(dirs: Iterable[Path]) -> List[Path]:
    seen, out = set(), []
    for folder in dirs:
        key = os.path.realpath(folder)
        if key not in seen:
            seen.add(key)
            out.append(Path(folder))
    return out


class ProfileFile(Record):
    """A profile file on the search path; ``layer`` is its folder's place (0 wins)."""

    name: str
    path: Path
    layer: int


class ProfileCatalog:
    """Every profile visible from one search path, with the merging and checking of each.

    A catalog reads each file once; make a new one to see changes on disk.
    """

    def __init__(self, dirs: Optional[Sequence[Union[str, Path]]] = None):
        self.dirs = _unique_dirs(Path(d) for d in (search_path() if dirs is None else dirs))
        self.files: Dict[str, List[ProfileFile]] = {}
        for layer, folder in enumerate(self.dirs):
            for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else ():
                self.files.setdefault(path.stem, []).append(ProfileFile(path.stem, path, layer))
        self._parsed: Dict[str, ReadFile] = {}

    # -- finding -----------------------------------------------------------------------------

    def names(self) -> List[str]:
        return sorted(self.files)

    def find(self, name: str) -> ProfileFile:
        """The file that ``name`` (or an alias) means: the first on the search path."""
        if name in self.files:
            return self.files[name][0]
        for other in self.names():
            try:
                aliases = self.parsed(self.files[other][0].path).data.get("aliases") or []
            except ProfileError:
                continue
            if isinstance(aliases, list) and name in aliases:
                return self.files[other][0]
        raise ProfileNotFound(f"no site profile named {name!r}{did_you_mean(name, self.names())}; "
                              f"profiles: {', '.join(self.names()) or '(none)'}; searched {', '.join(map(str, self.dirs))}")

    def parsed(self, path: Path) -> ReadFile:
        key = os.path.realpath(path)
        if key not in self._parsed:
            self._parsed[key] = _read(Path(path))
        return self._parsed[key]

    def remember(self, parsed: ParsedFile) -> None:
        """Use ``parsed`` for its path instead of reading the file."""
        self._parsed[os.path.realpath(parsed.path)] = parsed

    # -- loading -----------------------------------------------------------------------------

    def load(self, name: str) -> SiteProfile:
        """The profile ``name`` for use: its files from the current folder are announced."""
        pf = self.find(name)
        profile = self.load_file(pf)
        self.announce_local(pf)
        return profile

    def announce_local(self, pf: ProfileFile) -> None:
        """Say once (local_files.py) which files of ``pf``'s extends chain come from
        ``./site_profiles``, and which file of the same name each one replaces."""
        here = os.path.realpath(Path.cwd() / "site_profiles")
        chain = self._chain(pf)
        if not any(os.path.realpath(step.path.parent) == here for step in chain):
            return
        from slurmkit.core.local_files import announce, in_current_folder

        bundled = profiles_dir()
        for step in chain:
            if in_current_folder(step.path, "site_profiles", bundled):
                below = [f for f in self.files.get(step.name, []) if f.layer > step.layer]
                replaces = None if not below else (f"the bundled {below[0].path.name}"
                                                   if os.path.realpath(below[0].path.parent) == os.path.realpath(bundled)
                                                   else str(below[0].path))
                announce(step.path, "site_profiles", replaces, below[0].path if below else None)

    def _chain(self, pf: ProfileFile) -> List[ProfileFile]:
        """``pf`` and the profiles it extends, nearest first, each file's identity checked; a
        cycle, or a chain of more than MAX_EXTENDS links, is a ProfileError at ``extends:``.
        A loop, not a recursion: a chain of 1,500 files was a RecursionError."""
        chain = [pf]
        seen = {os.path.realpath(pf.path): 0}
        while True:
            step = chain[-1]
            parsed = self.parsed(step.path)
            _check_identity(parsed, step)
            if parsed.data.get("extends") is None:
                return chain
            parent = self._parent(parsed.data["extends"], step, parsed)
            key = os.path.realpath(parent.path)
            if key in seen:
                # Report at the extends: line of the cycle's first member (the file being loaded,
                # when the cycle comes back to it), naming every step.
                members = chain[seen[key]:]
                first = self.parsed(members[0].path)
                cycle = " -> ".join([p.name for p in members] + [parent.name])
                raise ProfileError(members[0].path, first.lines.get(("extends",)), "extends",
                                   f"{first.data.get('extends')!r} makes a cycle: {cycle}")
            if len(chain) > MAX_EXTENDS:
                names = " -> ".join([p.name for p in chain] + [parent.name, "..."])
                raise ProfileError(pf.path, self.parsed(pf.path).lines.get(("extends",)), "extends",
                                   f"the extends chain is longer than {MAX_EXTENDS} profiles, slurmkit's limit: {names}; "
                                   f"merge some of them into one")
            seen[key] = len(chain)
            chain.append(parent)

    def load_file(self, pf: Union[ProfileFile, str, Path]) -> SiteProfile:
        """Merge, check and convert one profile; raises the first ProfileError found."""
        pf = self._as_profile_file(pf)
        data, problems = self._checked(pf)
        if problems:
            raise problems[0]
        return _build_profile(pf.path, data)

    def problems(self, pf: Union[ProfileFile, str, Path], provenance: bool = False) -> List[ProfileError]:
        """Every schema problem of the merged profile (and, if asked, of its sources)."""
        pf = self._as_profile_file(pf)
        _, errors = self._checked(pf)
        if provenance and not errors:
            errors = provenance_problems(self.parsed(pf.path))
        return errors

    def _checked(self, pf: ProfileFile) -> Tuple[Dict[str, Any], List[ProfileError]]:
        """The merged profile ({} where it cannot be merged) and its schema problems, each placed
        in the file and line that set it (worked out only when there is a problem: every command
        loads a profile)."""
        try:
            data = self._merged(pf)
        except ProfileError as error:
            return {}, [error]
        complete = not data.get("abstract", False)
        found: List[Problem] = []
        SCHEMA.check(data, (), complete, found)
        if not found and complete:
            found = self._cross_checks(data)
        if not found:
            return data, []
        origins = self._origins(pf, data)
        return data, [_located(origins, pf.path, path, message) for path, message in found]

    def all(self, include_abstract: bool = False) -> Tuple[List[SiteProfile], List[ProfileError]]:
        """The first profile of each name, and the errors of those that do not load."""
        profiles, errors = [], []
        for name in self.names():
            try:
                profile = self.load_file(self.find(name))
            except ProfileError as error:
                errors.append(error)
                continue
            if include_abstract or not profile.abstract:
                profiles.append(profile)
        return profiles, errors

    def _as_profile_file(self, pf) -> ProfileFile:
        if isinstance(pf, ProfileFile):
            return pf
        path = Path(pf)
        for entry in self.files.get(path.stem, []):
            if os.path.realpath(entry.path) == os.path.realpath(path):
                return entry
        return ProfileFile(path.stem, path, -1)

    def _merged(self, pf: ProfileFile) -> dict:
        """``pf`` merged onto the profiles it extends: the base copied once, then each file
        above it merged in place (linear in the chain, where a merge per level copied it all)."""
        chain = self._chain(pf)
        data = _copy_tree(self.parsed(chain[-1].path).data)
        for step in reversed(chain[:-1]):
            for key in NOT_INHERITED:
                data.pop(key, None)
            _merge_into(data, self.parsed(step.path).data)
        return data

    def _origins(self, pf: ProfileFile, merged: dict) -> Dict[KeyPath, Tuple[Path, int]]:
        """``{key path: (file, line)}`` for every value of ``merged``, the profile ``pf`` makes:
        each from the nearest file of the extends chain that sets it."""
        keep = set(_keypaths(merged))
        origins: Dict[KeyPath, Tuple[Path, int]] = {}
        for step in reversed(self._chain(pf)):  # the base first, so that nearer files win
            origins.update((path, (step.path, line)) for path, line in self.parsed(step.path).lines.items() if path in keep)
        return origins

    def _parent(self, name: str, pf: ProfileFile, parsed: ReadFile) -> ProfileFile:
        """The profile ``extends:`` names; a profile that extends its own name (a user's
        ``narval.yaml`` with ``extends: narval``) gets the next one down the search path."""
        candidates = self.files.get(name, [])
        if name == pf.name:
            candidates = [c for c in candidates if c.layer > pf.layer and os.path.realpath(c.path) != os.path.realpath(pf.path)]
        if candidates:
            return candidates[0]
        known = [n for n in self.names() if n != pf.name or name == pf.name]
        why = "no other profile of that name further down the search path" if name == pf.name else "no profile of that name"
        raise ProfileError(pf.path, parsed.lines.get(("extends",)), "extends",
                           f"{name!r}: {why}; profiles: {', '.join(known) or '(none)'}{did_you_mean(name, known)}")

    def _cross_checks(self, data: dict) -> List[Problem]:
        backwards = _served_backwards(data)
        if backwards:
            return backwards
        status = data.get("status") or {}
        if status.get("state") != "retired":
            return []
        for key in ("retired_on", "successor"):
            if status.get(key) is None:
                return [(("status", key), "required when status.state is retired")]
        successor = status["successor"]
        if successor not in self.files:
            return [(("status", "successor"), f"no profile named {successor!r}{did_you_mean(successor, self.names())}")]
        return []


def _served_backwards(data: dict) -> List[Problem]:
    """A node type retired before it came into service is a typo in one of the two dates."""
    found: List[Problem] = []
    for name, spec in (data.get("node_types") or {}).items():
        since, retired = _as_date((spec or {}).get("since")), _as_date((spec or {}).get("retired_on"))
        if since and retired and retired < since:
            found.append((("node_types", name, "retired_on"), f"{retired} is before its since: {since}"))
    return found


def _check_identity(parsed: ReadFile, pf: ProfileFile) -> None:
    """``name`` must be the file's own name and ``extends`` a name: both steer the merge."""
    data = parsed.data
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ProfileError(pf.path, parsed.lines.get(("name",), 1), "name",
                           f"required: the profile's name, {pf.path.stem!r} (the file name without .yaml)")
    if name != pf.path.stem:
        raise ProfileError(pf.path, parsed.lines[("name",)], "name",
                           f"is {name!r} but the file is {pf.path.name}; allowed: {pf.path.stem!r} (the file name without .yaml)")
    extends = data.get("extends")
    if extends is not None and not isinstance(extends, str):
        raise ProfileError(pf.path, parsed.lines[("extends",)], "extends", f"got {extends!r}; allowed: the name of one profile")


def _located(origins: Dict[KeyPath, Tuple[Path, int]], default: Path, path: KeyPath, message: str) -> ProfileError:
    """A problem at ``path`` of a merged profile, placed in the file and line that set it
    (or, for a missing key, its nearest parent that exists)."""
    probe = path
    while probe and probe not in origins:
        probe = probe[:-1]
    file, line = origins.get(probe, (default, None))
    return ProfileError(file, line, format_keypath(path), message)


def _merge_into(base: dict, child: dict) -> None:
    """Merge ``child`` into ``base`` (a copy the caller owns): mappings merge key by key;
    anything else from the child replaces the base's."""
    for key, value in child.items():
        if isinstance(base.get(key), dict) and isinstance(value, dict):
            _merge_into(base[key], value)
        else:
            base[key] = _copy_tree(value)


def _copy_tree(value: Any) -> Any:
    """A copy of loaded YAML data: mappings and lists copied, scalars shared. What deepcopy
    would give here, without its memo and dispatch: several times faster on the profiles
    every command loads (bench/startup.py)."""
    if isinstance(value, dict):
        return {key: _copy_tree(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy_tree(item) for item in value]
    return value


def _keypaths(data: Any, path: KeyPath = ()) -> Iterable[KeyPath]:
    yield path
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _keypaths(value, path + (key,))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _keypaths(value, path + (index,))


# -------------------------------------------------------------------------------- provenance

_COMMENT = re.compile(r"(?:^|\s)#")
_URL_COMMENT = re.compile(r"(?:^|\s)#.*https?://")
_NULL_TAG = "tag:yaml.org,2002:null"


def provenance_problems(parsed: ReadFile) -> List[ProfileError]:
    """The "Sources" rules of the schema, for one file as written (not merged): every fact
    mapping has ``source:`` or a URL comment on each fact line; every null says why."""
    problems = []
    for key_node, value_node in parsed.root.value:
        key = key_node.value
        if key in FACT_SECTIONS:
            problems += _unsourced(parsed, value_node, (key,))
        elif key == "node_types" and isinstance(value_node, yaml.MappingNode):
            for name_node, type_node in value_node.value:
                problems += _unsourced(parsed, type_node, ("node_types", name_node.value))
    for path, node in _leaves(parsed.root, ()):
        if node.tag == _NULL_TAG and not _null_explained(parsed, node):
            problems.append(ProfileError(parsed.path, node.start_mark.line + 1, format_keypath(path),
                                         "null must say why in a comment on its line or the line above "
                                         "(e.g. `null  # not documented`)"))
    return sorted(problems, key=lambda e: e.line or 0)


def _unsourced(parsed: ReadFile, node, path: KeyPath) -> List[ProfileError]:
    if not isinstance(node, yaml.MappingNode):
        return []
    for key_node, value_node in node.value:
        if key_node.value == "source":
            return []
    for leaf_path, leaf in _leaves(node, path):
        if not _URL_COMMENT.search(_rest_of_line(parsed, leaf)):
            return [ProfileError(parsed.path, leaf.start_mark.line + 1, format_keypath(path),
                                 f"no source: add `source: URL` to this mapping, or end every fact line with "
                                 f"`# https://...` ({format_keypath(leaf_path)} has none)")]
    return []


def _leaves(node, path: KeyPath):
    """Scalars and empty collections: the lines that state a fact."""
    if isinstance(node, yaml.MappingNode) and node.value:
        for key_node, value_node in node.value:
            yield from _leaves(value_node, path + (key_node.value,))
    elif isinstance(node, yaml.SequenceNode) and node.value:
        for index, item in enumerate(node.value):
            yield from _leaves(item, path + (index,))
    else:
        yield path, node


def _null_explained(parsed: ReadFile, node) -> bool:
    """A null is explained by a trailing comment or by a comment-only line just above it."""
    if _COMMENT.search(_rest_of_line(parsed, node)):
        return True
    above = node.start_mark.line - 1
    return above >= 0 and parsed.text_lines[above].lstrip().startswith("#")


def _rest_of_line(parsed: ReadFile, node) -> str:
    mark = node.end_mark
    if mark.line >= len(parsed.text_lines):
        return ""
    return parsed.text_lines[mark.line][mark.column:]


# ---------------------------------------------------------------------------- public helpers

def load_profile(name: str, dirs: Optional[Sequence[Union[str, Path]]] = None) -> SiteProfile:
    """The profile ``name`` (or an alias) from the search path, merged and checked."""
    return ProfileCatalog(dirs).load(name)


def load_profile_file(path: Union[str, Path], dirs: Optional[Sequence[Union[str, Path]]] = None) -> SiteProfile:
    """A profile from a file anywhere; ``extends:`` looks in its folder, then the search path."""
    return _catalog_for(Path(path), dirs).load_file(Path(path))


def validate_file(path: Union[str, Path], dirs: Optional[Sequence[Union[str, Path]]] = None) -> List[ProfileError]:
    """Every problem of one profile file, schema and sources: what ``profiles validate`` prints."""
    return _catalog_for(Path(path), dirs).problems(Path(path), provenance=True)


def validate_text(text: str, path: Union[str, Path], dirs: Optional[Sequence[Union[str, Path]]] = None) -> List[ProfileError]:
    """As :func:`validate_file`, for text that is to be written at ``path`` (so that
    ``profiles detect`` checks what it writes before the file exists)."""
    path = Path(path)
    catalog = _catalog_for(path, dirs)
    try:
        catalog.remember(parse_profile_text(text, path))
    except ProfileError as error:
        return [error]
    return catalog.problems(path, provenance=True)


def _catalog_for(path: Path, dirs) -> ProfileCatalog:
    return ProfileCatalog([path.parent] + list(search_path() if dirs is None else dirs))


def list_profiles(dirs: Optional[Sequence[Union[str, Path]]] = None,
                  include_abstract: bool = False) -> Tuple[List[SiteProfile], List[ProfileError]]:
    """Every profile on the search path (the first of each name), and the errors of those
    that do not load: one broken user file must not hide the others. Those from the
    current folder are announced (local_files.py)."""
    catalog = ProfileCatalog(dirs)
    profiles, errors = catalog.all(include_abstract)
    for profile in profiles:
        catalog.announce_local(catalog.find(profile.name))
    return profiles, errors


# --------------------------------------------------------------------------------- detection

class Detection(Record):
    """Which profile applies here, and why (for messages: "narval (from $CC_CLUSTER)")."""

    name: str
    reason: str


class RetiredProfileWarning(UserWarning):
    """The chosen profile describes a retired cluster."""


def detect_profile(explicit: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
                   hostname: Optional[str] = None, dirs: Optional[Sequence[Union[str, Path]]] = None) -> Detection:
    """Pick the profile: ``--profile``, ``$SLURMKIT_PROFILE``, ``$CC_CLUSTER``,
    ``$SLURM_CLUSTER_NAME``, then hostname globs. A name given by the user must exist; the
    cluster variables fall through to the next step when no profile claims their value."""
    return _detect(ProfileCatalog(dirs), explicit, os.environ if env is None else env, hostname)


def _detect(catalog: ProfileCatalog, explicit: Optional[str], env: Mapping[str, str], hostname: Optional[str]) -> Detection:
    for value, reason in ((explicit, "--profile"), (env.get("SLURMKIT_PROFILE"), "$SLURMKIT_PROFILE")):
        if value:
            found = catalog.find(value)
            if catalog.parsed(found.path).data.get("abstract") is True:
                raise ProfileNotFound(f"{value!r} ({reason}) is an abstract base, not a cluster; "
                                      f"profiles: {', '.join(p.name for p in catalog.all()[0])}")
            return Detection(found.name, reason)
    profiles, _ = catalog.all()
    profiles.sort(key=lambda p: (catalog.files[p.name][0].layer, p.name))  # user profiles first
    tried = []
    for variable, attribute in (("CC_CLUSTER", "cc_cluster"), ("SLURM_CLUSTER_NAME", "slurm_cluster_name")):
        value = env.get(variable)
        if value:
            for profile in profiles:
                if value.lower() in (v.lower() for v in getattr(profile.detect, attribute)):
                    return Detection(profile.name, f"${variable}={value}")
            tried.append(f"${variable}={value}")
    if hostname is None:
        import socket

        hostname = socket.gethostname()
    host = hostname
    names = {host.lower(), host.split(".")[0].lower()}
    for profile in profiles:
        for pattern in profile.detect.hostnames:
            if any(fnmatch.fnmatchcase(n, pattern.lower()) for n in names):
                return Detection(profile.name, f"hostname {host} matches {pattern!r}")
    tried.append(f"hostname {host}")
    raise NoProfileDetected(
        f"cannot tell which cluster this is (no --profile or $SLURMKIT_PROFILE; no profile matches "
        f"{', '.join(tried)}); choose one with --profile NAME or export SLURMKIT_PROFILE=NAME; "
        f"profiles: {', '.join(p.name for p in sorted(profiles, key=lambda p: p.name)) or '(none)'}; "
        f"or describe this cluster with `slurmkit profiles detect -o site_profiles/NAME.yaml`")


def retirement_notice(profile: SiteProfile, spec_file: Optional[str] = None) -> Optional[str]:
    """The one line a user of a retired cluster's profile should read, or None; with the spec's
    file, the port command to run is exact."""
    if not profile.is_retired:
        return None
    when = f" on {profile.status.retired_on.isoformat()}" if profile.status.retired_on else ""
    note = f" ({profile.status.note})" if profile.status.note else ""
    # `port`, not `--profile SUCCESSOR`: GPU models, whole-node rules and limits differ, and only
    # port rewrites the spec for them (a spec asking Graham's t4 fails on Nibi as it is).
    return (f"profile {profile.name!r} describes a cluster retired{when}; its successor is "
            f"{profile.status.successor!r}: move the job with `slurmkit port {shlex.quote(spec_file or 'JOB.yaml')} "
            f"--to {profile.status.successor} -o {profile.status.successor}.yaml`{note}")


def retired_hardware_notice(profile: SiteProfile, node_type: NodeType, in_service: Sequence[str],
                            spec_file: Optional[str] = None) -> str:
    """The one line that refuses a job for ``node_type``, which ``profile`` retired: what, since
    when, and what to use instead (``in_service``: the names the cluster still has; on a retired
    cluster, the port to its successor)."""
    what = f"{node_type.gpus.model} GPUs" if node_type.gpus else f"{node_type.name} nodes"
    line = f"{profile.name}'s {what} were retired on {node_type.retired_on}: no job runs on them; "
    if profile.is_retired and profile.status.successor:
        successor = profile.status.successor
        return line + (f"{profile.name} itself was retired on {profile.status.retired_on}: `slurmkit port "
                       f"{shlex.quote(spec_file or 'JOB.yaml')} --to {successor}` moves the job onto {successor}'s hardware")
    return line + (f"ask for one it has: {', '.join(in_service)}" if in_service else "it has none in service")


def select_profile(explicit: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
                   hostname: Optional[str] = None, dirs: Optional[Sequence[Union[str, Path]]] = None,
                   warn_retired: bool = True) -> Tuple[SiteProfile, Detection]:
    """Detect and load the profile a command will use; warns (once per profile, through
    ``warnings``) when it is a retired cluster's, unless the caller reports that itself
    (the resolver does, as a finding)."""
    catalog = ProfileCatalog(dirs)
    detection = _detect(catalog, explicit, os.environ if env is None else env, hostname)
    profile = catalog.load(detection.name)
    notice = retirement_notice(profile) if warn_retired else None
    if notice:
        warnings.warn(notice, RetiredProfileWarning, stacklevel=2)
    return profile, detection

