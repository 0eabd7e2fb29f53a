"""``slurmkit new``: a first job.yaml with sensible defaults, and its rendered script.

The spec is checked and rendered *before* anything is written, so a bad answer leaves no
half-made folder behind; an existing job is never overwritten without ``force``.
"""

import os
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import yaml

from slurmkit.api.job import Job
from slurmkit.core.errors import InputError, SlurmkitError
from slurmkit.core.files import PRIVATE_SCRIPT, check_destination, write_atomic
from slurmkit.core.kinds import DEFAULT_KIND, PER_GPU
from slurmkit.core.kinds import KINDS as KIND_ROWS
from slurmkit.core.units import parse_size
from slurmkit.report.gpuuse import allowed_gpu_count
from slurmkit.sites.profiles import detect_profile, load_profile
from slurmkit.spec.spec import KINDS, NAME_RE

#: the command each kind's first job runs (kinds.py).
DEFAULT_COMMANDS = {k.name: k.default_command for k in KIND_ROWS.values()}
#: A many-tasks job's first task file: one line per task, each the {} of its command.
EXAMPLE_TASKS = ("tasks.txt", "1\n2\n3\n4\n")


class ScaffoldError(SlurmkitError):
    """``slurmkit new`` cannot write the job (it exists, or the name is not usable)."""


#: the flag of ``slurmkit new`` that sets each spec field: errors name what the user typed.
FLAGS = {"profile": "--profile", "kind": "--kind", "account": "--account", "resources.time": "--time",
         "resources.gpus": "--gpus", "launch.command": "--command"}
#: answer -> the spec field it fills (the key path findings and errors carry).
FIELDS = {"profile": "profile", "kind": "kind", "account": "account", "time": "resources.time",
          "gpus": "resources.gpus", "command": "launch.command"}


def scaffold(name: str, profile: Optional[str] = None, kind: Optional[str] = None, account: Optional[str] = None,
             time: Optional[str] = None, gpus: Optional[str] = None, command: Optional[str] = None,
             force: bool = False, ask: Optional[Callable] = None, env=None, warn: Optional[Callable] = None,
             tell: Optional[Callable[[str], None]] = None) -> List[Path]:
    """Write ``name/job.yaml`` and ``name/job.sbatch`` (a many-tasks job also gets a first
    ``name/tasks.txt``, unless one is there); ``ask(prompt, default=...)`` fills gaps, each answer
    checked as it is given (a bad one is told with ``tell`` and asked again); ``tell(line)`` also
    hears which profile was detected and why; ``warn(finding)`` hears the resolver's warnings."""
    env = os.environ if env is None else env
    tell = tell or (lambda _line: None)
    folder = Path(name)
    if not NAME_RE.fullmatch(folder.name):
        raise ScaffoldError(f"{name!r}: a job name uses letters, digits, '.', '_', '+' and '-'")
    targets = [folder / "job.yaml", folder / "job.sbatch"]
    check_destination(folder, folder=True)
    for target in targets:   # a pipe or a device is refused, --force or not; a link is only in the way
        check_destination(target, replace_link=True)
    existing = [str(t) for t in targets if os.path.lexists(t)]   # a dangling link is in the way too
    if existing and not force:
        raise ScaffoldError(f"{', '.join(existing)} already exist; use --force to overwrite")
    given = {"profile": profile, "kind": kind, "account": account, "time": time, "gpus": gpus, "command": command}
    answers = _answers(folder.name, given, ask, env, tell)
    data = _spec_data(folder.name, answers)
    try:
        job = Job(**data)
        script = job.render(warn=warn)
    except InputError as error:
        raise _flag_error(error) from None
    task_file = folder / EXAMPLE_TASKS[0]
    with_tasks = _row(answers["kind"]).runs_task_file and not task_file.exists()   # the user's own is never replaced
    if with_tasks:
        check_destination(task_file)   # a dangling link: refused before the spec is written, not after
    written = [write_atomic(targets[0], _spec_text(targets[0], data, sizing_notes(job)), replace_link=force)]
    if with_tasks:
        written.append(write_atomic(task_file, EXAMPLE_TASKS[1]))
    written.append(write_atomic(targets[1], script, PRIVATE_SCRIPT, replace_link=force))
    _keep_runtime()
    return written


