"""Kind ``many-tasks``: many small tasks inside whole nodes, run by GNU Parallel.

Trillium and Niagara schedule whole nodes only: a serial job would hold 192 (40) cores and use
one. Their Quickstarts tell users to bundle serial work with GNU Parallel
(https://docs.alliancecan.ca/wiki/Trillium_Quickstart/en, "Whole node or whole gpu
scheduling"), and the Alliance's GNU Parallel page (https://docs.alliancecan.ca/wiki/GNU_Parallel/en)
gives the recipe: a task file (a command a line, or an argument line for one command), a
``--joblog`` that records every task as it ends, and ``--resume-failed`` to go on from it.

What the job does (templates/many-tasks.sbatch.j2):

- ``--ntasks-per-node`` is the number of tasks at a time on a node and ``--cpus-per-task`` the
  cores of each, as in the page's multi-node example (``parallel --jobs $SLURM_NTASKS_PER_NODE``
  with ``OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK``); both are read from SLURM at run time. On a
  whole-node site the resolver fills the node (192 single-core tasks at a time on Trillium).
- One GNU Parallel per node: on several nodes, ``srun`` starts one on each and node i of N
  takes the task file's lines i, i+N, i+2N ... (blank lines skipped). The page's own multi-node
  recipe starts tasks over SSH, which it marks "Not recommended".
- The joblogs live in a folder beside the spec (never in ``$SLURM_TMPDIR``, which ends with
  the job), one per node: ``node-I-of-N.log``.
- ``--resume-failed``, not ``--resume``: GNU Parallel matches joblog lines to tasks by sequence
  number, and a task killed by a cancel or the time limit may be logged with its signal
  (``--resume`` would then count it as done and never run it again); ``--resume-failed`` runs
  again every task that failed, was cut off or never started, and skips only those that
  succeeded. A task that always fails therefore runs again in each new job, which is what a
  user who fixed its cause wants.
- Because tasks are matched by line number, the job keeps a copy of the task file it began
  with and refuses to resume over a file whose existing lines changed (adding lines at the end
  is fine), or over joblogs of a run on another number of nodes.
- The exit status is 1 when any task failed or did not run, with the counts in the log.
"""

import re
import shlex
from pathlib import Path
from typing import List, Optional, Tuple

from slurmkit.core.files import read_bytes_bounded
from slurmkit.core.findings import Finding, Findings
from slurmkit.core.kinds import ONE, first_kind, kind_of
from slurmkit.core.plan import Plan, TasksPlan
from slurmkit.core.programs import runs_python
from slurmkit.core.userpaths import in_job
from slurmkit.sites.profiles import SiteProfile
from slurmkit.spec.spec import JobSpec

#: The key of a profile's software.modules that names GNU Parallel's module: "" where
#: ``parallel`` is on PATH without one, null where that is not known.
MODULE_KEY = "parallel"
#: Words GNU Parallel reads as input sources anywhere on its command line.
_INPUT_SOURCE_WORD = re.compile(r"^::::?\+?$")
#: What a Perl regular expression (GNU Parallel's --colsep) reads as other than itself.
_REGEX_SPECIAL = frozenset("\\^$.|?*+()[]{}")


def tasks_plan(spec: JobSpec, shape: Tuple[int, int], findings: Findings) -> Optional[TasksPlan]:
    """The task file and joblog folder as shell words, how many at a time (``shape``: tasks per
    node, cores per task), or errors for what GNU Parallel cannot run."""
    tasks = spec.tasks
    if tasks is None:
        return None
    kind = kind_of(spec).name
    if spec.resources.gpus is not None:
        findings.error("resources.gpus", f"kind {kind!r} runs CPU tasks; for GPU work use kind "
                       f"{first_kind(gpu_required=True, processes=ONE).name!r}, "
                       f"or {first_kind(sweeps=True).name!r} for one job per GPU task")
    if spec.resubmit is not None:
        findings.error("resubmit", f"kind {kind!r} resumes from its joblog, not from a checkpoint: submit the same job again "
                       "to run the tasks that are left")
    for index, word in enumerate(spec.launch.command):
        if _INPUT_SOURCE_WORD.fullmatch(word):
            findings.error(f"launch.command.{index}", f"GNU Parallel reads {word!r} as an input source; the tasks come from "
                           "tasks.arguments, so leave it out (quote it inside a word if your program needs it)")
    joblog = tasks.joblog or f"{spec.name}.joblog"
    if all(part in ("", ".", "..") for part in joblog.split("/")):
        findings.error("tasks.joblog", f"{joblog!r} is not a folder of its own: give the joblogs one (e.g. {spec.name}.joblog)")
    one_node = spec.resources.nodes == 1
    return TasksPlan(file=in_job(tasks.file), lines=tasks.lines, joblog=in_job(joblog),
                     separator=None if tasks.separator is None else colsep(tasks.separator),
                     one_node=one_node, jobs=jobs_word(one_node, shape[1]), at_once=spec.resources.nodes * shape[0],
                     pace="one on each of the job's" if shape[1] == 1 else f"one on every {shape[1]} of the job's")


