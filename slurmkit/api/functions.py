"""Python callables as jobs: submitit's executor, with the spec's site-correct environment.

``submit_function(fn, *args, spec=...)`` resolves the spec like any job, turns its directives
into submitit's parameters and its environment, module and virtualenv blocks (rendered by the
same templates as scripts) into submitit's ``setup`` lines; submitit pickles the call and
returns a future whose ``result()`` is the function's return value, or raises what it raised
(raised.py carries the exception back), or ``JobFailed`` where the job died without one.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, TypeVar, Union, cast

from slurmkit.core.plan import Plan
from slurmkit.core.sbatch_options import SUBMITIT_PARAMETERS
from slurmkit.core.units import parse_duration

if TYPE_CHECKING:   # for the hints only: job.py imports the pipeline, submit.py submitit
    from slurmkit.api.job import Job
    from slurmkit.slurm.submit import JobHandle

#: what the function returns, and so what its handle's ``result()`` gives.
R = TypeVar("R")
#: what describes a function's job: a Job, job.yaml's keys, or a job.yaml path.
FunctionSpec = Union["Job", Mapping[str, Any], str, Path]

#: sbatch options that submitit takes as named parameters (the rest pass through as they are).
_NAMED = SUBMITIT_PARAMETERS   # sbatch_options.py holds the table
_INTEGERS = {"nodes", "ntasks_per_node", "cpus_per_task"}
#: submitit writes its own logs; the script's output paths do not apply.
_SKIPPED = {"--output", "--error"}


def executor_parameters(plan: Plan) -> Dict[str, Any]:
    """submitit.SlurmExecutor parameters for ``plan``'s directives."""
    named: Dict[str, Any] = {}
    extra: Dict[str, Any] = {}
    for flag, value in plan.directives:
        if flag in _SKIPPED:
            continue
        if flag == "--time":
            named["time"] = -(-parse_duration(value) // 60)
        elif flag in _NAMED:
            key = _NAMED[flag]
            named[key] = int(value) if key in _INTEGERS else value
        else:
            extra[flag.lstrip("-").replace("-", "_")] = value or True
    if extra:
        named["additional_parameters"] = extra
    return named


def setup_lines(plan: Plan) -> List[str]:
    """The environment, modules and virtualenv lines of ``plan``'s script, one per item."""
    from slurmkit.render.render import render_setup

    return [line for line in render_setup(plan).splitlines() if line.strip() and not line.lstrip().startswith("#")]


#: the exit-status file of the job contract (line 1: the exit code), written atomically on exit.
_EXIT_TRAP = ('_sk_on_exit() { local rc=$? f; '
              'f="$SLURMKIT_JOB_DIR/${SLURM_ARRAY_JOB_ID:-${SLURM_JOB_ID:-0}}${SLURM_ARRAY_TASK_ID:+_$SLURM_ARRAY_TASK_ID}.exit"; '
              'echo "$rc" > "$f.$$.tmp" && mv -f -- "$f.$$.tmp" "$f"; }')


def exit_file_lines(folder: Union[str, Path]) -> List[str]:
    """Setup lines that make a submitit job leave an exit-status file as slurmkit's scripts do,
    so that its outcome is known without accounting."""
    import shlex

    return [f"export SLURMKIT_JOB_DIR={shlex.quote(str(folder))}", _EXIT_TRAP, "trap _sk_on_exit EXIT"]


#: what a function job's spec stands in for ``launch`` when it has none: the job runs the function, never this.
FUNCTION_LAUNCH = {"command": "python"}


def function_job(spec: FunctionSpec) -> "Job":
    """The Job of a function's ``spec`` (a Job, a mapping or a job.yaml path); ``launch`` may be
    left out, since submitit runs the function, not a command."""
    from slurmkit.api.job import Job
    from slurmkit.core.errors import SpecError
    from slurmkit.core.yamlfile import read_yaml_file
    from slurmkit.spec.spec import spec_from_mapping

    if isinstance(spec, Job):
        return spec
    if isinstance(spec, Mapping):
        return Job(**({"launch": FUNCTION_LAUNCH, **spec} if spec.get("launch") is None else spec))
    _, (data, lines, _) = read_yaml_file(Path(spec), SpecError)
    if isinstance(data, dict) and data.get("launch") is None:
        data = {**data, "launch": FUNCTION_LAUNCH}
    return Job(spec_from_mapping(data, str(spec), lines))


def submit_function(fn: Callable[..., R], *args: Any, spec: FunctionSpec, profile: Optional[str] = None,
                    folder: Optional[Union[str, Path]] = None, **kwargs: Any) -> "JobHandle[R]":
    """Run ``fn(*args, **kwargs)`` as a job described by ``spec`` (a Job, a mapping, or a job.yaml path).

    Returns a JobHandle (submitit's job future, watched by slurmkit's watcher, accounting or
    not) whose ``result()`` is what ``fn`` returned, or raises what it raised (with the traceback
    on the node as its ``__cause__``), or JobFailed (state, exit code, the ends of its logs)
    where it died without an exception this process can rebuild. The job
    is recorded in the registry like a script's (intent first, then its id) and carries a
    token in its comment, so that ``slurmkit status`` finds it if the id is lost.
    """
    import uuid

    import submitit

    from slurmkit.core.files import make_private_folder
    from slurmkit.core.slurmconf import check_slurm_conf
    from slurmkit.slurm.raised import carrying
    from slurmkit.slurm.registry import COMMENT_PREFIX, intent
    from slurmkit.slurm.slurmcli import SchedulerError
    from slurmkit.slurm.submit import JobHandle, record_intent, record_job

    job = function_job(spec)
    plan = job._plan(profile, None)
    job._refuse_elsewhere(profile)
    check_slurm_conf()   # before the intent: submitit's sbatch would retry an unreadable one for a minute
    folder = Path(folder or job.folder()).resolve()
    make_private_folder(folder)  # submitit keeps the pickled call and its script there
    token = uuid.uuid4().hex
    planned = intent(job.spec.name, str(folder), plan.profile, token, spec=job._spec_path())
    record_intent(planned)
    executor = submitit.SlurmExecutor(folder=str(folder))
    executor.job_class = JobHandle
    executor.update_parameters(**executor_parameters(plan), comment=f"{COMMENT_PREFIX}{token}",
                               setup=exit_file_lines(folder) + setup_lines(plan))
    try:
        submitted = executor.submit(carrying(fn), *args, **kwargs)   # what fn raises comes back as itself
    except Exception as error:  # submitit raises its own kinds; the reason is what matters
        reason = " ".join(str(error).split())[:300]
        raise SchedulerError(f"submitit could not submit {job.spec.name}: {reason} (token {token}: if the job was "
                             "made after all, `slurmkit status` adopts it)") from None
    record_job(planned, submitted.job_id, submitted)
    return cast("JobHandle[R]", submitted)   # executor.job_class made it a JobHandle; submitit's hint says Job
