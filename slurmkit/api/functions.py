"""Python callables as jobs: submitit's executor, with the spec's site-correct environment.

``submit_function(fn, *args, spec=...)`` resolves the spec like any job, turns its directives
into submitit's parameters and its environment, module and virtualenv blocks (rendered by the
same templates as scripts) into submitit's ``setup`` lines; submitit pickles the call and
returns a future whose ``result()`` is the function's return value, or raises what it raised
(raised.py carries the exception back), or ``JobFailed`` where the job died without one.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, TypeVar, Union, cast

from slurmkit.core.errors import SlurmkitError
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
#: Its own name: the setup lines after it carry the runtime library, whose ``_sk_on_exit`` (the
#: script's, with its copy-back) would otherwise replace it.
_EXIT_TRAP = ('_sk_fn_on_exit() { local rc=$? f; '
              'f="$SLURMKIT_JOB_DIR/${SLURM_ARRAY_JOB_ID:-${SLURM_JOB_ID:-0}}${SLURM_ARRAY_TASK_ID:+_$SLURM_ARRAY_TASK_ID}.exit"; '
              'echo "$rc" > "$f.$$.tmp" && mv -f -- "$f.$$.tmp" "$f"; }')


def exit_file_lines(folder: Union[str, Path]) -> List[str]:
    """Setup lines that make a submitit job leave an exit-status file as slurmkit's scripts do,
    so that its outcome is known without accounting. A TERM (scancel) exits 143, as in
    slurmkit's scripts: without it the EXIT trap wrote whatever ``$?`` held when the signal
    came (0), and a cancelled function job read as COMPLETED until accounting answered."""
    import shlex

    return [f"export SLURMKIT_JOB_DIR={shlex.quote(str(folder))}", _EXIT_TRAP, "trap _sk_fn_on_exit EXIT", "trap 'exit 143' TERM"]


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


class TooManyCalls(SlurmkitError):
    """More calls than the site lets one user queue (its per-user job limit; slurmkit's cap where
    the profile states neither that nor MaxArraySize): splitting would not get them past it."""


def map_array(fn: Callable[..., R], items: Iterable[Any], *, spec: FunctionSpec, profile: Optional[str] = None,
              folder: Optional[Union[str, Path]] = None) -> "List[JobHandle[R]]":
    """Run ``fn(item)`` for each of ``items`` as ONE job array (submitit's ``map_array``): task
    *i* runs item *i*. Returns the tasks' handles in the items' order; each handle's
    ``result()`` is that call's return value, and raises what that call raised, for that item
    alone (``gather`` collects them all). One array is one submission and one scheduler
    entry, where N ``submit_function`` calls would be N jobs against the site's limits.

    The array is recorded in the registry as one job of ``len(items)`` tasks (``slurmkit
    status ID`` shows them; ``resubmit ID --failed`` runs the calls that failed again, as an
    array of those task ids, whose results ``JobHandle(folder, f"{NEW}_{i}").result()`` reads).
    More items than the site's largest array (the smaller of the profile's ``max_array_size``
    and the cluster's MaxArraySize) go as linked arrays, as a split sweep does (arraysplit.py):
    the handles are still one list in the items' order, each part's under its own array id,
    and ``status``/``resubmit --failed`` take the first part's id for all of them. More items
    than the site lets one user queue (``max_jobs_per_user``; 10,000 where the profile states
    no limit) raise TooManyCalls before anything is submitted. No items: no job, an empty list.
    """
    import submitit

    from slurmkit.core.files import make_private_folder
    from slurmkit.core.slurmconf import check_slurm_conf

    calls = list(items)
    if not calls:
        return []
    job = function_job(spec)
    plan = job._plan(profile, None)
    job._refuse_elsewhere(profile)
    sizes = call_parts(len(calls), job.profile(profile).scheduling, plan.profile)
    check_slurm_conf()
    folder = Path(folder or job.folder()).resolve()
    make_private_folder(folder)
    executor = submitit.SlurmExecutor(folder=str(folder))
    parameters = executor_parameters(plan)
    return _mapped_parts(executor, parameters, fn, calls, sizes, job.spec.name, plan, folder)


def call_parts(count: int, scheduling: Any, site: str, live: Optional[Callable[[], Optional[int]]] = None) -> List[int]:
    """The calls of each array: one array where they fit the site's largest (the profile's
    ``max_array_size``, the cluster's MaxArraySize, asked only for more than one call), else
    parts as even as the splitter makes them (arraysplit.even_part_sizes). TooManyCalls above
    the per-user job limit, or where a part would hold one call (a plain job to submitit)."""
    from slurmkit.resolve.arraysplit import even_part_sizes
    from slurmkit.sites.limits import array_cap
    from slurmkit.slurm.sweeps import largest_array, live_max_array_size

    cap = scheduling.max_jobs_per_user or array_cap(scheduling.max_array_size, None)
    if cap and count > cap:
        raise TooManyCalls(f"{count} calls are more than {site} lets one user queue ({cap} jobs; each call is one): "
                           "map them in slices of at most that many, each after the one before has ended")
    if count < 2:
        return [count]
    most = largest_array(scheduling.max_array_size, (live or live_max_array_size)())
    sizes = even_part_sizes(count, most)
    if len(sizes) > 1 and min(sizes) < 2:
        raise TooManyCalls(f"{count} calls in arrays of at most {most} tasks ({site}) would leave an array of one call, "
                           "which submitit submits as a plain job: map them in slices of at most that many")
    return sizes


def _mapped_parts(executor: Any, parameters: Dict[str, Any], fn: Callable[..., R], calls: List[Any], sizes: List[int],
                  name: str, plan: Plan, folder: Path) -> "List[JobHandle[R]]":
    """Each part's array submitted in turn, recorded as a split sweep's parts are (sweeps.py);
    a part refused after others were made raises SweepIncomplete naming them."""
    from slurmkit.slurm.sweeps import SweepIncomplete

    handles: List[JobHandle[R]] = []
    ids: List[str] = []
    offset = 0
    for size in sizes:
        part = (ids[0] if ids else None, offset, len(sizes)) if len(sizes) > 1 else None
        try:
            handles += _mapped(executor, parameters, fn, calls[offset:offset + size], name, plan, folder, part)
        except SlurmkitError as error:
            if not ids:
                raise
            raise SweepIncomplete(error, ids, len(sizes)) from None
        ids.append(handles[-1].job_id.split("_")[0])
        offset += size
    return handles


def _mapped(executor: Any, parameters: Dict[str, Any], fn: Callable[..., R], calls: List[Any], name: str, plan: Plan,
            folder: Path, part: Optional[Tuple[Optional[str], int, int]] = None) -> "List[JobHandle[R]]":
    """The array submitted, recorded (intent first, then its id), its tasks as JobHandles.
    ``part``: (the first part's id or None for the first, offset, parts) of a split one."""
    import uuid

    from slurmkit.slurm.raised import carrying
    from slurmkit.slurm.registry import COMMENT_PREFIX, intent
    from slurmkit.slurm.slurmcli import SchedulerError
    from slurmkit.slurm.submit import JobHandle, record_intent, record_job

    token = uuid.uuid4().hex
    planned = intent(name, str(folder), plan.profile, token, array_size=len(calls) if len(calls) > 1 else None,
                     sweep=part[0] if part else None, offset=part[1] if part else None, parts=part[2] if part else None)
    record_intent(planned)
    executor.update_parameters(**parameters, comment=f"{COMMENT_PREFIX}{token}", array_parallelism=len(calls),
                               setup=exit_file_lines(folder) + setup_lines(plan))
    try:
        jobs = executor.map_array(carrying(fn), calls)   # what a call raises comes back as itself
    except Exception as error:  # submitit raises its own kinds; the reason is what matters
        reason = " ".join(str(error).split())[:300]
        raise SchedulerError(f"submitit could not submit {name}: {reason} (token {token}: if the array was "
                             "made after all, `slurmkit status` adopts it)") from None
    # submitit makes an array's tasks of its own job class: each is watched as slurmkit's.
    handles: List[JobHandle[R]] = [JobHandle(folder, job.job_id, tasks=tuple(range(job.num_tasks))) for job in jobs]
    record_job(planned, jobs[0].job_id.split("_")[0], handles)
    return handles


def gather(handles: "Iterable[JobHandle[R]]", return_exceptions: bool = False) -> List[Any]:
    """Every handle's ``result()``, in order (waiting for each). The first call that raised
    raises here, unless ``return_exceptions``: then what each failed call raised stands in its
    place in the list, as ``asyncio.gather`` does."""
    results: List[Any] = []
    for handle in handles:
        try:
            results.append(handle.result())
        except Exception as error:  # the call's own exception, or the job's failure
            if not return_exceptions:
                raise
            results.append(error)
    return results
