"""Every decision slurmkit makes: a JobSpec and a SiteProfile become a Plan and findings.

Errors are what the scheduler would reject or what could never run; warnings are what would
run badly. Each finding names the spec field it is about and says what to do. Nothing here
reads files, the clock or the environment: the same inputs always give the same plan.
"""

import itertools
import shlex
from typing import List, NamedTuple, Optional, Tuple

from .errors import closest
from .plan import ArrayPlan, ChainPlan, Plan, StagePlan, StageStep, VenvPlan
from .profiles import NodeType, SiteProfile, retirement_notice
from .spec import JobSpec
from .units import format_duration, format_size, format_slurm_time

#: the launchers each kind may use, the first being its default.
KIND_LAUNCHERS = {
    "serial": ("direct", "srun"),
    "threaded": ("direct", "srun"),
    "gpu": ("direct", "srun"),
    "array": ("direct", "srun"),
    "mpi": ("srun", "mpirun"),
}
#: mpirun's binding and mapping for each MPI flavour: flags, and variables the launch needs.
#: ``{cpus_per_task}`` and ``{tasks_per_node}`` are filled in; each prints the binding it made.
MPIRUN_BINDING = {
    "openmpi": (("--bind-to", "core", "--map-by", "slot:PE={cpus_per_task}", "--report-bindings"), {}),
    "intelmpi": (("-ppn", "{tasks_per_node}"), {"I_MPI_PIN": "1", "I_MPI_PIN_DOMAIN": "omp", "I_MPI_DEBUG": "4"}),
    "mvapich2": (("-ppn", "{tasks_per_node}"), {"MV2_ENABLE_AFFINITY": "1", "MV2_CPU_BINDING_POLICY": "hybrid",
                                                "MV2_HYBRID_BINDING_POLICY": "linear", "MV2_THREADS_PER_PROCESS": "{cpus_per_task}",
                                                "MV2_SHOW_CPU_BINDING": "1"}),
}
DEFAULT_VENV_COMMAND = "virtualenv --no-download"


class Finding(NamedTuple):
    level: str      # "error" | "warning"
    field: str      # the spec key path it is about, e.g. "resources.gpus"
    message: str

    def __str__(self) -> str:
        return f"{self.level}: {self.field}: {self.message}"


class Resolution(NamedTuple):
    plan: Optional[Plan]              # None when there are errors
    findings: Tuple[Finding, ...]

    @property
    def errors(self) -> Tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.level == "error")

    @property
    def warnings(self) -> Tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.level == "warning")


class GpuChoice(NamedTuple):
    """The GPU request in the site's spelling, and the node types that can take it."""

    spelling: Optional[str]          # "h100:2", "nvidia_h100_80gb_hbm3_1g.10gb:1", or "2" (any model)
    count: int
    node_types: Tuple[NodeType, ...]


class _Findings(list):
    def error(self, field: str, message: str) -> None:
        self.append(Finding("error", field, message))

    def warn(self, field: str, message: str) -> None:
        self.append(Finding("warning", field, message))


def resolve(spec: JobSpec, profile: SiteProfile) -> Resolution:
    """Decide everything about ``spec`` on ``profile``; see the module docstring."""
    findings = _Findings()
    _check_profile_status(profile, findings)
    account = _check_account(spec, profile, findings)
    chain = _chain(spec, profile, findings)
    _check_time(spec, profile, findings, chain)
    gpus = _choose_gpus(spec, profile, findings)
    tasks_per_node, cpus_per_task = _shape(spec, profile, gpus, findings)
    node_types = _fitting_node_types(spec, profile, gpus, tasks_per_node * cpus_per_task, findings)
    memory = _memory_directive(spec, profile, findings)
    _check_cores_per_gpu(spec, gpus, tasks_per_node * cpus_per_task, node_types, findings)
    launcher = _launcher(spec, profile, tasks_per_node, cpus_per_task, findings)
    array = _array(spec, profile, findings)
    modules = _modules(spec, profile, findings)
    stage = _stage(spec, _extraction_parallelism(profile, cpus_per_task * tasks_per_node), findings, chain)
    if any(f.level == "error" for f in findings):
        return Resolution(None, tuple(findings))
    plan = Plan(
        kind=spec.kind,
        profile=profile.name,
        name=spec.name,
        directives=_directives(spec, account, tasks_per_node, cpus_per_task, memory, gpus, array, stage, chain),
        environment=_environment(spec, profile, tasks_per_node, cpus_per_task, _uses_mpirun(launcher)),
        modules=modules,
        launcher=launcher,
        command=spec.launch.command,
        venv=_venv(spec, profile),
        stage=stage,
        chain=chain,
        array=array,
        module_system=profile.software.module_system or "none",
    )
    return Resolution(plan, tuple(findings))


