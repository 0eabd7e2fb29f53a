"""Why a job waits and how long it has left, in words: SLURM's pending Reason explained, times
as ``H:MM:SS``, a text bar, and an array's state counts and ETA. ``status`` and ``watch`` show
them; nothing here asks SLURM.
"""

from __future__ import annotations

import math
from typing import Dict, Iterable, List, Mapping, Optional

#: SLURM's pending Reason -> what it means for the user (a Reason not here is shown as SLURM said it).
REASONS = {
    "Priority": "waiting for jobs of higher priority to start first",
    "Resources": "next in line, waiting for nodes to become free",
    "BeginTime": "not allowed to start before its --begin time",
    "Dependency": "waiting for the jobs it depends on (--after) to end",
    "DependencyNeverSatisfied": "will never start: a job it depends on ended in a way the dependency excludes "
                                "(cancel it, or scontrol update it)",
    "JobHeldUser": "held by its owner: `scontrol release ID` lets it start",
    "JobHeldAdmin": "held by an administrator: ask the site's support",
    "QOSMaxJobsPerUserLimit": "you have as many jobs running as the QOS allows: it starts when one ends",
    "QOSMaxSubmitJobPerUserLimit": "you have as many jobs queued as the QOS allows",
    "QOSGrpCpuLimit": "the QOS's group has every CPU it may use in use",
    "QOSMaxWallDurationPerJobLimit": "its time limit is above the QOS's maximum: it will never start as it is",
    "AssocGrpCPULimit": "your account's group uses every CPU it may: it starts when the group's jobs end",
    "AssocGrpCpuLimit": "your account's group uses every CPU it may: it starts when the group's jobs end",
    "AssocGrpGRES": "your account's group uses every GPU it may: it starts when the group's jobs end",
    "AssocGrpMemLimit": "your account's group uses all the memory it may: it starts when the group's jobs end",
    "AssocGrpNodeLimit": "your account's group uses every node it may: it starts when the group's jobs end",
    "AssocMaxJobsLimit": "your account has as many jobs running as it may: it starts when one ends",
    "AssocGrpBillingMinutes": "your account's group has used its allocation of billed minutes",
    "ReqNodeNotAvail": "a node it needs is down, drained or reserved (a maintenance reservation?)",
    "PartitionTimeLimit": "its time limit is above the partition's maximum: it will never start as it is",
    "PartitionNodeLimit": "it asks for more nodes than the partition allows",
    "PartitionDown": "its partition is down",
    "PartitionInactive": "its partition is inactive",
    "InvalidAccount": "its account is not valid here: it will never start (check --account)",
    "InvalidQOS": "its QOS is not valid for its account: it will never start",
    "BadConstraints": "no node has the features it asks for: it will never start as it is",
    "NodeDown": "a node it needs is down",
    "Reservation": "waiting for its reservation to start",
    "Licenses": "waiting for a license",
    "JobArrayTaskLimit": "the array's task limit (%N) is reached: it starts when a sibling task ends",
    "Nodes_required_for_job_are_DOWN,_DRAINED_or_reserved_for_jobs_in_higher_priority_partitions":
        "the nodes it needs are down, drained or reserved for higher-priority partitions",
    "launch failed requeued held": "its start failed and SLURM held it: `scontrol release ID` retries",
}

#: Reason prefixes whose words cover every limit of the kind (AssocGrpGRESMinutes, QOSGrpMemLimit, ...).
REASON_KINDS = (("AssocGrp", "your account's group has reached one of its limits ({name}): it starts when the group's jobs end"),
                ("AssocMax", "your account has reached one of its limits ({name}): it starts when one of its jobs ends"),
                ("QOSGrp", "the QOS's group has reached one of its limits ({name})"),
                ("QOSMax", "you have reached one of the QOS's limits ({name})"))


def reason_text(reason: str) -> str:
    """SLURM's pending Reason in words; one this table does not know, as SLURM said it."""
    reason = reason.strip()
    if reason in REASONS:
        return REASONS[reason]
    for prefix, words in REASON_KINDS:
        if reason.startswith(prefix):
            return words.format(name=reason)
    return reason


