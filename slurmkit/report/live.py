"""A running job's figures so far, from ``sstat`` (what its steps have used until now): what
``report`` shows of a RUNNING job where sacct has nothing yet, always labelled "so far".

sacct records a step's CPU time and memory when the step ends, so a running job's row has
``TotalCPU`` 00:00:00 and no ``MaxRSS``. ``sstat`` asks the nodes about the steps running now.
What it says, and how it is read here (checked on Slurm 22.05, jobacct_gather/linux):

- ``sstat -j ID`` alone shows the lowest numbered ``srun`` step, never the batch step: a job
  whose script runs without ``srun`` shows nothing. ``--allsteps`` (``-a``) shows every running
  step (``ID.batch``, ``ID.extern``, ``ID.0``...); it is in every release slurmkit supports;
- ``TRESUsageInTot`` holds ``cpu=HH:MM:SS`` (or ``D-HH:MM:SS``, ``MM:SS.mmm``), the CPU time of
  all the step's tasks so far; ``MaxRSS`` is the largest task's (``117388K``), and the step's
  memory is estimated as ``MaxRSS x NTasks``, as sacct's is (efficiency.py);
- a job with no running step (it has just started, or is between steps) gives no line and exit
  0 (``sstat: error: couldn't get steps for job ...`` on stderr): then there is nothing so far,
  which is never an error of the report;
- newer releases (the 24.05 man page): with jobacct_gather/cgroup on cgroup v2 the virtual memory
  fields read 0; slurmkit reads no virtual memory field.

CPU time of steps that have already ended is not in sstat (sacct has it, per step): the CPU so
far is the running steps', which for a script without ``srun`` is the whole job's.
"""

from __future__ import annotations

from typing import List, Optional, Sequence

from slurmkit.report.efficiency import JobEfficiency, SoFar, parse_cpu_time, parse_size, tres_value
from slurmkit.slurm.monitor import int_or_none

SSTAT_FIELDS = ("JobID", "NTasks", "MaxRSS", "TRESUsageInTot")


def sstat_command(job_id: str) -> List[str]:
    return ["sstat", "--allsteps", "-n", "-P", "-o", ",".join(SSTAT_FIELDS), "-j", str(job_id)]


def parse_sstat(text: str) -> Optional[SoFar]:
    """``sstat -a -n -P`` lines (fields as SSTAT_FIELDS) -> the running steps' CPU time and the
    largest step's memory; None when no step answered."""
    cpu, peak, estimated, steps = 0.0, None, False, []
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < len(SSTAT_FIELDS) or "." not in parts[0]:
            continue
        steps.append(parts[0].partition(".")[2])
        cpu += _tres_cpu(parts[3]) or 0.0
        rss = parse_size(parts[2], default_unit="K")
        tasks = int_or_none(parts[1]) or 1
        if rss is not None and (peak is None or rss * tasks > peak):
            peak, estimated = rss * tasks, tasks > 1
    return SoFar(cpu_s=cpu, peak_mib=peak, peak_estimated=estimated, steps=tuple(steps)) if steps else None


def _tres_cpu(tres: str) -> Optional[float]:
    """``cpu=00:00:08`` of a TRES string, in seconds (tres_value reads numbers only)."""
    for item in tres.split(","):
        key, _, value = item.partition("=")
        if key == "cpu":
            return parse_cpu_time(value) if ":" in value else tres_value(tres, "cpu")
    return None


def so_far(job_id: str) -> Optional[SoFar]:
    """What sstat says of ``job_id``'s running steps now; None when it says nothing or fails
    (a report of a running job then says its figures are not known yet)."""
    from slurmkit.slurm.slurmcli import SchedulerError, run_slurm

    try:
        text = run_slurm(sstat_command(job_id), retry_for=5.0, timeout=20.0, failed=f"sstat could not report on job {job_id}").stdout
    except SchedulerError:
        return None
    return parse_sstat(text)


def with_so_far(effs: Sequence[JobEfficiency], ask=so_far) -> List[JobEfficiency]:
    """Each RUNNING job or task with its figures so far (``ask(job_id)``: sstat's); an array's
    running tasks are asked one call each, up to MAX_ASKED (past that, the rest keep none)."""
    out, asked = [], 0
    for eff in effs:
        if eff.state == "RUNNING" and asked < MAX_ASKED:
            asked += 1
            eff = eff._replace(so_far=ask(eff.job_id))
        out.append(eff)
    return out


#: the most running tasks of an array asked one by one (each is a call to their nodes).
MAX_ASKED = 20