def jobs_word(one_node: bool, cores_per_task: int) -> str:
    """``parallel --jobs``: on one node, the job's cores over each task's (``$SLURM_CPUS_PER_TASK``
    where a task has one core, as the GNU Parallel page writes it); on several, the tasks per
    node that the batch script relays to each node's one-task step."""
    if not one_node:
        return '"$SLURMKIT_TASKS_AT_ONCE"'
    return '"$SLURM_CPUS_PER_TASK"' if cores_per_task == 1 else f'"$((SLURM_CPUS_PER_TASK / {cores_per_task}))"'



def colsep(separator: str) -> str:
    """The spec's column separator (literal text) as GNU Parallel's ``--colsep``, a Perl regular
    expression: "," stays ",", "." and "|" are escaped, a tab is written ``\\t`` (readable in the script)."""
    return "".join("\\t" if c == "\t" else "\\" + c if c in _REGEX_SPECIAL else c for c in separator)


def parallel_module(profile: SiteProfile, modules: List[str]) -> List[str]:
    """GNU Parallel's module where the profile names one and the spec loads none of its family."""
    name = profile.software.modules.get(MODULE_KEY)
    if not name or any(m.split("/")[0] == name.split("/")[0] for m in modules):
        return []
    return [name]


#: the largest task file ``check`` reads: a million commands of 60 characters; the job itself
#: reads its line with sed, so a larger file still runs, unchecked (check says so).
MAX_TASK_FILE_BYTES = 64 << 20


def task_file_findings(spec: JobSpec, profile: SiteProfile, plan: Optional[Plan], base_dir: Path) -> Tuple[Finding, ...]:
    """What ``check`` learns from reading the task file: missing, empty or with DOS line endings,
    fewer tasks than the job runs at a time, and commands that run Python with no python module loaded."""
    if spec.tasks is None:
        return ()
    findings = Findings()
    field = f"tasks.{spec.tasks.lines}"
    path = Path(spec.tasks.file) if spec.tasks.file.startswith("/") else base_dir / spec.tasks.file
    try:   # as bytes: read_text would hide "\r\n"; bounded, and a pipe or device is refused, not waited on
        text = read_bytes_bounded(path, MAX_TASK_FILE_BYTES).decode(errors="replace")
    except OSError as error:
        findings.error(field, f"cannot read {path}: {error.strerror or error}")
        return tuple(findings)
    if "\r\n" in text:
        findings.error(field, f"{path} has DOS line endings: each task would end in a carriage return; convert it with dos2unix")
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        findings.error(field, f"{path} has no tasks (blank lines are skipped)")
        return tuple(findings)
    if plan is not None:
        _check_task_count(len(lines), plan, bool(profile.scheduling.whole_node), findings)
        if spec.tasks.lines == "commands":
            _check_python(lines, plan, findings)
    return tuple(findings)


def _check_task_count(count: int, plan: Plan, whole_nodes: bool, findings: Findings) -> None:
    slots = plan.tasks.at_once if plan.tasks else 1
    if count < slots:
        remedy = "bundle more tasks into the job" if whole_nodes else "bundle more tasks, or lower tasks_per_node"
        findings.warn("resources.tasks_per_node", f"{count} tasks for {slots} at a time (nodes x tasks_per_node): "
                      f"{slots - count} slots stay idle for the whole job; {remedy}")


def _check_python(lines: List[str], plan: Plan, findings: Findings) -> None:
    if plan.module_system == "none" or any(m.split("/")[0] == "python" for m in plan.modules):
        return
    for number, line in enumerate(lines, 1):
        try:
            words = shlex.split(line)
        except ValueError:
            continue
        if runs_python(words):
            findings.warn("environment.modules", f"task {number} runs Python and no python module is loaded, so it gets the "
                          "compute node's OS python: add the site's python module (e.g. python/3.11) to environment.modules")
            return