def hms(seconds: Optional[float]) -> str:
    """``H:MM:SS`` (hours past 24 stay hours: ``30:00:00``); "" for None; a negative time as 0:00:00."""
    if seconds is None:
        return ""
    total = max(int(seconds), 0)
    return f"{total // 3600}:{total % 3600 // 60:02d}:{total % 60:02d}"


def time_left_s(elapsed_s: Optional[int], limit_s: Optional[int]) -> Optional[int]:
    """What is left of the time limit (None when there is no limit to count down from)."""
    if limit_s is None:
        return None
    return max(limit_s - (elapsed_s or 0), 0)


def bar_text(fraction: Optional[float], width: int = 20) -> str:
    """``[#####...............]``: a bar for a plain terminal or a log; "" when nothing is known."""
    if fraction is None:
        return ""
    filled = min(width, max(0, round(fraction * width)))
    return "[" + "#" * filled + "." * (width - filled) + "]"


class ArrayProgress:
    """Where an array stands: tasks per state, how many ended, and an ETA from the tasks that ended."""

    def __init__(self, job_id: str, counts: Dict[str, int], ended: int, total: int, eta_s: Optional[int]) -> None:
        self.job_id, self.counts, self.ended, self.total, self.eta_s = job_id, counts, ended, total, eta_s

    def as_json(self) -> dict:
        return {"job": self.job_id, "tasks": self.total, "ended": self.ended, "counts": self.counts,
                "eta_s": self.eta_s, "eta": hms(self.eta_s)}

    def text(self) -> str:
        """``array 12: [######..............] 30/100 ended: 25 COMPLETED, 5 FAILED, 10 RUNNING, 60 PENDING; ETA 1:20:00``."""
        said = ", ".join(f"{n} {state}" for state, n in self.counts.items())
        eta = "" if self.ended >= self.total else "; ETA not known until a task ends" if self.eta_s is None else f"; ETA {hms(self.eta_s)}"
        bar = bar_text(self.ended / self.total if self.total else None)
        return f"array {self.job_id}: {bar} {self.ended}/{self.total} ended: {said}{eta}"


def array_progress(job_id: str, tasks: List, terminal: Iterable[str]) -> ArrayProgress:
    """``tasks``: the statuses of one array's tasks (monitor.JobStatus). The ETA assumes the tasks
    to come take as long as the mean of those that ended, run as many at a time as run now (at
    least one): the running ones finish their mean, then the pending ones in waves."""
    ended_states = frozenset(terminal)
    counts: Dict[str, int] = {}
    for task in tasks:
        counts[task.state] = counts.get(task.state, 0) + 1
    ended = [task for task in tasks if task.state in ended_states and not task.settling]
    durations = [task.elapsed_s for task in ended if task.elapsed_s is not None]
    eta = None
    if durations and len(ended) < len(tasks):
        mean = sum(durations) / len(durations)
        running = [task for task in tasks if task.state == "RUNNING"]
        waiting = len(tasks) - len(ended) - len(running)
        running_left = max((mean - (task.elapsed_s or 0) for task in running), default=0.0)
        eta = int(max(running_left, 0) + math.ceil(waiting / max(len(running), 1)) * mean)
    elif len(ended) == len(tasks):
        eta = 0
    order = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ArrayProgress(job_id, dict(order), len(ended), len(tasks), eta)


def arrays(statuses: Mapping[str, object], terminal: Iterable[str]) -> List[ArrayProgress]:
    """The progress of every array among ``statuses`` (keys ``12_3``), in order of first task."""
    by_array: Dict[str, List] = {}
    for job_id, status in statuses.items():
        head, sep, _ = job_id.partition("_")
        if sep:
            by_array.setdefault(head, []).append(status)
    ended = frozenset(terminal)
    return [array_progress(job_id, tasks, ended) for job_id, tasks in by_array.items()]
