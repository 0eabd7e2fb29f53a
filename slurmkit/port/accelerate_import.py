"""``slurmkit import`` of a Hugging Face Accelerate script: ``[srun ...] accelerate launch [OPTIONS]
PROGRAM [ARGS]`` becomes kind accelerate (the kind with ``launches_per_node``).

The kind starts one srun task per process itself, with the ranks, the rendezvous and
Accelerate's settings in the environment (framework_kinds.accelerate_environment): so the
spec's command is what accelerate ran, ``python`` written out (``python -m M`` for ``-m``, the
program as written for ``--no_python``). Each option of the script's line gets a note: the counts
are checked against the #SBATCH request (the kind derives them from GPUs per node x nodes),
``--mixed_precision`` becomes launch.mixed_precision, what the kind passes itself is dropped, and
what it cannot carry (a config file, DeepSpeed, FSDP, Megatron-LM, TorchDynamo...) is left to the
user. Options and their arity: launch_options.ACCELERATE (accelerate 1.15.0's parser).
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from slurmkit.core.kinds import KINDS, first_kind
from slurmkit.core.launch_options import ACTIONS, Parsed, parse
from slurmkit.core.launchers import MIXED_PRECISIONS
from slurmkit.core.records import Record

#: what the not-carried options would have set up, and where it belongs instead
NOT_CARRIED = ("is not carried: kind {kind} gives its ranks only the counts, the rendezvous and mixed precision, "
               "so what {option} sets up (a config file, DeepSpeed, FSDP, Megatron-LM, TorchDynamo, FP8, TPU, restarts) is "
               "lost: give it to the program (Accelerator(...) and its plugins) and delete this line")


#: why an option the kind passes (or needs not) is dropped
DROPPED = {
    "accelerate_rendezvous": "kind {kind} passes it itself: each node's rank ($SLURM_NODEID) and the rendezvous "
                             "(MASTER_ADDR: the first node; MASTER_PORT: from the job id)",
    "accelerate_multi": "kind {kind} passes --multi_gpu itself where the job has more than one process",
    "accelerate_gpus": "each node's processes use the GPUs the job asks for (every process keeps the node's GPUs in view)",
    "accelerate_threads": "slurmkit sets OMP_NUM_THREADS from cpus_per_task",
    "accelerate_logs": "the job's log has every process's output",
}


class AccelerateLine(Record):
    """What import keeps of the line's counts until the request is known (``_finish``)."""
    number: int
    num_processes: Optional[Tuple[str, str]] = None   # (the option as the script spelled it, its value)
    num_machines: Optional[Tuple[str, str]] = None
    cpu: bool = False
    mixed_precision: Optional[str] = None           # launch.mixed_precision, set after the command


def under_srun(parsed: Parsed) -> Tuple[Parsed, Optional[Parsed]]:
    """``srun [OPTIONS] accelerate launch ...``: the accelerate line, and srun's (None without srun)."""
    if parsed.launcher == "srun" and parsed.program:
        inner = parse(list(parsed.program))
        if inner.launcher == "accelerate":
            return inner, parsed
    return parsed, None


def read_options(build, number: int, parsed: Parsed) -> AccelerateLine:
    """A note for each of accelerate's options; the counts wait for the request (adopt)."""
    kind = first_kind(launches_per_node=True).name
    line = AccelerateLine(number)
    dropped: Dict[str, List[str]] = {}
    for option, values, action in parsed.options:
        spelled = " ".join((option, *values))
        value = values[0] if values else ""
        if action == "accelerate_counts":
            line = _with_count(line, option, (spelled, value))
        elif action == "accelerate_precision" and value in MIXED_PRECISIONS:
            line = line._replace(mixed_precision=value)
            build.note(number, spelled, "mapped", f"launch.mixed_precision: {value}")
        elif action == "accelerate_precision":
            build.note(number, spelled, "to do", f"kind {kind} takes launch.mixed_precision {', '.join(MIXED_PRECISIONS[:-1])} "
                                                 f"or {MIXED_PRECISIONS[-1]}, not {value!r}: it runs with no mixed precision "
                                                 "unless you set one (or set it in the program's Accelerator)")
        elif action == "accelerate_program":
            build.note(number, spelled, "mapped", "launch.command runs the program as written" if "python" in option
                       else "launch.command runs it as python -m MODULE")
        elif action == "accelerate_cpu":
            line = line._replace(cpu=True)
        elif action == "accelerate_dynamo" and value.lower() == "no":
            build.note(number, spelled, "dropped", f"kind {kind} sets ACCELERATE_DYNAMO_BACKEND=NO itself")
        elif action in ("accelerate_dynamo", "not_carried"):
            build.note(number, spelled, "to do", f"accelerate launch option {option} " + NOT_CARRIED.format(kind=kind, option=option))
        elif action == "unknown":
            build.note(number, spelled, "to do", f"accelerate launch option {option} is not one slurmkit knows: "
                                                 "if it takes a value, the command is wrong; carry it over by hand")
        else:
            dropped.setdefault(action, []).append(spelled)
    for action, spellings in dropped.items():
        build.note(number, " ".join(spellings), "dropped", DROPPED[action].format(kind=kind) if action in DROPPED else ACTIONS[action])
    return line


