"""The sbatch options a spec's fields decide, in one table: which field, how `slurmkit port`
tells the user to write it, submitit's parameter, and sbatch's one-letter spelling.

sanity.SPEC_OPTIONS (extra_directives that repeat a spec field), porting.OWN_OPTIONS and
porting.SHORT (reading an existing script) and functions (submitit parameters) are views of it.
Order matters: sanity takes the first, shortest match for an abbreviated option (--gpus-per is
--gpus-per-node), as sbatch's getopt_long does for the options in this order.
"""

from __future__ import annotations

from typing import Dict, Tuple

from slurmkit.core.kinds import first_kind
from slurmkit.core.records import Record


class SbatchOption(Record):
    """One sbatch option (long name without dashes) and what slurmkit writes it from."""

    name: str
    field: str = ""          # the spec key that decides it (sanity's message), "" if none
    port_hint: str = ""      # how `slurmkit port` says to write it in a spec, "" if port reads it itself
    submitit: str = ""       # submitit.SlurmExecutor's parameter for it, "" where it passes through
    short: str = ""          # sbatch's one-letter option (man sbatch)


_TASKS, _GPUS = "tasks_per_node: N", "gpus: MODEL:N"
OPTIONS: Tuple[SbatchOption, ...] = (
    SbatchOption("time", "resources.time", "time: 3h", short="t"),
    SbatchOption("nodes", "resources.nodes", "nodes: N", "nodes", short="N"),
    SbatchOption("ntasks", "resources.nodes and resources.tasks_per_node", _TASKS, short="n"),
    SbatchOption("ntasks-per-node", "resources.tasks_per_node", _TASKS, "ntasks_per_node"),
    SbatchOption("tasks-per-node", "resources.tasks_per_node", _TASKS),
    SbatchOption("cpus-per-task", "resources.cpus_per_task", "cpus_per_task: N", "cpus_per_task", short="c"),
    SbatchOption("mem", "resources.mem", "mem: 4G", "mem"),
    SbatchOption("mem-per-cpu", "resources.mem_per_cpu", "mem_per_cpu: 2G", "mem_per_cpu"),
    SbatchOption("gpus", "resources.gpus", _GPUS, short="G"),
    SbatchOption("gpus-per-node", "resources.gpus", _GPUS),
    SbatchOption("gpus-per-task", "resources.gpus", _GPUS),
    SbatchOption("tmp", "resources.tmp", "tmp: 100G"),
    SbatchOption("job-name", "name", "name", "job_name", short="J"),
    SbatchOption("account", "account", "account", "account", short="A"),
    SbatchOption("array", f"kind: {first_kind(sweeps=True).name} with array.parameters", "array.parameters", short="a"),
    SbatchOption("dependency", "dependencies", "dependencies", short="d"),
    SbatchOption("mail-user", "mail.user", "mail.user"),
    SbatchOption("mail-type", "mail.events", "mail.events"),
    SbatchOption("gres", port_hint=_GPUS),
    SbatchOption("output", "logs.output", "logs.output", short="o"),
    SbatchOption("error", "logs.error", "logs.error", short="e"),
    # options no spec field decides, named for their one-letter spelling
    SbatchOption("chdir", short="D"),
    SbatchOption("partition", short="p"),
    SbatchOption("constraint", short="C"),
    SbatchOption("qos", short="q"),
    SbatchOption("nodelist", short="w"),
    SbatchOption("exclude", short="x"),
)

#: option -> the spec key that decides it.
SPEC_FIELDS: Dict[str, str] = {o.name: o.field for o in OPTIONS if o.field}
#: option -> how to write it in a spec, for a script `slurmkit port` cannot read it from.
PORT_HINTS: Dict[str, str] = {o.name: o.port_hint for o in OPTIONS if o.port_hint}
#: "--option" -> submitit's parameter.
SUBMITIT_PARAMETERS: Dict[str, str] = {"--" + o.name: o.submitit for o in OPTIONS if o.submitit}
#: one letter -> option.
SHORT_NAMES: Dict[str, str] = {o.short: o.name for o in OPTIONS if o.short}


#: Every long option of sbatch (sbatch(1), Slurm 22.05 to 24.11; --tasks-per-node is --ntasks-per-node
#: by another name, and Slurm 22.05 takes --tasks=2, its prefix), for the prefixes getopt_long
#: takes: a script's ``--out=FILE`` is --output, ``--ntasks-per=4`` is refused by sbatch (several match).
ALL_LONG_NAMES: Tuple[str, ...] = (
    "account", "acctg-freq", "array", "batch", "bb", "bbf", "begin", "chdir", "cluster-constraint", "clusters",
    "comment", "constraint", "container", "container-id", "contiguous", "core-spec", "cores-per-socket", "cpu-freq",
    "cpus-per-gpu", "cpus-per-task", "deadline", "delay-boot", "dependency", "distribution", "error", "exclude",
    "exclusive", "export", "export-file", "extra", "extra-node-info", "get-user-env", "gid", "gpu-bind", "gpu-freq",
    "gpus", "gpus-per-node", "gpus-per-socket", "gpus-per-task", "gres", "gres-flags", "help", "hint", "hold",
    "ignore-pbs", "input", "job-name", "kill-on-invalid-dep", "licenses", "mail-type", "mail-user", "mcs-label", "mem",
    "mem-bind", "mem-per-cpu", "mem-per-gpu", "mincpus", "network", "nice", "no-kill", "no-requeue", "nodefile",
    "nodelist", "nodes", "ntasks", "ntasks-per-core", "ntasks-per-gpu", "ntasks-per-node", "ntasks-per-socket",
    "open-mode", "output", "overcommit", "oversubscribe", "parsable", "partition", "power", "prefer", "priority",
    "profile", "propagate", "qos", "quiet", "reboot", "requeue", "reservation", "signal", "sockets-per-node",
    "spread-job", "switches", "test-only", "thread-spec", "threads-per-core", "time", "time-min", "tmp",
    "tasks-per-node", "tres-per-task", "uid", "usage", "use-min-nodes", "verbose", "version", "wait", "wait-all-nodes", "wckey", "wrap",
)


def full_long_name(name: str) -> str:
    """``name`` as sbatch reads it: a long option, or the one long option it is a prefix of
    (getopt_long); anything else as written (an unknown or ambiguous name, which sbatch refuses)."""
    if name in ALL_LONG_NAMES:
        return name
    longer = [full for full in ALL_LONG_NAMES if full.startswith(name)] if name else []
    return longer[0] if len(longer) == 1 else name


#: sbatch's options about requeueing, besides --signal: a kind that requeues on the signal writes
#: --requeue and --open-mode=append itself, and --no-requeue would undo them (resolve, porting, sanity)
REQUEUE_OPTIONS = ("requeue", "no-requeue", "open-mode")


#: How a job may wait for others, as a spec (``dependencies: [{after: ok}]``) and ``submit
#: --after-type`` name it -> the type sbatch's --dependency takes (sbatch(1)): ``start`` is
#: plain ``after``, the others ``after`` + the name.
DEPENDENCY_TYPES: Dict[str, str] = {"ok": "afterok", "any": "afterany", "notok": "afternotok", "start": "after"}


def dependency(after: str, job_ids) -> str:
    """One --dependency term: ``afterok:12:13``."""
    return f"{DEPENDENCY_TYPES[after]}:{':'.join(job_ids)}"