def _keep_runtime() -> None:
    """The runtime library job.sbatch sources, in the data folder, so that `sbatch job.sbatch`
    works too; where it cannot be written, `slurmkit submit` writes it (and says why it cannot)."""
    from slurmkit.core.errors import SlurmkitError
    from slurmkit.render.runtime import runtime_folder, write_runtime

    try:
        write_runtime(runtime_folder())
    except SlurmkitError:
        pass


def _spec_text(path: Path, data: dict, notes: Dict[str, str]) -> str:
    """The spec as YAML, each value of ``notes`` commented with where it came from; over a spec
    the user edited (--force), their comments and layout stay where their keys do (roundtrip.py,
    which loads ruamel.yaml only here)."""
    if path.exists():
        from slurmkit.core.roundtrip import rewritten_file

        kept = rewritten_file(path, data)
        if kept is not None:
            return kept
    text = yaml.safe_dump(data, sort_keys=False, default_flow_style=False)
    return schema_comment() + _with_notes(text, notes)


#: Where a first CPU job's memory comes from: SLURM's default of 256M a core starves most
#: Python programs, and the Alliance's advice for a first test job is 2G a core.
FIRST_JOB_MEM_PER_CPU = "2G"
_BEST_PRACTICES = "https://docs.alliancecan.ca/wiki/Best_practices_for_job_submission/en"
_RUNNING_JOBS = "https://docs.alliancecan.ca/wiki/Running_jobs/en"
_GPU_BUNDLES = "https://docs.alliancecan.ca/wiki/Allocations_and_compute_scheduling/en"


def sizing_notes(job: Job) -> Dict[str, str]:
    """``{line of job.yaml: comment}``: where the cores and memory of a new job come from. A GPU
    job says neither and gets its GPUs' bundle (sizing.py); the comment says what the script
    asks and why. A CPU job's memory is the first-job advice, beside the site's default."""
    plan = job.resolve().plan
    asks = dict(plan.directives) if plan else {}
    res, profile = job.spec.resources, job.spec.profile
    notes = {}
    if res.gpus and res.cpus_per_task is None and res.mem_mb is None and "--cpus-per-task" in asks:
        memory = f" and --mem={asks['--mem']}" if asks.get("--mem") else ""
        notes[f"  gpus: {res.gpus.model}:{res.gpus.count}" if res.gpus.model else f"  gpus: {res.gpus.count}"] = (
            f"no cores or memory said: job.sbatch asks --cpus-per-task={asks['--cpus-per-task']}{memory}, "
            f"the share of a {profile} GPU node that each GPU's charge covers ({_GPU_BUNDLES})")
    if res.mem_per_cpu_mb is not None and "--mem-per-cpu" in asks:
        notes[f"  mem_per_cpu: {FIRST_JOB_MEM_PER_CPU}"] = (
            f"a first job's memory per core ({_BEST_PRACTICES}); without it SLURM gives 256M ({_RUNNING_JOBS})")
    return notes


def _with_notes(text: str, notes: Dict[str, str]) -> str:
    """``text`` with ``  # note`` after each line that ``notes`` names."""
    return "".join(f"{line}  # {notes[line]}\n" if line in notes else f"{line}\n" for line in text.splitlines())


def schema_comment() -> str:
    """job.yaml's first line: editors on yaml-language-server (VS Code's YAML extension, and
    others) complete and check its keys against the JSON Schema shipped with this slurmkit
    (a file, not a URL: it matches the installed version and needs no network; docs/job-spec.md)."""
    from slurmkit.spec.schemas import job_schema_path

    return f"# yaml-language-server: $schema={job_schema_path()}\n"