def _with_count(line: AccelerateLine, option: str, given: Tuple[str, str]) -> AccelerateLine:
    """``--num_machines`` (or ``--num-machines``) or ``--num_processes``, as the script gave it."""
    if option.lstrip("-").replace("-", "_") == "num_machines":
        return line._replace(num_machines=given)
    return line._replace(num_processes=given)


def adopt(build, kind: str) -> None:
    """The request of kind accelerate: one process per GPU (on CPUs, the script's processes per
    node as tasks), the node's cores shared among them; the counts checked against it."""
    line: AccelerateLine = build.accelerate
    res = build.spec["resources"]
    if line.mixed_precision:
        build.spec["launch"]["mixed_precision"] = line.mixed_precision
    nodes = res.get("nodes", 1)
    gpus = _gpu_count(res.get("gpus"))
    tasks = res.pop("tasks_per_node", 1)
    known = {"SLURM_NNODES": nodes, "SLURM_JOB_NUM_NODES": nodes, "SLURM_NTASKS_PER_NODE": tasks, "SLURM_NTASKS": tasks * nodes,
             "SLURM_GPUS_ON_NODE": gpus, "SLURM_GPUS_PER_NODE": gpus}
    per_node = gpus or _cpu_processes(line, nodes, known)
    if "cpus_per_task" in res:
        res["cpus_per_task"] = max(1, res["cpus_per_task"] * tasks // per_node)
    if not gpus and per_node > 1:
        res["tasks_per_node"] = per_node
    shape = f"{gpus} GPUs per node" if gpus else f"{per_node} processes per node"
    _count(build, line.number, line.num_processes, per_node * nodes, f"{shape} x {_nodes(nodes)}", known)
    _count(build, line.number, line.num_machines, nodes, _nodes(nodes), known)
    _cpu_flag(build, line, gpus, kind)
    cores = f"; {res['cpus_per_task']} cores each" if "cpus_per_task" in res else ""
    processes = f"{per_node} process{'es' if per_node > 1 else ''}"
    build.note(0, f"kind: {kind}", "mapped", f"`accelerate launch`: kind {kind} starts the node's {processes} ({shape}) "
               f"with srun{cores}; slurmkit sets {KINDS[kind].sets_in_environment}")


def _gpu_count(gpus) -> int:
    """GPUs per node of resources.gpus (``4``, ``a100:4``; a model alone is one)."""
    if gpus is None:
        return 0
    tail = str(gpus).rpartition(":")[2]
    return int(tail) if tail.isdigit() else 1


def _nodes(count: int) -> str:
    return f"{count} node{'s' if count > 1 else ''}"


def _cpu_processes(line: AccelerateLine, nodes: int, known: Dict[str, int]) -> int:
    """Processes per node on CPUs: the script's --num_processes over its nodes (accelerate's
    default without it is one); a count import cannot read or divide is checked by _count."""
    total = _evaluated(line.num_processes[1] if line.num_processes else "1", known)
    return total // nodes if total and total % nodes == 0 else 1


#: a count as scripts write it: 8, $SLURM_NNODES, ${SLURM_NNODES}, $((SLURM_NNODES * 4)), "$((...))"
_NAME = re.compile(r"\$\{?([A-Za-z_]\w*)\}?|\b([A-Za-z_]\w*)\b")


def _evaluated(value: str, known: Dict[str, int]) -> Optional[int]:
    """The number a count stands for, where it is digits and SLURM's counts joined by + and *."""
    text = value.strip("\"'")
    if text.startswith("$((") and text.endswith("))"):
        text = text[3:-2]
    missing = []

    def number(match) -> str:
        name = match.group(1) or match.group(2)
        if known.get(name) is None:
            missing.append(name)
            return "0"
        return str(known[name])

    text = _NAME.sub(number, text)
    if missing or not re.fullmatch(r"[\d\s+*()]+", text) or "**" in text or len(text) > 100:
        return None
    try:
        return int(eval(text, {"__builtins__": {}}))   # digits, +, * and parentheses only (checked above)
    except (SyntaxError, ValueError, TypeError):
        return None


def _count(build, number: int, given: Optional[Tuple[str, str]], expected: int, why: str, known) -> None:
    """A count of the script checked against the request's: the kind passes its own."""
    if given is None:
        return
    spelled, value = given
    got = _evaluated(value, known)
    if got is None:
        build.note(number, spelled, "dropped", f"slurmkit passes {expected} ({why}); the script's {value} is computed "
                                                    "by the shell and was not checked: check that it meant that")
    elif got != expected:
        build.note(number, spelled, "to do", f"the script asked accelerate for {got} where the job has {why}: slurmkit "
                                                  f"starts {expected}; change the request (GPUs per node, nodes) or the program")
    else:
        build.note(number, spelled, "mapped", f"slurmkit passes {expected} ({why}) itself")


def _cpu_flag(build, line: AccelerateLine, gpus: int, kind: str) -> None:
    if not line.cpu:
        return
    if gpus:
        build.note(line.number, "--cpu", "to do", f"the script ran accelerate on the CPUs of GPU nodes; kind {kind} runs it on "
                                                  "the GPUs: to run on CPUs, drop the GPUs from the request; else delete this line")
    else:
        build.note(line.number, "--cpu", "dropped", f"kind {kind} sets ACCELERATE_USE_CPU=true itself on nodes without GPUs")
