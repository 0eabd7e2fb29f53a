"""Python callables as jobs: submitit's executor, with the spec's site-correct environment.

``submit_function(fn, *args, spec=...)`` resolves the spec like any job, turns its directives
into submitit's parameters and its environment, module and virtualenv blocks (rendered by the
same templates as scripts) into submitit's ``setup`` lines; submitit pickles the call and
returns a future whose ``result()`` is the function's return value.
"""

from typing import Any, Callable, Dict, List, Optional

from .plan import Plan
from .units import parse_duration

#: sbatch options that submitit takes as named parameters (the rest pass through as they are).
_NAMED = {"--job-name": "job_name", "--nodes": "nodes", "--ntasks-per-node": "ntasks_per_node",
          "--cpus-per-task": "cpus_per_task", "--mem": "mem", "--mem-per-cpu": "mem_per_cpu", "--account": "account"}
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
    from .render import render_setup

    return [line for line in render_setup(plan).splitlines() if line.strip() and not line.lstrip().startswith("#")]


def submit_function(fn: Callable, *args: Any, spec, profile: Optional[str] = None, folder=None, **kwargs: Any):
    """Run ``fn(*args, **kwargs)`` as a job described by ``spec`` (a Job, a mapping, or a job.yaml path).

    Returns submitit's job future, watched by slurmkit's watcher (accounting or not).
    """
    import submitit

    from .job import Job
    from .submit import JobHandle

    job = spec if isinstance(spec, Job) else Job(**spec) if isinstance(spec, dict) else Job.from_yaml(spec)
    plan = job._plan(profile, None)
    executor = submitit.SlurmExecutor(folder=str(folder or job.folder()))
    executor.job_class = JobHandle
    executor.update_parameters(**executor_parameters(plan), setup=setup_lines(plan))
    return executor.submit(fn, *args, **kwargs)