def _answers(name: str, given: dict, ask: Optional[Callable], env, tell) -> dict:
    """The flags, and for each one not given the answer to its question (or its default without
    ``ask``), in the order the questions make sense: profile and kind decide the others' defaults."""
    answers = dict(given)
    for key in ("profile", "kind", "account", "time", "gpus", "command"):
        if answers[key] is not None or not _asked(key, answers):
            continue
        prompt, default = _question(key, answers, env, tell, ask is not None)
        if ask is None:
            answers[key] = default
            continue
        while True:
            answers[key] = ask(prompt, default=default)
            problem = _problem(name, key, answers, env)
            if problem is None:
                break
            tell(f"  {problem}")
    return answers


def _asked(key: str, answers: dict) -> bool:
    """GPUs are asked of a kind that uses them, unless it can run without them on a site that has none."""
    if key != "gpus":
        return True
    row = _row(answers["kind"])
    return row.gpus_example > 0 and (row.gpu_required or _has_gpus(answers["profile"]))


def _row(kind: Optional[str]):
    """The kind's row; a name not (yet) valid asks nothing extra, as the default kind does (its
    problem is the spec reader's to say)."""
    return KIND_ROWS.get(kind or DEFAULT_KIND) or KIND_ROWS[DEFAULT_KIND]


def _question(key: str, answers: dict, env, tell, interactive: bool):
    """The prompt and the default of one question (the profile's says where it was detected)."""
    if key == "profile":
        detected, reason = _detected(env)
        tell(f"profile {detected}, {reason}" + ("" if interactive else
                                                 "; choose another with --profile NAME (`slurmkit profiles list`)"))
        return "Site profile", detected
    kind = answers["kind"]
    return {
        "kind": (f"Kind ({', '.join(KINDS)})", DEFAULT_KIND),
        "account": ("Account", _environment_account(env)),
        "time": ("Time limit (e.g. 3h, 1-00:00:00)", "1h"),
        "gpus": (f"GPUs per node (MODEL:COUNT; {', '.join(_gpu_models(answers['profile'])) or 'no models'})",
                 _first_gpu(answers["profile"], _row(kind))),
        "command": ("Command", DEFAULT_COMMANDS.get(kind, "python main.py")),
    }[key]


def _problem(name: str, key: str, answers: dict, env) -> Optional[str]:
    """What is wrong with ``answers[key]``, checked as the final spec will be (the answers so far,
    defaults for the rest), or None. Problems of later questions are left to them."""
    filled = dict(answers)
    try:
        load_profile(filled["profile"])
        for later in ("kind", "account", "time", "gpus", "command"):
            if filled[later] is None and _asked(later, filled):
                filled[later] = _question(later, filled, env, lambda _line: None, True)[1]
        job = Job(**_spec_data(name, filled))
        errors = job.resolve().errors
    except InputError as error:
        return error.detail if error.keypath == FIELDS[key] else None
    except SlurmkitError as error:   # a profile that is not there (with its did-you-mean)
        return error.message
    return next((_for_new(f.message) for f in errors if f.field == FIELDS[key]), None)


def _spec_data(name: str, answers: dict) -> dict:
    """job.yaml's keys from the answers: the kind decides the shape (nodes, tasks, parameters)."""
    kind, profile = answers["kind"], answers["profile"]
    data = {"name": name, "profile": profile, "kind": kind}
    if answers["account"]:
        data["account"] = answers["account"]
    resources = {"time": answers["time"]}
    if answers["gpus"]:
        resources["gpus"] = answers["gpus"]
    row, whole_node = _row(kind), load_profile(profile).scheduling.whole_node
    resources.update(_example_resources(profile, row))
    if row.runs_task_file and not whole_node:
        resources["tasks_per_node"] = min(4, _most_cores(profile))
    if not answers["gpus"] and row.processes == PER_GPU and whole_node:
        resources["tasks_per_node"] = whole_node.cores   # one rank per core on CPU
    if not answers["gpus"] and _asks_memory(profile):
        resources["mem_per_cpu"] = _first_job_memory(profile)
    data["resources"] = resources
    if row.sweeps:
        data["array"] = {"parameters": {"lr": ["0.1", "0.01", "0.001"]}}
    if row.runs_task_file:
        data["tasks"] = {"arguments": EXAMPLE_TASKS[0]}
    data["launch"] = {"command": answers["command"]}
    return data