# ------------------------------------------------------------------------------------ checks


def _check_profile_status(profile: SiteProfile, findings: _Findings) -> None:
    notice = retirement_notice(profile)
    if notice:
        findings.warn("profile", notice)


def _check_account(spec: JobSpec, profile: SiteProfile, findings: _Findings) -> Optional[str]:
    rule = profile.accounts.required
    if spec.account is None:
        if rule == "always":
            findings.error("account", f"{profile.name} needs an account: add 'account: def-yourprof' to the spec (or export SBATCH_ACCOUNT)")
        elif rule == "when-several":
            findings.warn("account", f"no account: {profile.name} rejects the job if you belong to several allocations; add 'account: def-yourprof'")
        return None
    prefixes = profile.accounts.prefixes
    if prefixes and not spec.account.startswith(tuple(prefixes)):
        findings.warn("account", f"{spec.account!r} does not look like a {profile.name} account ({', '.join(p + '...' for p in prefixes)})")
    return spec.account


def _check_time(spec: JobSpec, profile: SiteProfile, findings: _Findings, chain=None) -> None:
    asked = chain.link_time_s if chain else spec.resources.time_s
    limit = profile.scheduling.max_walltime_seconds
    if limit and asked > limit:
        findings.error("resources.time", f"{format_duration(asked)} is above {profile.name}'s maximum walltime of {format_duration(limit)}; "
                       "split the work into shorter jobs that resume from a checkpoint")
    advice = profile.scheduling.min_walltime_advice_seconds
    if advice and asked < advice:
        findings.warn("resources.time", f"{format_duration(asked)} is short: {profile.name} asks production jobs to run at least "
                      f"{format_duration(advice)}; bundle short tasks (an array or GNU parallel)")


def _gpu_names(profile: SiteProfile) -> List[str]:
    names = []
    for node_type in profile.node_types:
        if node_type.gpus:
            names += [node_type.gpus.model, node_type.gpus.gres or node_type.gpus.model]
            for mig in node_type.gpus.mig:
                names += [mig.gres, f"{node_type.gpus.model}_{mig.profile}"]
    return list(dict.fromkeys(n for n in names if n))


def _choose_gpus(spec: JobSpec, profile: SiteProfile, findings: _Findings) -> Optional[GpuChoice]:
    request = spec.resources.gpus
    if request is None:
        if spec.kind == "gpu":
            findings.error("resources.gpus", "kind 'gpu' needs GPUs: add e.g. 'gpus: " + (_gpu_names(profile) or ["MODEL"])[0] + ":1'")
        return None
    gpu_types = [t for t in profile.node_types if t.gpus]
    if not gpu_types:
        findings.error("resources.gpus", f"{profile.name} has no GPU nodes" + (f"; its successor {profile.status.successor} may" if profile.status.successor else ""))
        return None
    if request.model is None:
        fitting = tuple(t for t in gpu_types if t.gpus.count >= request.count)
        return _gpu_count_checked(GpuChoice(str(request.count), request.count, fitting), gpu_types, "GPUs", profile, findings)
    for node_type in gpu_types:
        for mig in node_type.gpus.mig:
            if request.model in (mig.gres, f"{node_type.gpus.model}_{mig.profile}", mig.profile):
                if request.count != 1:
                    findings.error("resources.gpus", f"a job may use one MIG instance; ask for {mig.gres}:1 or for whole {node_type.gpus.model} GPUs")
                return GpuChoice(f"{mig.gres}:1", 1, (node_type,))
    matching = [t for t in gpu_types if request.model in (t.gpus.model, t.gpus.gres)]
    if not matching:
        names = _gpu_names(profile)
        close = closest(request.model, names, cutoff=0.5)
        hint = f"did you mean '{close}'? " if close else ""
        findings.error("resources.gpus", f"{profile.name} has no GPU called {request.model!r}; {hint}it has: {', '.join(names)}")
        return None
    spelling = matching[0].gpus.gres or matching[0].gpus.model
    fitting = tuple(t for t in matching if t.gpus.count >= request.count)
    return _gpu_count_checked(GpuChoice(f"{spelling}:{request.count}", request.count, fitting), matching, spelling, profile, findings)


