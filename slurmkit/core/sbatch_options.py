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
    # options no spec field decides, named for their one-letter spelling
    SbatchOption("output", short="o"),
    SbatchOption("error", short="e"),
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