def _for_new(message: str) -> str:
    """A resolver message in the words of ``new``: no spec exists yet to "add it to"."""
    return message.replace("add 'account: def-yourprof' to the spec", "give one such as def-yourprof")


def _flag_error(error: InputError) -> ScaffoldError:
    """The spec's error as the flag (or question) that set the value: ``--gpus: nibi has no GPU ...``."""
    flag = FLAGS.get(error.keypath, error.keypath)
    return ScaffoldError(f"{flag}: {_for_new(error.detail)}" if flag else error.detail)


def _environment_account(env) -> str:
    from slurmkit.resolve.accounts import from_environment

    found = from_environment(env)
    return found.account if found else ""


def _detected(env) -> Tuple[str, str]:
    """The detected profile and why; ``generic`` (saying so) when nothing names a cluster."""
    try:
        detection = detect_profile(env=env)
    except SlurmkitError:
        return "generic", ("which knows no site's rules: no cluster detected (no $SLURMKIT_PROFILE, $CC_CLUSTER or "
                           "$SLURM_CLUSTER_NAME, and no profile matches this hostname)")
    return detection.name, f"detected from {detection.reason}"


def _gpu_models(profile: str):
    return load_profile(profile).gpu_models


def _whole_nodes(profile: str) -> bool:
    return bool(load_profile(profile).scheduling.whole_node)


def _asks_memory(profile: str) -> bool:
    """Whether a CPU job there asks its memory: not where jobs take whole nodes (all of each
    node's memory comes with them) or the site ignores memory requests."""
    scheduling = load_profile(profile).scheduling
    return not scheduling.whole_node and scheduling.mem_request is not False


def _has_gpus(profile: Optional[str]) -> bool:
    if not profile:   # not answered yet: the profile question says what is wrong
        return True
    try:
        return bool(load_profile(profile).gpu_models)
    except SlurmkitError:   # a profile that is not there: its problem is the profile question's
        return True


def _most_cores(profile: str, default: int = 4) -> int:
    return max((t.cores or 1 for t in load_profile(profile).node_types), default=default)


def _first_job_memory(profile: str) -> str:
    """The first-job advice per core, or each core's share of the smallest node where that
    advice would not fit (a test cluster's 2-core, 4000M nodes)."""
    shares = [t.memory_mib // t.cores for t in load_profile(profile).node_types if t.memory_mib and t.cores]
    advice = parse_size(FIRST_JOB_MEM_PER_CPU)
    return FIRST_JOB_MEM_PER_CPU if not shares or min(shares) >= advice else f"{min(shares)}M"


def _example_resources(profile: str, row) -> Dict[str, int]:
    """The kind's example resources as the site takes them: never more cores than its largest
    node has, and no thread count where whole nodes are scheduled and the kind's threads grow to
    fill the node by themselves (fills_whole_node)."""
    whole = _whole_nodes(profile)
    example = {}
    for key, value in row.example_resources:
        if key == "cpus_per_task" and whole and row.fills_whole_node == "threads":
            continue
        example[key] = min(value, _most_cores(profile)) if key in ("cpus_per_task", "tasks_per_node") else value
    return example


def _first_gpu(profile: str, row) -> str:
    """The first GPU model and the count the scaffold starts from. A kind that spreads over nodes
    starts from whole nodes' GPUs (the node type's count: 4 on Narval, 8 on Nibi): half nodes on
    two nodes would send NCCL's traffic over the fabric where NVLink inside one node would carry
    it, and a site that gives GPU jobs 1 GPU or whole nodes (Trillium) takes no other count.
    Another kind starts from its gpus_example, raised to the smallest count the site takes."""
    loaded = load_profile(profile)
    count = max(row.gpus_example, 1)
    if not loaded.gpu_models:
        return str(count)
    model = loaded.gpu_models[0]
    per_node = next(t.gpus.count for t in loaded.node_types if t.gpus and t.gpus.model == model)
    count = per_node if row.spreads_over_nodes else min(allowed_gpu_count(loaded, count), per_node)
    return f"{model}:{count}"