def _gpu_count_checked(choice: GpuChoice, candidates, what: str, profile: SiteProfile, findings: _Findings) -> GpuChoice:
    most = max(t.gpus.count for t in candidates)
    if not choice.node_types:
        findings.error("resources.gpus", f"{choice.count} {what} per node is more than any {profile.name} node has (at most {most}); use more nodes")
    whole = profile.scheduling.whole_node
    if whole and whole.gpu_counts and choice.count not in whole.gpu_counts:
        findings.error("resources.gpus", f"{profile.name} gives GPU jobs {' or '.join(map(str, whole.gpu_counts))} GPUs per node, not {choice.count}")
    return choice


def _shape(spec: JobSpec, profile: SiteProfile, gpus: Optional[GpuChoice], findings: _Findings) -> Tuple[int, int]:
    """Tasks per node and CPUs per task; on whole-node sites, unset values fill the node."""
    tasks, cpus = spec.resources.tasks_per_node, spec.resources.cpus_per_task
    whole = profile.scheduling.whole_node
    if whole and whole.cores and gpus is None:
        if spec.kind in ("mpi",) and tasks is None:
            tasks = max(1, whole.cores // (cpus or 1))
        elif spec.kind == "threaded" and cpus is None:
            cpus = max(1, whole.cores // (tasks or 1))
        tasks, cpus = tasks or 1, cpus or 1
        if tasks * cpus != whole.cores:
            findings.error("resources", f"{profile.name} schedules whole nodes of {whole.cores} cores; this asks {tasks * cpus} per node "
                           f"(tasks_per_node x cpus_per_task): make it {whole.cores}, e.g. tasks_per_node: {whole.cores // cpus}")
    if spec.kind in ("serial", "gpu", "array") and (tasks or 1) > 1 and spec.launch.launcher != "srun":
        findings.warn("resources.tasks_per_node", f"kind {spec.kind!r} runs one process; {tasks} tasks per node only help with launcher: srun")
    if spec.kind == "threaded" and (cpus or 1) == 1:
        findings.warn("resources.cpus_per_task", "kind 'threaded' with one CPU per task runs one thread; set cpus_per_task")
    return tasks or 1, cpus or 1


def _fitting_node_types(spec, profile: SiteProfile, gpus: Optional[GpuChoice], cores: int, findings: _Findings) -> Tuple[NodeType, ...]:
    candidates = gpus.node_types if gpus else tuple(t for t in profile.node_types if not t.gpus) or profile.node_types
    if not candidates:
        return ()
    memory = _memory_per_node(spec, cores)
    by_cores = [t for t in candidates if t.cores >= cores]
    if not by_cores:
        most = max(t.cores for t in candidates)
        findings.error("resources", f"{cores} cores per node (tasks_per_node x cpus_per_task) is more than any {_kind_of(gpus)}node on {profile.name} has ({most}); use more nodes")
        return ()
    fitting = tuple(t for t in by_cores if memory is None or t.memory_mib >= memory)
    if not fitting and profile.scheduling.mem_request is not False:
        largest = max(t.memory_mib for t in by_cores)
        field = "resources.mem" if spec.resources.mem_mb is not None else "resources.mem_per_cpu"
        findings.error(field, f"{format_size(memory)} per node is more than the largest usable memory of a {_kind_of(gpus)}node on {profile.name} "
                       f"({format_size(largest)}); ask at most {format_size(largest)}")
    return fitting


def _kind_of(gpus) -> str:
    return "GPU " if gpus else ""


def _memory_per_node(spec: JobSpec, cores: int) -> Optional[int]:
    res = spec.resources
    if res.mem_mb is not None:
        return res.mem_mb
    if res.mem_per_cpu_mb is not None:
        return res.mem_per_cpu_mb * cores
    return None


def _memory_directive(spec: JobSpec, profile: SiteProfile, findings: _Findings) -> Optional[Tuple[str, str]]:
    res = spec.resources
    if res.mem_mb is None and res.mem_per_cpu_mb is None:
        return None
    if profile.scheduling.mem_request is False:
        field = "resources.mem" if res.mem_mb is not None else "resources.mem_per_cpu"
        findings.error(field, f"{profile.name} gives every job whole nodes with all their memory; memory requests are ignored there: remove it")
        return None
    if res.mem_mb is not None:
        return ("--mem", format_size(res.mem_mb))
    return ("--mem-per-cpu", format_size(res.mem_per_cpu_mb))


def _check_cores_per_gpu(spec, gpus: Optional[GpuChoice], cores: int, node_types, findings: _Findings) -> None:
    if not gpus or not node_types:
        return
    advice = min((t.gpus.max_cores_per_gpu for t in node_types if t.gpus.max_cores_per_gpu), default=None)
    if advice and cores > advice * gpus.count:
        findings.warn("resources.cpus_per_task", f"{cores} cores for {gpus.count} GPU(s) is above the site's advice of {advice} cores per GPU; "
                      f"ask at most {advice * gpus.count} so that other GPUs on the node stay usable")


def _launcher(spec: JobSpec, profile: SiteProfile, tasks: int, cpus: int, findings: _Findings) -> Tuple[str, ...]:
    allowed = KIND_LAUNCHERS[spec.kind]
    name = spec.launch.launcher or (profile.launch.default if spec.kind == "mpi" and profile.launch.default in allowed else allowed[0])
    if name not in allowed:
        findings.error("launch.launcher", f"kind {spec.kind!r} cannot use {name!r}; it can use {', '.join(allowed)}")
        return ()
    if name == "direct":
        return ()
    if name == "srun":
        mpi = profile.launch.mpi.srun_mpi
        return ("srun", f"--mpi={mpi}") if spec.kind == "mpi" and mpi else ("srun",)
    flags = profile.launch.mpi.bind_flags or _mpirun_binding(profile)[0]
    total = spec.resources.nodes * tasks
    return ("mpirun", "-np", str(total), *(flag.format(cpus_per_task=cpus, tasks_per_node=tasks) for flag in flags))


def _mpirun_binding(profile: SiteProfile):
    return MPIRUN_BINDING[profile.launch.mpi.flavour or "openmpi"]


def _uses_mpirun(launcher: Tuple[str, ...]) -> bool:
    return bool(launcher) and launcher[0] == "mpirun"


def _array(spec: JobSpec, profile: SiteProfile, findings: _Findings) -> Optional[ArrayPlan]:
    if spec.array is None:
        return None
    names = [name for name, _ in spec.array.parameters]
    points = list(itertools.product(*(values for _, values in spec.array.parameters)))
    columns = tuple(zip(*points))
    size = len(points)
    limit = profile.scheduling.max_array_size
    if limit and size > limit:
        findings.error("array.parameters", f"{size} tasks are more than {profile.name}'s largest array ({limit}); split the sweep")
    jobs = profile.scheduling.max_jobs_per_user
    if jobs and size > jobs:
        findings.error("array.parameters", f"{size} tasks: each array task counts as a job and {profile.name} allows {jobs} queued per user")
    return ArrayPlan(tuple(zip(names, columns)), size)


def _modules(spec: JobSpec, profile: SiteProfile, findings: _Findings) -> Tuple[str, ...]:
    software = profile.software
    user = list(spec.environment.modules)
    if software.module_system in (None, "none"):
        if user:
            findings.error("environment.modules", f"{profile.name} has no module system; remove the modules")
        return ()
    if spec.environment.venv and not any(m.split("/")[0] == "python" for m in user) and software.modules.get("python"):
        user.append(software.modules["python"])  # a virtualenv needs the site's python, not the OS one
    base = list(software.preload)
    if software.stdenv and not any(m.split("/")[0] == software.stdenv.split("/")[0] for m in user):
        base.append(software.stdenv)
    return tuple(dict.fromkeys(base + user))


def _venv(spec: JobSpec, profile: SiteProfile) -> Optional[VenvPlan]:
    venv = spec.environment.venv
    if venv is None:
        return None
    wheelhouse = bool(profile.software.virtualenv.wheelhouse)
    command = profile.software.virtualenv.command or DEFAULT_VENV_COMMAND
    return VenvPlan(
        path=venv.path or "$SLURM_TMPDIR/env",
        create=tuple(shlex.split(command)),
        pip_options=("--no-index",) if wheelhouse else (),
        requirements=venv.requirements,
        packages=venv.packages,
        reuse_existing=venv.path is not None,
        upgrade_pip=wheelhouse and venv.path is None,
    )


def _environment(spec: JobSpec, profile: SiteProfile, tasks: int, cpus: int, mpirun: bool) -> Tuple[Tuple[str, str], ...]:
    env = {"OMP_NUM_THREADS": str(cpus), "MKL_NUM_THREADS": str(cpus)}
    if spec.kind == "threaded":
        env.update(OMP_PLACES="cores", OMP_PROC_BIND="close")
    if spec.kind in ("mpi", "gpu"):
        env.update(profile.launch.env)
    if mpirun:
        env.update((k, v.format(cpus_per_task=cpus, tasks_per_node=tasks)) for k, v in _mpirun_binding(profile)[1].items())
    env.update(spec.environment.variables)
    return tuple(env.items())


def _directives(spec: JobSpec, account, tasks: int, cpus: int, memory, gpus: Optional[GpuChoice], array: Optional[ArrayPlan],
                stage: Optional[StagePlan] = None, chain: Optional[ChainPlan] = None):
    res = spec.resources
    pairs: List[Tuple[str, str]] = [("--job-name", spec.name)]
    if account:
        pairs.append(("--account", account))
    pairs += [("--time", format_slurm_time(chain.link_time_s if chain else res.time_s)), ("--nodes", str(res.nodes)),
              ("--ntasks-per-node", str(tasks)), ("--cpus-per-task", str(cpus))]
    if memory:
        pairs.append(memory)
    if gpus:
        pairs.append(("--gpus-per-node", gpus.spelling))
    if res.tmp_mb is not None:
        pairs.append(("--tmp", format_size(res.tmp_mb)))
    if array:
        throttle = f"%{spec.array.throttle}" if spec.array.throttle else ""
        pairs.append(("--array", f"0-{array.size - 1}{throttle}"))
        pairs.append(("--output", "%x-%A_%a.out"))
    else:
        pairs.append(("--output", "%x-%j.out"))
    if spec.dependencies:
        pairs.append(("--dependency", ",".join(f"after{d.type if d.type != 'start' else ''}:{':'.join(d.job_ids)}" for d in spec.dependencies)))
    if spec.mail:
        pairs += [("--mail-user", spec.mail.user), ("--mail-type", ",".join(spec.mail.events))]
    if stage and stage.lead_s:
        pairs.append(("--signal", f"B:USR1@{stage.lead_s}"))
    for extra in spec.extra_directives:
        flag, _, value = extra.partition("=")
        pairs.append((flag, value))
    return tuple(pairs)


# ------------------------------------------------------------------------------------ staging

#: archive suffix -> tar's option to read it (checked longest first).
TAR_SUFFIXES = ((".tar.zst", ("--zstd",)), (".tzst", ("--zstd",)), (".tar.gz", ("-z",)), (".tgz", ("-z",)),
                (".tar.xz", ("-J",)), (".txz", ("-J",)), (".tar.bz2", ("-j",)), (".tar", ()))
PACK_SUFFIX = ".pack"          # a folder of tar shards made by `slurmkit pack --shards`
DEFAULT_LEAD_S = 300


def _extraction_parallelism(profile: SiteProfile, cores: int) -> int:
    """Shards extracted at once: all the job's cores on a RAM disk, one at a time on a disk.

    Measured with bench/staging.py (20,000 files of 40 KB, 2 shards, 2 cores): parallel
    extraction took 0.79 s against 1.44 s for one archive on tmpfs, but 3.89 s against 2.62 s
    on ext4, where the extractors contend for the journal."""
    tmpdir = profile.storage.slurm_tmpdir
    return max(1, cores) if tmpdir and tmpdir.kind == "ramdisk" else 1


def _stage(spec: JobSpec, cores: int, findings: _Findings, chain: Optional[ChainPlan] = None) -> Optional[StagePlan]:
    stage = spec.stage
    if stage is None:
        return None
    steps = tuple(_stage_step(item.source, item.to) for item in stage.inputs)
    outputs = tuple(("$SLURM_TMPDIR/" + _literal(out.source), _from_submit_dir(out.to)) for out in stage.outputs)
    checkpoint = None
    if stage.checkpoint:
        c = stage.checkpoint
        checkpoint = ("$SLURM_TMPDIR/" + _literal(c.source), _from_submit_dir(c.to), c.every_s)
    lead = 0
    if outputs or checkpoint:
        time_s = chain.link_time_s if chain else spec.resources.time_s
        lead = stage.lead_s if stage.lead_s is not None else min(DEFAULT_LEAD_S, max(60, time_s // 10))
        if lead >= time_s:
            findings.error("stage.lead", f"copying back {lead}s before the end leaves no time to run in {time_s}s; "
                           "ask more time or a shorter lead")
    return StagePlan(steps, spec.resources.nodes > 1, spec.resources.nodes, max(1, cores), outputs, checkpoint, lead)


def _stage_step(source: str, to: str) -> StageStep:
    target = "$SLURM_TMPDIR" + ("/" + _literal(to) if to else "")
    where = _from_submit_dir(source)
    name = source.rstrip("/").lower()
    if name.endswith(PACK_SUFFIX):
        return StageStep("extract-shards", where, target)
    for suffix, options in TAR_SUFFIXES:
        if name.endswith(suffix):
            return StageStep("extract", where, target, options)
    return StageStep("copy-as" if to else "copy", where, target)


def _literal(path: str) -> str:
    """A user's path as a shell word of the plan: its ``$`` stay literal."""
    return path.replace("$", "$$")


def _from_submit_dir(path: str) -> str:
    """Relative paths are from the spec's folder, which is where slurmkit runs sbatch."""
    return _literal(path) if path.startswith("/") else "$SLURM_SUBMIT_DIR/" + _literal(path)


# ------------------------------------------------------------------------------------- chains

CHAIN_MARKER = ".slurmkit-chain-done"


def _chain(spec: JobSpec, profile: SiteProfile, findings: _Findings) -> Optional[ChainPlan]:
    """A chain when the spec asks for one, or when it is longer than the site allows and can resume."""
    limit = profile.scheduling.max_walltime_seconds
    longer = bool(limit) and spec.resources.time_s > limit
    if not (spec.resubmit or longer):
        return None
    checkpoint = spec.stage.checkpoint if spec.stage else None
    if checkpoint is None:
        if spec.resubmit:
            findings.error("resubmit", "a chain resumes from a checkpoint: add stage.checkpoint (the folder your program saves to)")
        return None  # too long and cannot resume: _check_time says so
    link_time = min(spec.resources.time_s, limit) if limit else spec.resources.time_s
    links = -(-spec.resources.time_s // link_time) if longer else (spec.resubmit.max_links if spec.resubmit else 1)
    most = spec.resubmit.max_links if spec.resubmit else 10
    if links > most:
        findings.error("resources.time", f"{format_duration(spec.resources.time_s)} needs {links} jobs of {format_duration(link_time)}; "
                       f"at most {most} links (resubmit.max_links)")
    if longer:
        findings.warn("resources.time", f"{format_duration(spec.resources.time_s)} is above {profile.name}'s maximum walltime of "
                      f"{format_duration(limit)}: it runs as a chain of {links} jobs that resume from {checkpoint.source}")
    marker = _from_submit_dir(checkpoint.to.rstrip("/") + "/" + CHAIN_MARKER)
    return ChainPlan(links, link_time, marker)


# -------------------------------------------------------------------------- staged data on disk

MANY_SMALL_FILES = 1000          # a folder with more files than this, each below SMALL_FILE_BYTES, should be packed
SMALL_FILE_BYTES = 1 << 20


def staged_data_findings(spec: JobSpec, profile: SiteProfile, shapes) -> Tuple[Finding, ...]:
    """Warnings about what the inputs hold (``shapes`` from staging.inspect_inputs): many small
    files, and on RAM-disk sites, staged bytes that eat the job's memory."""
    findings = _Findings()
    for shape in shapes:
        if shape.files > MANY_SMALL_FILES and shape.bytes / shape.files < SMALL_FILE_BYTES:
            name = shape.path.rstrip("/").split("/")[-1]
            findings.warn(f"stage.inputs.{shape.index}", f"{shape.path} holds {shape.files} files of {_human_bytes(shape.bytes // shape.files)} "
                          f"on average: many small files read slowly from Lustre; pack it once (slurmkit pack {shape.path} -o {name}.pack --shards 4) "
                          f"and stage {name}.pack")
    tmpdir = profile.storage.slurm_tmpdir
    if tmpdir and tmpdir.counts_against_memory and shapes:
        staged_mib = sum(s.bytes for s in shapes) // (1 << 20)
        memory = spec.resources.mem_mb or min((t.memory_mib for t in profile.node_types if not t.gpus), default=None)
        if memory and staged_mib > 0.9 * memory:
            findings.error("stage.inputs", f"{format_size(staged_mib)} staged into {profile.name}'s RAM-disk $SLURM_TMPDIR leaves no memory "
                           f"of {format_size(memory)} per node for the job; stage less or read it from scratch")
        elif memory and staged_mib > 0.5 * memory:
            findings.warn("stage.inputs", f"{format_size(staged_mib)} staged into {profile.name}'s RAM-disk $SLURM_TMPDIR uses over half "
                          f"of the {format_size(memory)} of memory per node")
    return tuple(findings)


def _human_bytes(count: int) -> str:
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if count >= size:
            return f"{count / size:.3g}{unit}"
    return f"{count}B"
