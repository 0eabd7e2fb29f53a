"""Every decision slurmkit makes: a JobSpec and a SiteProfile become a Plan and findings.

Errors are what the scheduler would reject or what could never run; warnings are what would
run badly. Each finding names the spec field it is about and says what to do. Nothing here
reads files, the clock or the environment: the same inputs always give the same plan.
"""

from __future__ import annotations

import itertools
import posixpath
import re
import shlex
from pathlib import PurePosixPath
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple, Union

from slurmkit.core import programs
from slurmkit.core.archives import IMAGE_SUFFIXES, PACK_SUFFIX, TAR_SUFFIXES
from slurmkit.core.errors import closest
from slurmkit.core.findings import Finding, Findings, level_of
from slurmkit.core.gpu_names import (
    bf16_warnings,
    mig_names,
    sbatch_gpu_name,
    suggested_gpu_names,
    synonym_note,
    untyped_step_gres,
    whole_gpu_names,
)
from slurmkit.core.kinds import FRAMEWORK_LABELS, KINDS, ONE, PER_GPU, first_kind, kind_of, multi_node_kinds, named
from slurmkit.core.launchers import LAUNCHERS, MPI_LOCAL_RANK, NODE_CORES, Launcher, ScriptWord, from_slurm, mpi_flavour, mpirun_binding
from slurmkit.core.logpatterns import per_task
from slurmkit.core.plan import ArrayPlan, BuildPlan, ChainPlan, DistributedPlan, FromSlurm, NcclPlan, Plan, StagePlan, StageStep, VenvPlan
from slurmkit.core.programs import import_names, python_script, runs_python, shadowed_package
from slurmkit.core.records import Record
from slurmkit.core.sbatch_options import dependency
from slurmkit.core.shellwords import (
    assigned_names,
    concurrent_starts,
    launch_exports,
    reads_arguments,
    reads_script_name,
    split_at_operators,
)
from slurmkit.core.units import compact_bytes, format_duration, format_size, format_slurm_time
from slurmkit.core.variables import READERS, RUNTIME_NAMES
from slurmkit.resolve import sizing
from slurmkit.resolve.array_names import exported, list_names
from slurmkit.resolve.arraysplit import OFFSET_VARIABLE, part_sizes
from slurmkit.resolve.buildsources import fetched, source_folder
from slurmkit.resolve.framework_kinds import (
    LIGHTNING_INTERACTIVE_NAMES,
    PACKAGE_FRAMEWORKS,
    accelerate_environment,
    package_name,
    requeue_directives,
    requeue_lead,
    stage_conflict,
)
from slurmkit.resolve.gpusampler import sampler_plan
from slurmkit.resolve.headernotes import header_notes
from slurmkit.resolve.reads import unprovided_reads
from slurmkit.resolve.sizing import GpuChoice, cores_per_gpu
from slurmkit.sites import limits, modulecat
from slurmkit.sites.profiles import NodeType, SiteProfile, SlurmTmpdir, Software, retired_hardware_notice, retirement_notice
from slurmkit.spec.spec import RESERVED_VARIABLES, JobSpec

#: Below this many samples per GPU and step, communication outweighs the work on each GPU.
SMALL_BATCH_PER_GPU = 32
DEFAULT_VENV_COMMAND = "virtualenv --no-download"
class Resolution(Record):
    plan: Optional[Plan]              # None when there are errors
    findings: Tuple[Finding, ...]

    @property
    def errors(self) -> Tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.level == "error")

    @property
    def warnings(self) -> Tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.level == "warning")


def resolve(spec: JobSpec, profile: SiteProfile, local=None) -> Resolution:
    """Decide everything about ``spec`` on ``profile``; see the module docstring. ``local``: what
    the submit host knows that the spec does not say, its shell's SBATCH_* variables among them
    (localfacts.LocalFacts; None: nothing)."""
    findings = Findings()
    environ = dict(local.environment) if local is not None else {}
    _check_profile_status(profile, findings, spec)
    account = _check_account(spec, profile, environ, findings)
    chain = _chain(spec, profile, findings)
    _check_time(spec, profile, findings, chain)
    gpus = _choose_gpus(spec, profile, findings)
    tasks_per_node, cpus_per_task = _shape(spec, profile, gpus, findings)
    _check_distributed(spec, gpus, findings)
    _check_builds(spec, profile, findings)
    node_types = _fitting_node_types(spec, profile, gpus, tasks_per_node * cpus_per_task, findings)
    findings.extend(Finding(*f) for f in limits.node_count_findings(spec.resources.nodes, profile.name, node_types))
    findings.extend(Finding(*f) for f in _other_home_findings(spec))
    memory = _memory_directive(spec, profile, findings) \
        or sizing.default_memory(spec, profile, gpus, tasks_per_node * cpus_per_task, node_types)
    _check_cores_per_gpu(spec, gpus, tasks_per_node * cpus_per_task, node_types, findings)
    sizing.check(spec, profile, gpus, tasks_per_node, cpus_per_task, node_types, memory, findings)
    findings.extend(_gpu_share_findings(spec, profile, gpus, (tasks_per_node, cpus_per_task), memory, node_types))
    runner, launcher = _launcher(spec, profile, findings)
    by_count = _ranks_by_count(spec, profile, gpus, memory, runner)
    array = _array(spec, profile, findings)
    modules = _modules(spec, profile, gpus, findings)
    findings += site_rule_findings(spec, profile, gpus, modules, runner.name if runner else "")
    tmp_mb = _tmp_for_staged(spec, profile, local, findings)
    stage = _stage(spec, _extraction_parallelism(profile), findings, chain, _tmpdir_on(profile.storage.slurm_tmpdir, node_types),
                   ranks_by_count=by_count)
    _check_signal_directive(spec, stage, findings)
    _check_requeue_directives(spec, chain.link_time_s if chain else spec.resources.time_s, findings)
    _check_batch_signal(spec, stage, findings)
    conflict = stage_conflict(kind_of(spec), stage)
    if conflict:
        findings.error(*conflict)
    _check_array_outputs(spec, findings)
    _check_array_logs(spec, findings)
    findings.extend(Finding(*f) for f in limits.spec_limit_findings(spec, profile, node_types))
    tasks = _tasks(spec, (tasks_per_node, cpus_per_task), findings)
    one_process = _one_process(tasks)
    if any(f.level == "error" for f in findings):
        return Resolution(None, tuple(findings))
    venv = _venv(spec, profile, modules, local)
    plan = Plan(
        kind=spec.kind,
        profile=profile.name,
        name=spec.name,
        directives=_directives(spec, account, tasks_per_node, cpus_per_task, memory, gpus, array, stage, chain, tmp_mb,
                               by_count, one_process),
        environment=_environment(spec, profile, (tasks_per_node, cpus_per_task), runner, gpus, node_types, one_process),
        environment_notes=_environment_notes(spec),
        modules=modules,
        module_environment=_module_environment(spec, gpus, modules),
        launcher=launcher,
        command=_command(spec),
        setup=spec.environment.setup,
        errexit=spec.environment.errexit,
        nounset=spec.environment.nounset is not False,
        setup_nounset=spec.environment.nounset is True,
        allexport=spec.environment.allexport,
        launch_exports=() if spec.environment.allexport or spec.launch.shell is None else
        launch_exports(spec.environment.setup, (spec.launch.shell,)),
        login_shell=spec.environment.login_shell,
        venv=venv,
        venv_again=_venv_again(venv, spec.environment.setup),
        stage=stage,
        chain=chain,
        array=array,
        tasks=tasks,
        distributed=_distributed(spec, profile, tasks_per_node, runner, gpus, findings),
        builds=() if venv and venv.prebuilt_key else _builds(spec, profile, gpus),   # prebuilt: built with the env
        nccl=_nccl(spec, profile),
        module_system=profile.software.module_system or "none",
        gpu_sampler=sampler_plan(spec, gpus, chain),
        gpu_sampler_off=gpus is not None and spec.monitor.gpu is False,
        fabric_notes=_fabric_notes(spec, profile, gpus),
        offline_note=_offline_note(profile),
        thread_note=_thread_note(spec),
        passes_arguments=_passes_arguments(spec),
        directive_notes=header_notes(profile, gpus, node_types, memory, _memory_asked(spec)) + _rank_notes(spec, by_count, memory),
        optional_directives=_optional_directives(spec, profile, gpus, stage),
    )
    for field, message in unprovided_reads(spec, plan):   # what the command reads that nothing sets or stages
        findings.append(Finding(level_of(message), field, message))   # the job stops with 'X: unbound variable': an error
    findings.extend(_environment_findings(plan, environ))
    findings.extend(_literal_arguments(spec))
    return Resolution(None if any(f.level == "error" for f in findings) else plan, tuple(findings))


class Floors(Record):
    """The values of time, memory and cores that ``check`` accepts without a warning: the one
    model of a job's needs that the report's advice and ``report --apply`` clamp to, so that
    check never warns about what the report advised. Each ``why`` says which rule set it."""

    time_s: int = 0                     # below: the site asks production jobs to run longer
    max_time_s: Optional[int] = None    # above: the site's maximum walltime
    mem_mib: int = 0                    # per node: below, each GPU process gets less than it holds
    max_mem_mib: Optional[int] = None   # per node: above, no node the job fits on has it
    cpus: int = 1                       # per task: below, one thread of a threaded kind, or charged cores idle
    max_cpus: Optional[int] = None      # per task: above the site's cores per GPU, or a whole node's
    asks_memory: bool = True            # False: the site gives whole nodes and refuses memory requests
    gpus: int = 0                       # per node: fewer, and a distributed kind pays for communication it does not need
    why: Tuple[Tuple[str, str], ...] = ()   # (time | memory | cpu, the rule's words)

    def reason(self, resource: str) -> str:
        return dict(self.why).get(resource, "")


def floors(spec: JobSpec, profile: SiteProfile) -> Floors:
    """What check accepts of ``spec``'s time, memory and cores on ``profile`` (Floors), from the
    same rules and figures its warnings use (_check_time, _check_shape, _whole_node_shape,
    _check_cores_per_gpu, sizing.check)."""
    scratch = Findings()
    gpus = _choose_gpus(spec, profile, scratch)
    tasks, per_task = _shape(spec, profile, gpus, scratch)
    sched, why = profile.scheduling, []
    candidates = gpus.node_types if gpus else tuple(t for t in profile.node_types if not t.gpus) or profile.node_types
    max_mem = max((_stated(t.memory_mib) for t in candidates if _stated(t.cores) >= tasks * per_task), default=None)
    time_s = sched.min_walltime_advice_seconds or 0
    if time_s:
        why.append(("time", f"{profile.name} asks production jobs to run at least {format_duration(time_s)}"))
    cpus, max_cpus = _core_floors(spec, profile, gpus, tasks, why)
    fewest_gpus = _gpu_floor(spec, profile, why)
    return Floors(time_s=time_s, max_time_s=sched.max_walltime_seconds, mem_mib=_memory_floor(spec, profile, gpus, tasks, why),
                  max_mem_mib=max_mem, cpus=cpus, max_cpus=max_cpus, asks_memory=sched.mem_request is not False, gpus=fewest_gpus,
                  why=tuple(why))


def _gpu_floor(spec: JobSpec, profile: SiteProfile, why: List[Tuple[str, str]]) -> int:
    """GPUs per node check accepts at least: a whole GPU node on more than one node where the
    site gives whole GPU nodes (siterules), two for a distributed kind on one node (_check_gpu_work)."""
    kind, whole = kind_of(spec), profile.scheduling.whole_node
    if spec.resources.nodes > 1 and whole and whole.gpu_counts:
        why.append(("gpu", f"{profile.name} gives a job on more than one node whole GPU nodes"))
        return max(whole.gpu_counts)
    if kind.distributed and not kind.alone_on_one_gpu and spec.resources.nodes == 1:
        why.append(("gpu", f"kind {kind.name!r} on one GPU pays for communication it does not need"))
        return 2
    return 0


def _memory_floor(spec: JobSpec, profile: SiteProfile, gpus: Optional[GpuChoice], tasks: int, why: List[Tuple[str, str]]) -> int:
    """Per node: each GPU process's host memory (sizing._check_memory_per_process), else 0."""
    framework = sizing.gpu_framework(spec) if gpus and gpus.node_types else None
    if framework is None or profile.scheduling.mem_request is False:
        return 0
    why.append(("memory", f"{format_size(sizing.process_floor_mib(framework))} of host memory per GPU process"))
    return sizing.process_floor_mib(framework) * tasks


def _core_floors(spec: JobSpec, profile: SiteProfile, gpus: Optional[GpuChoice], tasks: int,
                 why: List[Tuple[str, str]]) -> Tuple[int, Optional[int]]:
    """(the fewest, the most) cores per task check accepts: two for a kind that runs threads, a
    whole node's on a whole-node site, a GPU's charged share, the site's cores per GPU."""
    cpus, most = (2 if kind_of(spec).pins_threads else 1), None
    if cpus > 1:
        why.append(("cpu", f"kind {spec.kind!r} runs threads"))
    whole = profile.scheduling.whole_node
    if whole and whole.cores and gpus is None:
        why.append(("cpu", f"{profile.name} schedules whole nodes of {whole.cores} cores"))
        return max(1, whole.cores // tasks), max(1, whole.cores // tasks)
    if not (gpus and gpus.node_types):
        return cpus, None
    charged = sizing.idle_core_share(profile, gpus, gpus.node_types)
    if charged is not None and -(-charged // tasks) > cpus:
        cpus = -(-charged // tasks)
        why.append(("cpu", f"{profile.name} charges {charged} cores for {gpus.count} GPU(s)"))
    advice = min((t.gpus.max_cores_per_gpu for t in gpus.node_types if t.gpus and t.gpus.max_cores_per_gpu), default=None)
    if advice:
        most = max(1, advice * gpus.count // tasks)
    return cpus, most


def _passes_arguments(spec: JobSpec) -> bool:
    """Whether the launch.shell line reads the script's arguments or its own $0 (``sbatch "$0"``):
    ``bash -c`` has neither unless given them (``"$0" "$@"``)."""
    shell = spec.launch.shell or ""
    return bool(shell) and (reads_arguments(shell) or reads_script_name(shell))


def _literal_arguments(spec: JobSpec) -> Tuple[Finding, ...]:
    """``$1``, ``"$@"`` in launch.command reach the program as that text (a command's words expand
    only ``$NAME``), while its author most likely meant the job script's arguments (``submit SPEC
    -- ARGS``): said, with both ways out. A launch.shell line gets them (``"$0" "$@"``)."""
    if spec.launch.shell is not None or not any(reads_arguments(word) for word in spec.launch.command):
        return ()
    return (Finding("warning", "launch.command",
                    "$1, $@ or $# reach the program as that text: a command's words expand only $NAME; to pass the "
                    "job script's arguments (`slurmkit submit SPEC -- ARGS`) write the line as launch.shell, "
                    "for the text itself write $$1"),)


def _check_array_outputs(spec: JobSpec, findings: Findings) -> None:
    """An array's tasks must not save their outputs over one another."""
    if not (spec.array and spec.stage):
        return
    outputs = [(i, out.to) for i, out in enumerate(spec.stage.outputs)]
    findings.extend(Finding(*f) for f in limits.shared_output_findings(outputs, [n for n, _ in spec.array.parameters]))
    from slurmkit.resolve.array_destinations import destination_findings  # here: only an array with outputs needs it

    destinations = [(f"stage.outputs.{i}.to", to, False) for i, to in outputs]
    destinations += [("stage.checkpoint.to", spec.stage.checkpoint.to, True)] if spec.stage.checkpoint else []
    findings.extend(Finding(*f) for f in destination_findings(spec.array.parameters, destinations))


def _check_array_logs(spec: JobSpec, findings: Findings) -> None:
    """An array whose log name is the same for every task (no %a, nor a task's own %j): each
    task writes over the others' log (%A is the array's id, one for all)."""
    if not (spec.array and spec.logs):
        return
    for field, pattern in (("logs.output", spec.logs.output), ("logs.error", spec.logs.error)):
        if pattern and not per_task(pattern):
            findings.warn(field, f"{pattern!r} names one file for every task of the array (it has no %a): each task writes "
                                 "over the others' log; add the task's index, such as logs/%x-%A_%a.out")


def _environment_findings(plan: Plan, environ: Dict[str, str]) -> List[Finding]:
    """sbatch's input variables set in the submit shell override the script's directives: say which."""
    if not any(name.startswith(("SBATCH_", "SLURM_CLUSTERS", "SLURM_HINT")) for name in environ):
        return []
    from slurmkit.spec.sbatch_environment import findings as environment_findings

    return [Finding(*f) for f in environment_findings(plan.directives, environ)]


# ------------------------------------------------------------------------------------ checks


def site_rule_findings(spec: JobSpec, profile: SiteProfile, gpus: Optional[GpuChoice], modules, launcher: str = "") -> List[Finding]:
    """The profile's ``rules:`` that the spec alone decides (slurmkit/resolve/siterules.py);
    ``launcher``: the name of the one that runs the job's command."""
    from slurmkit.resolve.joblines import mig_graphics_findings
    from slurmkit.resolve.siterules import job_findings

    findings = [Finding(*f) for f in job_findings(spec, profile, gpus.node_types if gpus else (), modules,
                                                  gpus.count if gpus else 0, launcher)]
    return findings + mig_graphics_findings(spec, profile, sizing.mig_instance(gpus) if gpus else "")


def _gpu_share_findings(spec: JobSpec, profile: SiteProfile, gpus: Optional[GpuChoice], shape: Tuple[int, int], memory,
                        node_types) -> List[Finding]:
    """Memory and cores above the GPUs' share of their node (siterules.gpu_share_findings),
    beyond what the job's GPU processes hold (sizing's floor, which report --apply writes)."""
    from slurmkit.resolve.siterules import gpu_share_findings

    tasks, cpus = shape
    framework = sizing.gpu_framework(spec) if gpus else None
    need = sizing.process_floor_mib(framework) * tasks if framework is not None else 0
    return [Finding(*f) for f in gpu_share_findings(profile, gpus, tasks * cpus, memory, node_types, need)]


def _tmp_for_staged(spec: JobSpec, profile: SiteProfile, local, findings: Findings) -> Optional[int]:
    """The spec's --tmp, or the one the staged inputs need where the site's --tmp reaches more local disk (siterules.py)."""
    if local is None or not local.staged:
        return spec.resources.tmp_mb
    from slurmkit.resolve.siterules import tmp_for_staged

    added, found = tmp_for_staged(spec, profile, local.staged)
    findings.extend(Finding(*f) for f in found)
    return added if added is not None else spec.resources.tmp_mb


def _spec_file(spec: Optional[JobSpec]) -> Optional[str]:
    """The spec's file, for a command to run on it; None for a spec made in Python."""
    return spec.source if spec and spec.source and spec.source.endswith((".yaml", ".yml")) else None


def _check_profile_status(profile: SiteProfile, findings: Findings, spec: Optional[JobSpec] = None) -> None:
    notice = retirement_notice(profile, _spec_file(spec))
    if notice:
        findings.warn("profile", notice)


def _check_account(spec: JobSpec, profile: SiteProfile, environ: Dict[str, str], findings: Findings) -> Optional[str]:
    """The spec's account, else the one sbatch would take from the submit shell (accounts.py)."""
    from slurmkit.resolve import accounts

    rule = profile.accounts.required
    account, where = spec.account, ""
    environment = accounts.from_environment(environ) if account is None else None
    if environment:
        account, variable = environment
        where = f" (from ${variable})"
    elif account is not None and accounts.overriding(account, environ):
        override = accounts.overriding(account, environ)
        findings.warn("account", f"$SBATCH_ACCOUNT={override} overrides it: sbatch charges {override}, not {account}; "
                                 "unset SBATCH_ACCOUNT or make the two agree")
    if account is None:
        if rule == "always":
            findings.error("account", f"{profile.name} needs an account: add 'account: def-yourprof' to the spec "
                                      "(or export SBATCH_ACCOUNT)")
        elif rule == "when-several":
            findings.warn("account", f"no account: {profile.name} rejects the job if you belong to several allocations; "
                                     "add 'account: def-yourprof'")
        return None
    prefixes = profile.accounts.prefixes
    if prefixes and not account.startswith(tuple(prefixes)):
        findings.warn("account", f"{account!r}{where} does not look like a {profile.name} account "
                                 f"({', '.join(p + '...' for p in prefixes)})")
    return account


def _check_time(spec: JobSpec, profile: SiteProfile, findings: Findings, chain=None) -> None:
    asked = chain.link_time_s if chain else spec.resources.time_s
    limit = profile.scheduling.max_walltime_seconds
    if limit and asked > limit:
        findings.error("resources.time", f"{format_duration(asked)} is above {profile.name}'s maximum walltime of "
                       f"{format_duration(limit)}; split the work into shorter jobs that resume from a checkpoint")
    advice = profile.scheduling.min_walltime_advice_seconds
    if advice and asked < advice:
        findings.warn("resources.time", f"{format_duration(asked)} is short: {profile.name} asks production jobs to run at least "
                      f"{format_duration(advice)}; bundle short tasks into one longer job "
                      f"(kind {first_kind(runs_task_file=True).name!r} runs them with GNU Parallel)")


def _choose_gpus(spec: JobSpec, profile: SiteProfile, findings: Findings) -> Optional[GpuChoice]:
    request = spec.resources.gpus
    if request is None:
        if kind_of(spec).gpu_required:
            count = kind_of(spec).gpus_example
            example = (suggested_gpu_names(profile) or ["MODEL"])[0]
            findings.error("resources.gpus", f"kind {spec.kind!r} needs GPUs: add e.g. 'gpus: " + example + f":{count}'")
        return None
    gpu_types = [t for t in profile.node_types if t.gpus]
    if not gpu_types and request.model and _retired_gpu(request.model, profile, findings, _spec_file(spec)):
        return None
    if not gpu_types:
        successor = profile.status.successor
        findings.error("resources.gpus", f"{profile.name} has no GPU nodes" + (f"; its successor {successor} may" if successor else ""))
        return None
    if request.model is None:
        fitting = _holding(gpu_types, request.count)
        # nodes taken whole (Nibi's MI300A) take no part-node request: size it for the others
        fitting = tuple(t for t in fitting if _takes_part(t, request.count)) or fitting
        return _gpu_count_checked(GpuChoice(str(request.count), request.count, fitting), gpu_types, "GPUs", profile, findings)
    mig = _mig_choice(request, gpu_types, findings, profile.name)
    if mig is not None:
        return mig
    matching = [t for t in gpu_types if request.model in whole_gpu_names(t.gpus)]
    if not matching:
        _unknown_gpu(request.model, profile, findings, _spec_file(spec))
        return None
    _note_synonym(findings, synonym_note(profile.name, request.model, matching[0].gpus))
    spelling = sbatch_gpu_name(matching[0].gpus)
    fitting = _holding(matching, request.count)
    return _gpu_count_checked(GpuChoice(f"{spelling}:{request.count}", request.count, fitting), matching, spelling, profile, findings)


def _takes_part(node_type: NodeType, count: int) -> bool:
    """Whether ``count`` GPUs per node may go to the type: not where its nodes are taken whole and that is not all of them."""
    gpus = node_type.gpus
    return gpus is None or not gpus.whole_node or gpus.count == count


def _holding(gpu_types: Sequence[NodeType], count: int) -> Tuple[NodeType, ...]:
    """The GPU node types whose nodes hold ``count`` GPUs or more."""
    return tuple(t for t in gpu_types if t.gpus and t.gpus.count >= count)


def _note_synonym(findings: Findings, note: str) -> None:
    if note:
        findings.warn("resources.gpus", note)


def _mig_choice(request, gpu_types, findings: Findings, site: str) -> Optional[GpuChoice]:
    """The MIG instance the request names, if it names one: a job may use one."""
    for node_type in gpu_types:
        for mig in node_type.gpus.mig:
            if request.model in mig_names(node_type.gpus, mig):
                _note_synonym(findings, synonym_note(site, request.model, node_type.gpus, mig))
                if request.count != 1:
                    findings.error("resources.gpus", f"a job may use one MIG instance; ask for {mig.gres}:1 "
                                                     f"or for whole {node_type.gpus.model} GPUs")
                return GpuChoice(f"{mig.gres}:1", 1, (node_type,))
    return None


def _retired_gpu(model: str, profile: SiteProfile, findings: Findings, spec_file: Optional[str]) -> bool:
    """An old script's GPU, which the cluster retired: refused with its date and what to use."""
    retired = next((t for t in profile.retired_node_types if t.gpus and model in whole_gpu_names(t.gpus)), None)
    if retired:
        findings.error("resources.gpus", retired_hardware_notice(profile, retired, suggested_gpu_names(profile), spec_file))
    return retired is not None


def _unknown_gpu(model: str, profile: SiteProfile, findings: Findings, spec_file: Optional[str] = None) -> None:
    if _retired_gpu(model, profile, findings, spec_file):
        return
    names = suggested_gpu_names(profile)
    close = closest(model, names, cutoff=0.5)
    hint = f"did you mean '{close}'? " if close else ""
    findings.error("resources.gpus", f"{profile.name} has no GPU called {model!r}; {hint}it has: {', '.join(names)}")


def _gpu_count_checked(choice: GpuChoice, candidates, what: str, profile: SiteProfile, findings: Findings) -> GpuChoice:
    most = max(t.gpus.count for t in candidates)
    if not choice.node_types:
        findings.error("resources.gpus", f"{choice.count} {what} per node is more than any {profile.name} node has "
                                         f"(at most {most}); use more nodes")
    whole = profile.scheduling.whole_node
    if whole and whole.gpu_counts and choice.count not in whole.gpu_counts:
        counts = " or ".join(map(str, whole.gpu_counts))
        findings.error("resources.gpus", f"{profile.name} gives GPU jobs {counts} GPUs per node, not {choice.count}")
    return choice


def _shape(spec: JobSpec, profile: SiteProfile, gpus: Optional[GpuChoice], findings: Findings) -> Tuple[int, int]:
    """Tasks per node and CPUs per task; on whole-node sites, unset values fill the node."""
    kind = kind_of(spec)
    if kind.distributed and gpus:
        return _gpu_process_shape(spec, gpus, findings)
    tasks, cpus = spec.resources.tasks_per_node, spec.resources.cpus_per_task
    whole = profile.scheduling.whole_node
    if whole and whole.cores and gpus is None:
        tasks, cpus = _whole_node_shape(kind, tasks, cpus, whole.cores, profile.name, findings, whole.threads_per_core)
    if gpus and cpus is None:
        cpus = sizing.cpus_per_task(gpus, tasks or 1)   # the GPUs' bundle of cores: their charge covers it
    _check_shape(spec, kind, tasks or 1, cpus or 1, findings)
    if not whole:
        _check_node_wide_counts(spec, cpus or 1, findings)
    return tasks or 1, cpus or 1


#: counts of every core of the node, which ignore the cores SLURM gave the job (its affinity),
#: with what counts the job's own: a pool sized by them starts a worker a core of the node
_NODE_WIDE_COUNTS = re.compile(r"\b(?:os|multiprocessing|mp|psutil)\.cpu_count\(\)|\bcpu_count\(\)|\bdetectCores\(\)|"
                               r"\bnproc\s+--all\b|/proc/cpuinfo\b|\bgetconf\s+_NPROCESSORS_ONLN\b")


def _check_node_wide_counts(spec: JobSpec, cpus: int, findings: Findings) -> None:
    """A worker count read from the node (``--workers $(python -c 'import os;
    print(os.cpu_count())')``, R's ``mc.cores = detectCores()``): the job's cores are a part of
    the node, and a bigger node on a new cluster starts more workers on the same cores."""
    launch = spec.launch
    said = ("launch.shell", launch.shell) if launch.shell else ("launch.command", " ".join(launch.command))
    for field, text in (said, *(("environment.setup", line) for line in spec.environment.setup)):
        found = _NODE_WIDE_COUNTS.search(text)
        if found:
            findings.warn(field, f"{found.group()} counts every core of the node, not the job's {cpus}: a pool or a thread "
                                 "count sized by it runs that many workers on the job's cores (more on a bigger node); use "
                                 "$SLURM_CPUS_PER_TASK (Python: len(os.sched_getaffinity(0)); R: parallelly::availableCores(); "
                                 "nproc without --all)")
            return


def _whole_node_shape(kind, tasks: Optional[int], cpus: Optional[int], cores: int, site: str, findings: Findings,
                      threads_per_core: int = 1) -> Tuple[int, int]:
    """On a whole-node site, the kind fills the node with tasks or threads; anything else must
    add up to it, or, for MPI ranks, to its hardware threads where Hyper-Threading is on."""
    if kind.fills_whole_node == "tasks" and tasks is None:
        tasks = max(1, cores // (cpus or 1))
    elif kind.fills_whole_node == "threads" and cpus is None:
        cpus = max(1, cores // (tasks or 1))
    tasks, cpus = tasks or 1, cpus or 1
    if kind.rank_count_is_users and threads_per_core > 1 and tasks * cpus == cores * threads_per_core:
        pass   # one rank per hardware thread (Niagara's 80 tasks per node)
    elif kind.rank_count_is_users and tasks * cpus < cores:   # ranks x threads are the user's, dividing a node or not
        findings.warn("resources", _part_of_whole_node(site, cores, tasks, cpus))
    elif tasks * cpus != cores:
        findings.error("resources", _not_whole_node(kind.whole_node_advice, site, cores, tasks, cpus))
    return tasks, cpus


def _check_shape(spec: JobSpec, kind, tasks: int, cpus: int, findings: Findings) -> None:
    """Shapes that run, but not as the user expects: extra tasks of a one-process kind, one thread, one task at a time."""
    if kind.one_process and tasks > 1 and not _asks_a_copy_per_task(spec):
        findings.warn("resources.tasks_per_node", f"kind {spec.kind!r} runs one process; "
                                                  f"{tasks} tasks per node only help with launcher: srun")
    if kind.pins_threads and cpus == 1:
        findings.warn("resources.cpus_per_task", f"kind {kind.name!r} with one CPU per task runs one thread; set cpus_per_task")
    if kind.runs_task_file and tasks == 1 and spec.resources.nodes == 1:
        findings.warn("resources.tasks_per_node", f"kind {kind.name!r} with one task per node runs its tasks one after another; "
                      "set tasks_per_node to how many run at a time")


def _part_of_whole_node(site: str, cores: int, tasks: int, cpus: int) -> str:
    """An MPI job's rank count is the user's (its domain decomposition): fewer ranks than a
    whole node's cores run, on nodes charged whole; said, not refused."""
    return (f"{site} schedules whole nodes of {cores} cores; this uses {tasks * cpus} per node (tasks_per_node x cpus_per_task), "
            f"the other {cores - tasks * cpus} are idle but charged: fill them (tasks_per_node: {cores // cpus}) where the rank "
            "count is yours to choose")


def _not_whole_node(advice: str, site: str, cores: int, tasks: int, cpus: int) -> str:
    """How to fill a whole node: more ranks for MPI; one process (serial, an array task, a
    threaded job below a node) runs many at a time in one job, as the Trillium Quickstart advises."""
    asked = f"{site} schedules whole nodes of {cores} cores"
    if cores % cpus:
        divisors = [d for d in range(2, min(cores, 64) + 1) if cores % d == 0]
        return f"{asked}, which {cpus} cores per task does not divide: pick one that does (e.g. {', '.join(map(str, divisors[:4]))})"
    per_node, bundle = cores // cpus, f"in one job of kind {first_kind(runs_task_file=True).name!r} (GNU Parallel"
    if advice == "one process":
        return f"{asked} and a serial job uses {tasks * cpus}: run such tasks {per_node} at a time {bundle}; tasks_per_node: {per_node})"
    if advice == "sweep":
        return (f"{asked} and each array task uses {cpus}: put the sweep's points in a task file and run them {per_node} at a time "
                f"{bundle}; tasks_per_node: {per_node}" + (f", cpus_per_task: {cpus})" if cpus > 1 else ")"))
    if advice == "threads" and tasks == 1:
        return (f"{asked} and this threaded job uses {cpus}: give it the node (cpus_per_task: {cores}), or run such jobs "
                f"{per_node} at a time {bundle}; tasks_per_node: {per_node}, cpus_per_task: {cpus})")
    return f"{asked}; this asks {tasks * cpus} per node (tasks_per_node x cpus_per_task): make it {cores}, e.g. tasks_per_node: {per_node}"


def _gpu_process_shape(spec: JobSpec, gpus: GpuChoice, findings: Findings) -> Tuple[int, int]:
    """One process per GPU (one task per node for a single TensorFlow process); CPUs per
    process as asked, else the site's cores per GPU."""
    single = _single_process(spec)
    tasks = 1 if single else gpus.count
    asked = spec.resources.tasks_per_node
    if asked is not None and asked != tasks:
        why = "one TensorFlow process drives all the GPUs" if single else f"one process per GPU: {gpus.count} GPUs per node"
        findings.error("resources.tasks_per_node", f"kind {spec.kind!r} runs {tasks} task(s) per node ({why}); leave tasks_per_node out")
    cpus = spec.resources.cpus_per_task
    if cpus is None:
        cpus = cores_per_gpu(gpus.node_types) * (gpus.count if single else 1)
    return tasks, cpus


def _framework(spec: JobSpec) -> str:
    return kind_of(spec).framework(spec.launch.framework)


def _single_process(spec: JobSpec) -> bool:
    """One process drives every GPU (TensorFlow's MirroredStrategy under kind multigpu)."""
    return kind_of(spec).single_process_framework == _framework(spec)


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
#: a module command in a set-up line (in an if, after ;): Lmod puts what it loads before the
#: virtualenv on PATH (a python module's python would run in its place)
_MODULE_COMMAND = re.compile(r"(?:^|[;&|({]|\b(?:then|else|do))\s*(?:module|ml)\s", re.M)


def _command(spec: JobSpec) -> Tuple[str, ...]:
    """The payload's argv: ``env`` first where it starts with a variable's assignment
    (``X=1 python t.py``), which only a shell reads as one. A launch.shell line runs in a bash of its own (``bash -c``), which
    inherits none of the script's options: it gets set -e (per environment.errexit) and
    pipefail, so that a command of it that fails stops it as it would stop the script, and a
    failing program before a pipe is not hidden by the pipe's last command. Not set -u, unless
    environment.nounset says so (a script that ran under set -u stopped at an unset variable
    there too): as the setup lines, it reads an unset variable ($1 of a job given no
    arguments) as empty, and check names such variables."""
    command = spec.launch.command
    if command and not spec.environment.errexit and _defines_function(spec.environment.setup, command[0]):
        return ("slurmkit_without_errexit", *command)
    if spec.launch.shell is None or command[:2] != ("bash", "-c"):
        # NAME=value before the program: srun, mpirun, parallel and a quoted word would take it for the program
        return ("env", *command) if command and _ASSIGNMENT.match(command[0]) else command
    flags = ("-e" if spec.environment.errexit else "-") + ("u" if spec.environment.nounset else "") + "o"
    return ("bash", flags, "pipefail", *command[1:])


def _defines_function(setup: Tuple[str, ...], name: str) -> bool:
    """Whether a setup line defines shell function ``name`` (``name() {`` or ``function name``):
    the payload is then that function, run in the script's own shell and under its options."""
    pattern = re.compile(rf"(^|\n)\s*(function\s+{re.escape(name)}\b|{re.escape(name)}\s*\(\s*\))")
    return any(pattern.search(line) for line in setup)


def _execs_alone(shell: str) -> bool:
    """Whether a shell line becomes the program itself (``exec prog > log 2>&1``): redirections only."""
    head, operators = split_at_operators(shell)
    return head.lstrip().startswith("exec ") and all(">" in token or "<" in token for token in operators)


def _check_distributed(spec: JobSpec, gpus: Optional[GpuChoice], findings: Findings) -> None:
    """What the distributed kinds cannot do, and GPUs a job is too small to use."""
    kind, nodes = kind_of(spec), spec.resources.nodes
    _check_kind_needs(spec, kind, findings)
    _check_shadowing(spec, kind, findings)
    _check_kind_framework(spec, kind, nodes, gpus, findings)
    _check_gpu_work(spec, kind, nodes, gpus, findings)
    _check_step_gpus(spec, gpus, findings)


def _check_kind_needs(spec: JobSpec, kind, findings: Findings) -> None:
    """What a framework kind needs of the job: its GPUs in view, its package, a name and a shell line it can live with."""
    if kind.picks_its_gpu and spec.launch.gpu_view == "own":
        findings.error("launch.gpu_view", f"kind {kind.name!r} picks each process's GPU itself, by its local rank among the "
                       "node's GPUs: with only its own in view, a process past the first finds no GPU; leave gpu_view out")
    venv = spec.environment.venv
    if kind.needs_one_of and venv and venv.packages and not venv.requirements \
            and not set(kind.needs_one_of) & {package_name(p) for p in venv.packages}:
        findings.error("environment.venv.packages", f"kind {kind.name!r} needs {' or '.join(kind.needs_one_of)} in the job's "
                       "Python, and the packages listed do not include it: the job would stop at once (a program or "
                       f"module not found); add {kind.needs_one_of[0]}")
    if kind.requeues_on_signal and spec.name in LIGHTNING_INTERACTIVE_NAMES:
        findings.error("name", f"Lightning takes a job named {spec.name!r} for an interactive session and ignores SLURM: no "
                       "ranks from it, no save and requeue on the signal; name the job otherwise")
    if kind.picks_its_gpu:
        for index, directive in enumerate(spec.extra_directives):
            if directive.startswith("--gpu-bind"):
                findings.error(f"extra_directives.{index}", f"{directive!r}: kind {kind.name!r} picks each process's GPU itself, "
                               "by its local rank among the node's GPUs, which a binding would hide; leave it out")
    if kind.requeues_on_signal and spec.launch.shell and not _execs_alone(spec.launch.shell):
        findings.error("launch.shell", f"kind {kind.name!r}: srun passes SIGUSR1 to every process of each task, and bash and "
                       "the other commands of a shell line (tee, a pipe) die of it, Lightning's save with them: use "
                       "launch.command with the program alone, or a shell line that execs it, with redirections only "
                       "(exec python train.py > train-$SLURM_PROCID.log 2>&1)")


def _check_shadowing(spec: JobSpec, kind, findings: Findings) -> None:
    """A script named after a package the job imports (``lightning.py`` under kind lightning):
    Python puts the script's folder first on its path, so ``import lightning`` finds the script
    itself, half run ("partially initialized module 'lightning'"), and the job stops at once."""
    script = python_script(_payload(spec))
    imported = _imported_packages(spec, kind)
    name = shadowed_package(script, tuple(imported)) if script else ""
    if name:
        findings.error("launch.shell" if spec.launch.shell else "launch.command",
                       f"{script} has the name of the {name} package, which {imported[name]}: Python finds the script "
                       f"first and `import {name}` imports it in the package's place, so the job stops at once; "
                       "rename the script (e.g. train.py)")


def _imported_packages(spec: JobSpec, kind) -> Dict[str, str]:
    """Import name -> why the job imports it: its kind, or what its environment installs or loads."""
    environment = spec.environment
    venv = environment.venv
    sources = [(kind.python_imports(spec.launch.framework), f"kind {kind.name!r} imports"),
               ([n for p in (venv.packages if venv else ()) for n in import_names(package_name(p))],
                "environment.venv.packages installs"),
               ([n for m in environment.modules for n in import_names(m.split("/")[0])], "environment.modules loads"),
               ([n for b in environment.builds for n in import_names(b.name)], "environment.builds builds")]
    imported: Dict[str, str] = {}
    for names, why in sources:
        for name in names:
            imported.setdefault(name, why)
    return imported


def _check_kind_framework(spec: JobSpec, kind, nodes: int, gpus: Optional[GpuChoice], findings: Findings) -> None:
    """The framework and the node count a kind runs, and the mixed precision it passes on."""
    if kind.one_node_only and nodes > 1:
        framework = _framework(spec)
        findings.error("resources.nodes", f"kind {kind.name!r} runs on one node; for several, use kind "
                       f"{named(multi_node_kinds(framework))} ({FRAMEWORK_LABELS[framework]})")
    if kind.framework_only and _framework(spec) != kind.framework_default:
        other = KINDS[kind.other_framework_kind]
        findings.error("launch.framework", f"kind {kind.name!r} runs {FRAMEWORK_LABELS[kind.framework_default]}; "
                       f"for {FRAMEWORK_LABELS[other.framework_default]} use kind {other.name!r}")
    if spec.launch.mixed_precision is not None and not kind.launches_per_node:
        findings.error("launch.mixed_precision", f"is given to `accelerate launch`: "
                                                 f"kind {first_kind(launches_per_node=True).name!r} only, not {kind.name!r}")
    if spec.launch.mixed_precision == "bf16" and gpus:
        findings.extend(Finding("warning", "launch.mixed_precision", m) for m in bf16_warnings(gpus.node_types))


#: a launch line or command that starts the job's processes itself, as many as it says (a kept
#: ``torchrun --nproc_per_node=2`` on 4 GPUs, ``deepspeed --num_gpus=4 train.py``): kind gpu's
#: "one process" is not the job's count
_PROCESS_STARTERS = re.compile(r"(^|[\s;&|(])(torchrun|python\S*\s+-m\s+torch\.distributed\.(launch|run)|accelerate\s+launch|deepspeed|"
                               r"horovodrun|mpirun|mpiexec|srun)\s")


def _spawns_its_ranks(spec: JobSpec) -> bool:
    """A rendezvous address the job sets for one process (MASTER_ADDR, MASTER_PORT): the program
    starts a process per GPU itself (torch.multiprocessing.spawn), so a kind that starts one per
    GPU would start that many each. Or the launch line starts several itself, in the background
    (``CUDA_VISIBLE_DEVICES=0 python t.py &`` for each GPU, then ``wait``)."""
    return any(name in ("MASTER_ADDR", "MASTER_PORT") for name, _ in spec.environment.variables) or \
        bool(_BACKGROUND.search(spec.launch.shell or ""))


#: a command run in the background (``&``, not ``&&``, ``>&``, ``&>`` or ``|&``)
_BACKGROUND = re.compile(r"(?<![&>|])&(?![&>])")


def _check_step_gpus(spec: JobSpec, gpus: Optional[GpuChoice], findings: Findings) -> None:
    """A job step of the job's own lines that asks GPUs untyped (``srun --gres=gpu:1 ... &``)
    under a header that names the type (``--gpus-per-node=h100:2``): Slurm refuses the step
    ("Invalid GRES specification (with and without type identification)", Slurm 22.05, run on the
    local cluster), and a ``wait`` after it ends the job 0 with nothing run."""
    if gpus is None or ":" not in gpus.spelling:
        return
    name = gpus.spelling.rpartition(":")[0]
    for field, text in (("environment.setup", "\n".join(spec.environment.setup)), ("launch.shell", spec.launch.shell or "")):
        for found in dict.fromkeys(untyped_step_gres(text)):
            count = found.rpartition(":")[2]
            findings.warn(field, f"the step's {found} names no GPU type under the job's {gpus.spelling}: Slurm refuses such a "
                                 f"step (with and without type identification), so it never runs; write --gres=gpu:{name}:{count}")


def _check_gpu_work(spec: JobSpec, kind, nodes: int, gpus: Optional[GpuChoice], findings: Findings) -> None:
    """GPUs the job's processes would leave idle, or too little work per GPU to pay for the exchange."""
    total = nodes * gpus.count if gpus else 0
    if kind.gpu_required and kind.one_process and gpus and gpus.node_types and gpus.count > 1 and not _asks_a_copy_per_task(spec) \
            and not _PROCESS_STARTERS.search(spec.launch.shell or " ".join(spec.launch.command) + " ") \
            and not _spawns_its_ranks(spec):
        findings.warn("resources.gpus", f"kind {kind.name!r} runs one process, which uses one of the {gpus.count} GPUs unless it "
                      f"distributes the work itself (DataParallel, mp.spawn, Lightning's devices=N: then leave it); else use "
                      f"kind {first_kind(processes=PER_GPU, one_node_only=True).name!r} (one process per GPU)")
    if kind.distributed and total == 1 and not kind.alone_on_one_gpu:
        findings.warn("resources.gpus", f"kind {kind.name!r} on one GPU pays for communication it does not need; "
                      f"use kind {first_kind(gpu_required=True, processes=ONE).name!r}")
    batch = spec.launch.batch_size
    if kind.distributed and total > 1 and batch is not None and batch < SMALL_BATCH_PER_GPU:
        findings.warn("launch.batch_size", f"{batch} samples per GPU and step is too little work for {total} GPUs: the gradient "
                      f"exchange outweighs it and the job runs slower than on fewer GPUs; "
                      f"use at least {SMALL_BATCH_PER_GPU} per GPU or fewer GPUs")


def _fitting_node_types(spec, profile: SiteProfile, gpus: Optional[GpuChoice], cores: int, findings: Findings) -> Tuple[NodeType, ...]:
    candidates = gpus.node_types if gpus else tuple(t for t in profile.node_types if not t.gpus) or profile.node_types
    if not candidates:
        return ()
    memory = _memory_per_node(spec, cores)
    whole = profile.scheduling.whole_node
    threads = whole.threads_per_core if whole and not gpus else 1   # Hyper-Threading: a task per hardware thread
    by_cores = [t for t in candidates if _stated(t.cores) * threads >= cores]
    if not by_cores:
        most = max(_stated(t.cores) for t in candidates)
        findings.error("resources", f"{cores} cores per node (tasks_per_node x cpus_per_task) is more than any "
                                    f"{_kind_of(gpus)}node on {profile.name} has ({most}); use more nodes")
        return ()
    if memory is None:
        return tuple(by_cores)
    fitting = tuple(t for t in by_cores if _stated(t.memory_mib) >= memory)
    if not fitting and profile.scheduling.mem_request is not False:
        largest = max(_stated(t.memory_mib) for t in by_cores)
        field = "resources.mem" if spec.resources.mem_mb is not None else "resources.mem_per_cpu"
        findings.error(field, f"{format_size(memory)} per node is more than the largest usable memory of a "
                       f"{_kind_of(gpus)}node on {profile.name} ({format_size(largest)}); ask at most {format_size(largest)}")
    return fitting


def _stated(value: Optional[int]) -> int:
    """A node type's cores or memory, which the schema requires of every concrete profile: only an
    abstract base leaves them to its children (profiles.NodeType), and resolve never gets one."""
    assert value is not None, "a concrete profile states each node type's cores and memory"
    return value


def _kind_of(gpus) -> str:
    return "GPU " if gpus else ""


def _memory_per_node(spec: JobSpec, cores: int) -> Optional[int]:
    res = spec.resources
    if res.mem_mb is not None:
        return res.mem_mb
    if res.mem_per_cpu_mb is not None:
        return res.mem_per_cpu_mb * cores
    return None


def _memory_asked(spec: JobSpec) -> bool:
    """Whether the spec sets the memory to an amount of its own (``mem: node``, all of each node's, is not one)."""
    return bool(spec.resources.mem_mb) or spec.resources.mem_per_cpu_mb is not None


def _memory_directive(spec: JobSpec, profile: SiteProfile, findings: Findings) -> Optional[Tuple[str, str]]:
    res = spec.resources
    if res.mem_mb is not None:
        directive = ("--mem", format_size(res.mem_mb) if res.mem_mb else "0")   # mem: node, all of each node's
    elif res.mem_per_cpu_mb is not None:
        directive = ("--mem-per-cpu", format_size(res.mem_per_cpu_mb))
    else:
        return None
    if profile.scheduling.mem_request is False:
        field = "resources.mem" if res.mem_mb is not None else "resources.mem_per_cpu"
        findings.error(field, f"{profile.name} gives every job whole nodes with all their memory; "
                              "memory requests are ignored there: remove it")
        return None
    return directive


def _check_cores_per_gpu(spec, gpus: Optional[GpuChoice], cores: int, node_types, findings: Findings) -> None:
    if not gpus or not node_types:
        return
    advice = min((t.gpus.max_cores_per_gpu for t in node_types if t.gpus.max_cores_per_gpu), default=None)
    if advice and cores > advice * gpus.count:
        findings.warn("resources.cpus_per_task", f"{cores} cores for {gpus.count} GPU(s) is above the site's advice of "
                      f"{advice} cores per GPU; ask at most {advice * gpus.count} so that other GPUs on the node stay usable")


def _launcher(spec: JobSpec, profile: SiteProfile, findings: Findings) -> Tuple[Optional[Launcher], Tuple[ScriptWord, ...]]:
    """The launcher (launchers.LAUNCHERS) and its launch prefix, whose counts are read from SLURM at run time (from_slurm)."""
    kind = kind_of(spec)
    allowed = kind.launchers
    name = spec.launch.launcher or _default_launcher(spec, profile, allowed)
    if name not in allowed:
        findings.error("launch.launcher", f"kind {spec.kind!r} cannot use {name!r}; it can use {', '.join(allowed)}")
        return None, ()
    launcher = LAUNCHERS[name]
    if launcher.starts_processes:   # a kind run directly may start its own step; the check's parser is not imported for it
        from slurmkit.resolve.nested_launch import nested_launcher_finding

        nested = nested_launcher_finding(kind, name, _payload(spec), "launch.shell" if spec.launch.shell else "launch.command")
        if nested:
            findings.error(*nested)
    return launcher, launcher.words(kind, profile, mpi_flavour(spec.environment.modules, profile))


def _asks_a_copy_per_task(spec: JobSpec) -> bool:
    """The spec names a launcher that runs its command once per task: a one-process kind's
    extra tasks or GPUs then each get a copy, which the user asked for."""
    return spec.launch.launcher is not None and LAUNCHERS[spec.launch.launcher].runs_a_copy_per_task


def _default_launcher(spec: JobSpec, profile: SiteProfile, allowed: Tuple[str, ...]) -> str:
    if _single_process(spec):
        return "direct"
    if kind_of(spec).mpi_ranks and profile.launch.default in allowed:
        return profile.launch.default
    return allowed[0]


def _array(spec: JobSpec, profile: SiteProfile, findings: Findings) -> Optional[ArrayPlan]:
    if spec.array is None:
        return None
    names = [name for name, _ in spec.array.parameters]
    size = limits.array_size(spec.array.parameters)  # the grid is built only once it is known to fit
    limit = profile.scheduling.max_array_size
    if limit and size > limit:   # submit splits it (arraysplit.py): said, not refused
        parts = len(part_sizes(size, limit))
        findings.warn("array.parameters", f"{size} tasks are more than {profile.name}'s largest array ({limit}): submit "
                                          f"splits the sweep into {parts} arrays of at most {limit} tasks, followed as one job; "
                                          f"$SLURM_ARRAY_TASK_ID counts from 0 in each, so name a task's files by its "
                                          f"parameters or by $(({OFFSET_VARIABLE} + SLURM_ARRAY_TASK_ID))")
    jobs = profile.scheduling.max_jobs_per_user
    if jobs and size > jobs:
        findings.error("array.parameters", f"{size} tasks: each array task counts as a job "
                                           f"and {profile.name} allows {jobs} queued per user")
    elif jobs and size > jobs // 2:   # the user's other queued jobs count too: unknown offline
        findings.warn("array.parameters", f"{size} tasks: each array task counts as a job and {profile.name} allows {jobs} queued "
                                          f"or running per user, your other jobs included, which slurmkit cannot see before "
                                          f"submitting: with more than {jobs - size} others queued, sbatch refuses the array")
    too_many = limits.array_cap_finding(size, profile.name, limits.array_cap(limit, jobs))
    findings.extend(Finding(*f) for f in too_many)
    if too_many or (jobs and size > jobs):
        return None
    points = list(itertools.product(*(values for _, values in spec.array.parameters)))
    columns = tuple(zip(*points))
    ids = _array_ids(spec, limit, findings)
    if ids is None:
        return None
    taken = RESERVED_VARIABLES | RUNTIME_NAMES | set(READERS) | {name for name, _ in spec.environment.variables} \
        | assigned_names(spec.environment.setup) | {OFFSET_VARIABLE}
    return ArrayPlan(tuple(zip(names, columns)), size, ids, spec.array.indices,
                     list_names(names, taken), exported(names, spec.launch.command))


def _array_ids(spec: JobSpec, limit: Optional[int], findings: Findings) -> Optional[Tuple[int, ...]]:
    """SLURM's task ids where array.indices gives them (the reader has checked one a point);
    SLURM refuses an id at or above MaxArraySize, so the profile's is the bound."""
    from slurmkit.core.array_ids import array_ids

    if spec.array is None or spec.array.indices is None:
        return ()
    ids = array_ids(spec.array.indices)
    if limit and ids[-1] >= limit:
        findings.error("array.indices", f"task id {ids[-1]} is not below the profile's largest array size ({limit}), which "
                                        "SLURM refuses: use smaller ids")
        return None
    return ids


def _payload(spec: JobSpec) -> Sequence[str]:
    """The payload's argv; for a ``launch.shell`` line the first command of it, as written."""
    return split_at_operators(spec.launch.shell)[0].split() if spec.launch.shell else spec.launch.command


def _modules(spec: JobSpec, profile: SiteProfile, gpus: Optional[GpuChoice], findings: Findings) -> Tuple[str, ...]:
    software = profile.software
    user = list(spec.environment.modules)
    if software.module_system in (None, "none"):
        if user:
            findings.error("environment.modules", f"{profile.name} has no module system; remove the modules")
        return ()
    if (spec.environment.venv or runs_python(_payload(spec))) and not any(m.split("/")[0] == "python" for m in user) \
            and software.modules.get("python"):
        user.append(software.modules["python"])  # the site's python, not the OS one (the Alliance Python page)
    if gpus and uses_tensorflow(spec) and not any(m.split("/")[0] == "cuda" for m in user):
        user.append(_tensorflow_cuda(profile, findings))
    user += _build_modules(spec, profile, gpus, user, findings)
    if kind_of(spec).runs_task_file:
        from slurmkit.resolve.manytasks import parallel_module  # beside this module: it reads resolve's path rules
        user += parallel_module(profile, user)
    base = list(software.preload)
    if software.stdenv and not any(m.split("/")[0] == software.stdenv.split("/")[0] for m in user):
        base.append(software.stdenv)
    stacks = _stack_families(software)
    return tuple(dict.fromkeys(base + sorted(user, key=lambda module: _load_order(module, stacks))))


def _tensorflow_cuda(profile: SiteProfile, findings: Findings) -> str:
    """The cuda module TensorFlow on GPUs loads (the TensorFlow page loads cuda; StdEnv/2023 does
    not): the version the site's profile documents. Where it documents none, the script can only
    load Lmod's default, which no page states and a change to the stack may move: a warning that
    names the versions documented for the site's standard environment, so that the user pins one."""
    software = profile.software
    if software.modules.get("cuda"):
        return software.modules["cuda"]
    versions = [f"cuda/{v}" for v in modulecat.families(software.catalogue).get("cuda", [])]
    known = f" ({software.stdenv} pages load {', '.join(versions)})" if versions and software.stdenv else ""
    findings.warn("environment.modules", f"TensorFlow on GPUs needs the cuda module, and {profile.name}'s profile names no "
                  "version: the script loads Lmod's default cuda, which no page states and which a change to the stack may "
                  f"move; add cuda/VERSION to environment.modules{known}")
    return "cuda"


#: Module families that others are built under in the Alliance's Lmod hierarchy (compiler
#: branches with MPI or CUDA sub-branches: Standard software environments): loaded first, so
#: that ``nccl`` or ``cudnn`` is found when its turn comes (the order is otherwise the user's).
HIERARCHY_ROOTS = ("gcc", "intel", "cuda")


def _load_order(module: str, stacks: FrozenSet[str] = frozenset()) -> int:
    """A stack first (a StdEnv the user names, the site's own stack and its base layer): loading
    one replaces the compiler loaded before it (StdEnv/2023 swaps intel for gcc/12.3, and an Intel
    build is then not found); then the hierarchy's roots; then the rest, in the user's order."""
    family = module.split("/")[0]
    return -1 if family in stacks else 0 if family in HIERARCHY_ROOTS else 1


def _stack_families(software: Software) -> FrozenSet[str]:
    """The module families that are stacks on this site: its StdEnv, what it preloads, its old stacks and their bases."""
    names = [software.stdenv or "", *software.preload, *software.old_stacks]
    names += [base for stack in software.old_stacks.values() for base in stack.base]
    return frozenset(name.split("/")[0] for name in names if name)


def uses_tensorflow(spec: JobSpec) -> bool:
    """Whether the job runs TensorFlow: its kind or framework says so, or its venv installs it."""
    venv = spec.environment.venv
    packages = venv.packages if venv else ()
    return _framework(spec) == "tensorflow" or any(package_name(p).startswith("tensorflow") for p in packages)


def _module_environment(spec: JobSpec, gpus: Optional[GpuChoice], modules: Tuple[str, ...]) -> Tuple[Tuple[str, str, str], ...]:
    """Variables read from what the modules set, so exported after ``module load``: XLA finds
    CUDA's libdevice through ``--xla_gpu_cuda_data_dir`` (the Alliance TensorFlow page's
    ``XLA_FLAGS=--xla_gpu_cuda_data_dir=$CUDA_HOME``). The user's own XLA_FLAGS win."""
    if not (gpus and uses_tensorflow(spec)) or "XLA_FLAGS" in dict(spec.environment.variables):
        return ()
    if not any(m.split("/")[0] == "cuda" for m in modules):
        return ()
    return (("XLA_FLAGS", '"--xla_gpu_cuda_data_dir=${CUDA_HOME}"',
             "XLA finds CUDA's libdevice in the cuda module (https://docs.alliancecan.ca/wiki/TensorFlow/en)."),)


def _venv_again(venv: Optional[VenvPlan], setup: Sequence[str]) -> str:
    """The virtualenv to enter again after set-up lines that load modules (Lmod puts them first
    on PATH), by a path that holds wherever those lines went (``cd pages``): a relative one is
    the job folder's, where it was made and first entered; "" where no line loads modules."""
    if venv is None or not any(_MODULE_COMMAND.search(line) for line in setup):
        return ""
    return venv.path if venv.path.startswith(("/", "$", "~")) else "${SLURM_SUBMIT_DIR}/" + venv.path


def _venv(spec: JobSpec, profile: SiteProfile, modules=(), local=None) -> Optional[VenvPlan]:
    """The job's virtualenv; where the site builds them on the login node, the one built there (loginenv.py)."""
    venv = spec.environment.venv
    if venv is None:
        return None
    wheelhouse = bool(profile.software.virtualenv.wheelhouse)
    command = profile.software.virtualenv.command or DEFAULT_VENV_COMMAND
    plan = VenvPlan(
        path=_home(venv.path) or "$SLURM_TMPDIR/env",
        create=tuple(shlex.split(command)),
        pip_options=("--no-index",) if wheelhouse else (),
        requirements=_home(venv.requirements),
        packages=venv.packages,
        reuse_existing=venv.path is not None,
        upgrade_pip=wheelhouse and venv.path is None,
        nodes=spec.resources.nodes,
    )
    if profile.rules.env_build is None:
        return plan
    from slurmkit.resolve.loginenv import on_login_node  # here: only sites that build environments on the login node need it

    return on_login_node(plan, spec, profile, modules, local)


def _environment(spec: JobSpec, profile: SiteProfile, shape: Tuple[int, int], runner: Optional[Launcher],
                 gpus: Optional[GpuChoice], node_types: Tuple[NodeType, ...], one_process: bool = False
                 ) -> Tuple[Tuple[str, ScriptWord], ...]:
    """``one_process``: the job's cores are one process's, shared by tasks of ``shape[1]`` cores each."""
    threads = str(shape[1]) if one_process else from_slurm("{cpus_per_task}")
    env: Dict[str, ScriptWord] = {"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
    kind = kind_of(spec)
    if kind.pins_threads and not _unpinned(spec):
        env.update(OMP_PLACES="cores", OMP_PROC_BIND="close")
    if kind.site_launch_env:
        env.update(profile.launch.env)
    if kind.distributed:
        env.update(_distributed_environment(spec, shape, gpus, node_types))
    if kind.launches_per_node:
        env.update(accelerate_environment(spec.launch.mixed_precision))
    if not gpus:
        env.update(kind.cpu_environment)
    if runner and runner.starts_mpi_ranks:
        env.update((k, from_slurm(v)) for k, v in mpirun_binding(mpi_flavour(spec.environment.modules, profile))[1].items())
    env.update(spec.environment.variables)
    return tuple(env.items())


def _concurrent_payload(spec: JobSpec) -> str:
    """How the job's own lines (setup, then the launch) start several programs at once
    (shellwords.concurrent_starts), else "": OpenMP's pinning, exported before both, would put
    every program's threads on the same cores of the job."""
    return next(filter(None, map(concurrent_starts, (*spec.environment.setup, _launch_text(spec)))), "")


def _launch_text(spec: JobSpec) -> str:
    return spec.launch.shell if spec.launch.shell is not None else " ".join(map(shlex.quote, spec.launch.command))


def _unpinned(spec: JobSpec) -> str:
    """Why OpenMP's pinning is left unset for a threaded job, or "": several programs at once
    (_concurrent_payload), or an interpreter that may start worker processes (programs.interpreter_in)."""
    return _concurrent_payload(spec) or programs.interpreter_in(_launch_text(spec))


def _thread_note(spec: JobSpec) -> Tuple[str, ...]:
    """The script's lines on threads left unpinned (see _unpinned)."""
    if not kind_of(spec).pins_threads:
        return ()
    how = _concurrent_payload(spec)
    if how:
        return (f"The job runs several programs at once ({how}): OMP_PLACES and OMP_PROC_BIND are left",
                "unset, as each program would pin its threads to the same cores; each starts OMP_NUM_THREADS threads.")
    interpreter = programs.interpreter_in(_launch_text(spec))
    return (f"OMP_PLACES and OMP_PROC_BIND are left unset: the worker processes {interpreter} may start would",
            "share the core OpenMP binds its first thread to.") if interpreter else ()


def _distributed_environment(spec: JobSpec, shape: Tuple[int, int], gpus: Optional[GpuChoice],
                             node_types: Tuple[NodeType, ...]) -> Dict[str, ScriptWord]:
    """Threads per process and the framework's own thread pools; for PyTorch on GPUs, the
    error handling the Alliance PyTorch page means (its TORCH_NCCL_ASYNC_HANDLING is a typo
    that PyTorch never reads). Each name is one its program reads: see variables.READERS."""
    env: Dict[str, ScriptWord] = {"PYTHONUNBUFFERED": "1"}   # ranks' lines reach the log as they happen, as `python -u` does
    tasks, cpus = shape
    tensorflow = _framework(spec) == "tensorflow"
    if tensorflow:
        sockets = min((t.sockets for t in node_types if t.sockets), default=1)
        # Per task, as OMP_NUM_THREADS: intra-op threads on all its cores, inter-op threads one per
        # socket its cores span (a node's sockets shared by its tasks; SLURM does not know
        # sockets, so it stays a number). Intel's advice for one process per node, taken per task.
        spanned = max(1, sockets // max(1, tasks))
        env.update(TF_NUM_INTRAOP_THREADS=from_slurm("{cpus_per_task}"), TF_NUM_INTEROP_THREADS=str(max(1, min(spanned, cpus))))
        if not gpus:  # Intel's advice for TensorFlow on CPUs (oneDNN/OpenMP threads)
            env.update(KMP_BLOCKTIME="0", KMP_AFFINITY="granularity=fine,compact,1,0")
    # Only torch.distributed's NCCL process group reads it (Horovod has its own); 1: a rank that
    # meets an NCCL error aborts and ends, rather than hang until the time limit.
    if gpus and kind_of(spec).torch_nccl_errors and not tensorflow:
        env["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1"
    return env


#: Why a variable slurmkit sets has the value it has, for a comment after its export.
_ENVIRONMENT_NOTES = {
    "TORCH_NCCL_ASYNC_ERROR_HANDLING": "a failed or timed-out NCCL call aborts the ranks instead of hanging",
    "TF_NUM_INTEROP_THREADS": "ops run one at a time, each on all the task's cores",
}


def _environment_notes(spec: JobSpec) -> Tuple[Tuple[str, str], ...]:
    """The notes of the variables slurmkit set (not those the spec sets itself)."""
    return tuple((name, note) for name, note in _ENVIRONMENT_NOTES.items() if name not in spec.environment.variables)


def _offline_note(profile: SiteProfile) -> str:
    """Where compute nodes have no internet, what a user adding a download to the job must know,
    beside the pip lines: wheels come from the wheelhouse, and models and data from a login node."""
    rule = profile.rules.no_internet
    if profile.storage.internet_on_compute is not False or rule is None:
        return ""
    source = f" ({rule.source[0]})" if rule.source else ""
    return f"{profile.name}'s compute nodes have no internet: fetch data on a login node{source}."


def _fabric_notes(spec: JobSpec, profile: SiteProfile, gpus: Optional[GpuChoice]) -> Tuple[str, ...]:
    """A GPU job across nodes on Ethernet: the note beside the rendezvous (the site's advice of one
    switch is an optional directive in the header: _optional_directives)."""
    ethernet = _fabric_note(spec, profile, gpus)
    return (ethernet,) if ethernet else ()


def _fabric_note(spec: JobSpec, profile: SiteProfile, gpus: Optional[GpuChoice]) -> str:
    """What a GPU job across nodes should know of an Ethernet fabric (not InfiniBand) for which the
    site gives no NCCL setting: that NCCL then picks its own transport, and that none was left out."""
    fabric = profile.launch.interconnect
    if not gpus or spec.resources.nodes < 2 or fabric.fabric != "ethernet" or any(k.startswith("NCCL_") for k in profile.launch.env):
        return ""
    return f"{profile.name}'s nodes are on Ethernet, with no NCCL setting on its page: NCCL_DEBUG=INFO shows NCCL's pick"


def _distributed(spec: JobSpec, profile: SiteProfile, tasks: int, runner: Optional[Launcher], gpus: Optional[GpuChoice],
                 findings: Findings) -> Optional[DistributedPlan]:
    kind = kind_of(spec)
    gpu_rank = _gpu_rank(spec, profile, runner, gpus, findings)
    if kind.distributed and runner is not None and runner.leaves_ranks_unbound:   # torchrun: its own ranks and rendezvous
        return DistributedPlan(tasks_per_node=tasks, bind_ranks=True, gpu_rank=gpu_rank)
    if kind.rendezvous and (runner is None or runner.starts_processes):
        lead = requeue_lead(spec.resources.time_s, _asked_lead(spec)) if kind.requeues_on_signal else 0
        # Alone on one GPU (Accelerate): no ranks, so that it runs one process with no process group,
        # as `accelerate launch` without --multi_gpu did (Accelerate takes LOCAL_RANK for several).
        alone = kind.alone_on_one_gpu and spec.resources.nodes * tasks == 1
        return DistributedPlan(rendezvous=True, ranks_from_slurm=kind.ranks_from_slurm and not alone, tf_config=kind.tf_config,
                               tasks_per_node=tasks, nodes=spec.resources.nodes, gpu_rank=gpu_rank, master_env=kind.master_env,
                               requeue_lead_s=lead)
    if gpu_rank:
        return DistributedPlan(tasks_per_node=tasks, gpu_rank=gpu_rank)
    return None


def _gpu_rank(spec: JobSpec, profile: SiteProfile, runner: Optional[Launcher], gpus: Optional[GpuChoice],
              findings: Findings) -> str:
    """Which variable picks each process's GPU, where a kind starts one process per GPU and each
    process is to see only its own (``launch.gpu_view: own``); "" where it sees every GPU of its node.

    SLURM gives every task of a plain ``srun`` step, and every rank mpirun or torchrun starts, all
    the GPUs of its node (CUDA_VISIBLE_DEVICES=0,1 on the local cluster, Slurm 22.05, measured).
    TensorFlow then takes every GPU it sees in each worker; the Alliance TensorFlow page avoids
    that with SlurmClusterResolver, which sets CUDA_VISIBLE_DEVICES to the task's own GPU by its
    place on the node: so tf-multiworker workers see their own GPU by default. PyTorch and Horovod
    pick a GPU by local rank among all the node's GPUs (``torch.cuda.set_device(local_rank)`` in
    the Alliance PyTorch page's DDP example, ``hvd.local_rank()`` in Horovod's): with only one
    GPU in view, device ``local_rank`` > 0 does not exist ("invalid device ordinal"), so those
    kinds keep the node's GPUs in view by default and ``gpu_view: own`` is asked for by code that
    uses device 0. The per-task wrapper keeps the entry of the node's CUDA_VISIBLE_DEVICES at the
    process's local rank. Slurm's own binding was weighed and not taken: ``srun --gpus-per-task=1``
    is refused when the job asked typed GPUs ("Invalid GRES specification", measured on 22.05),
    and ``--gpu-bind`` reaches srun tasks only, not the ranks of mpirun or torchrun. NCCL keeps P2P
    between processes that each see one GPU (measured on 2 H100s: docs/distributed.md)."""
    if not gpus or runner is None or not runner.starts_processes or not kind_of(spec).distributed:
        return ""   # no GPUs, or one process for all of them (multigpu "direct": TensorFlow's MirroredStrategy)
    if (spec.launch.gpu_view or kind_of(spec).gpu_view_default) == "node":
        return ""
    if runner.local_rank_variable:
        return runner.local_rank_variable
    flavour = mpi_flavour(spec.environment.modules, profile)
    if flavour not in MPI_LOCAL_RANK:
        findings.warn("launch.launcher", f"slurmkit does not know where {flavour}'s mpirun puts a rank's place on its node, so every rank "
                      "sees every GPU of its node; use launcher: srun to give each rank its own GPU")
        return ""
    return MPI_LOCAL_RANK[flavour]


MPI_PAGE = "https://docs.alliancecan.ca/wiki/Advanced_MPI_scheduling/en"


def _ranks_by_count(spec: JobSpec, profile: SiteProfile, gpus: Optional[GpuChoice], memory, runner: Optional[Launcher]) -> bool:
    """MPI ranks asked by count (--ntasks), which SLURM may place on one node or several, as
    Advanced_MPI_scheduling advises: for a kind that asks so, one node's worth of CPU ranks that
    a launcher starts, on a site that shares nodes, with memory per rank. Memory per node (--mem)
    keeps one node: it means nothing for ranks SLURM may split unevenly (a comment says so)."""
    kind = kind_of(spec)
    return (kind.ranks_by_count and spec.resources.nodes == 1 and gpus is None and not profile.scheduling.whole_node
            and runner is not None and runner.starts_processes and (memory is None or memory[0] == "--mem-per-cpu")
            and not _own_lines_use_node_disk(spec))


#: $SLURM_TMPDIR ($TMPDIR in an Alliance job): each node's own disk
_NODE_DISK = re.compile(r"\$\{?(?:SLURM_TMPDIR|TMPDIR)\b")


def _own_lines_use_node_disk(spec: JobSpec) -> bool:
    """Whether the job's own lines (environment.setup, launch.shell) use $SLURM_TMPDIR: what they
    put there (``cp in.dat $SLURM_TMPDIR``, ``cd $SLURM_TMPDIR``) is on the first node only, so
    ranks that SLURM placed on another would not find it. slurmkit's own staging reaches every node."""
    lines = list(spec.environment.setup) + [spec.launch.shell or ""]
    return any(_NODE_DISK.search(line) for line in lines)


def _rank_notes(spec: JobSpec, by_count: bool, memory) -> Tuple[Tuple[str, str], ...]:
    """Why the ranks are asked the way they are, above the line that asks them."""
    if by_count:
        staged = ", and each stages the inputs below" if spec.stage and spec.stage.inputs else ""
        return (("--ntasks", f"Ranks by count, memory per rank: SLURM places them on one node or several{staged} "
                             f"({MPI_PAGE})."),)
    if kind_of(spec).ranks_by_count and spec.resources.nodes == 1 and memory and memory[0] == "--mem":
        return (("--nodes", "One node, as --mem is memory per node; for ranks that SLURM may place on several nodes, "
                            f"ask mem_per_cpu instead ({MPI_PAGE})."),)
    if kind_of(spec).ranks_by_count and spec.resources.nodes == 1 and _own_lines_use_node_disk(spec):
        return (("--nodes", "One node: the job's own lines use $SLURM_TMPDIR, each node's own disk, which ranks on "
                            f"another node would not see ({MPI_PAGE})."),)
    return ()


def _one_process(tasks) -> bool:
    """GNU Parallel on one node: one task with every core (manytasks.py)."""
    return bool(tasks and tasks.one_node)


def _shape_directives(nodes: int, tasks: int, cpus: int, by_count: bool, one_process: bool) -> List[Tuple[str, str]]:
    """How the job's cores are asked: MPI ranks by count (SLURM places them: _ranks_by_count), one
    process with every core (GNU Parallel on one node), or nodes x tasks per node x cores."""
    if by_count:
        return [("--ntasks", str(nodes * tasks)), ("--cpus-per-task", str(cpus))]
    if one_process:
        return [("--nodes", str(nodes)), ("--cpus-per-task", str(tasks * cpus))]
    return [("--nodes", str(nodes)), ("--ntasks-per-node", str(tasks)), ("--cpus-per-task", str(cpus))]


def _mail_directives(spec: JobSpec) -> List[Tuple[str, str]]:
    """No user: SLURM mails the address registered with the account (the Alliance's CCDB one);
    no events: no --mail-type, so SLURM sends no mail."""
    if not spec.mail:
        return []
    return ([("--mail-user", spec.mail.user)] if spec.mail.user else []) + \
        ([("--mail-type", ",".join(spec.mail.events))] if spec.mail.events else [])


def _directives(spec: JobSpec, account, tasks: int, cpus: int, memory, gpus: Optional[GpuChoice], array: Optional[ArrayPlan],
                stage: Optional[StagePlan] = None, chain: Optional[ChainPlan] = None, tmp_mb: Optional[int] = None,
                by_count: bool = False, one_process: bool = False):
    """``by_count``: MPI ranks by --ntasks; ``one_process``: one task, every core its own (GNU Parallel on one node)."""
    res = spec.resources
    pairs: List[Tuple[str, str]] = [("--job-name", spec.name)]
    if account:
        pairs.append(("--account", account))
    pairs.append(("--time", format_slurm_time(chain.link_time_s if chain else res.time_s)))
    pairs += _shape_directives(res.nodes, tasks, cpus, by_count, one_process)
    if memory:
        pairs.append(memory)
    if gpus:
        pairs.append(("--gpus-per-node", gpus.spelling))
    if tmp_mb is not None:
        pairs.append(("--tmp", format_size(tmp_mb)))
    if array and spec.array:   # one without the other never happens: _array plans only the spec's array
        throttle = f"%{spec.array.throttle}" if spec.array.throttle else ""
        pairs.append(("--array", f"{array.indices or f'0-{array.size - 1}'}{throttle}"))
    pairs += _log_directives(spec, array is not None and spec.array is not None)
    if spec.dependencies:
        pairs.append(("--dependency", ",".join(dependency(d.type, d.job_ids) for d in spec.dependencies)))
    pairs += _mail_directives(spec)
    if stage and stage.lead_s:
        pairs.append(("--signal", f"B:USR1@{stage.lead_s}"))
    if kind_of(spec).requeues_on_signal:
        pairs += requeue_directives(chain.link_time_s if chain else res.time_s, _asked_lead(spec))
    for extra in spec.extra_directives:
        flag, _, value = extra.partition("=")
        pairs.append((flag, value))
    return tuple(pairs)


def _log_directives(spec: JobSpec, array: bool) -> List[Tuple[str, str]]:
    """--output (and --error) as the spec names them, quoted (sbatch's #SBATCH parser takes
    shell quotes); else slurmkit's name, which ``slurmkit submit`` replaces with its own folder."""
    if spec.logs is None:
        return [("--output", "%x-%A_%a.out" if array else "%x-%j.out")]
    pairs = [("--output", shlex.quote(spec.logs.output))]
    return pairs + ([("--error", shlex.quote(spec.logs.error))] if spec.logs.error else [])


# ------------------------------------------------------------------------------------ staging

DEFAULT_LEAD_S = 300
#: how much before its lead SLURM may send --signal (sbatch(1): its time-limit checks run every
#: 30 s; the local Slurm 22.05 signalled jobs of --time=1 --signal=B:USR1@30 3 to 26 s after
#: they started).
SIGNAL_EARLY_S = 60
#: at most this long for a payload to end after the TERM that follows SLURM's own (scancel, the
#: limit), before it is killed for the copy: SLURM's KillWait (30 s unless a site sets it) is
#: what both have before SLURM kills everything.
EXIT_STOP_S = 10


def stop_times(lead_s: int) -> Tuple[int, int]:
    """(after USR1, on any other exit) how long a payload has to end after TERM before it is
    killed, so that the final copy is of files that no longer change: half the lead after USR1
    (the other half is the copy's), at most EXIT_STOP_S after SLURM's TERM."""
    stop_s = max(1, lead_s // 2)
    return stop_s, min(stop_s, EXIT_STOP_S)


def _extraction_parallelism(profile: SiteProfile) -> Union[str, FromSlurm]:
    """Shards extracted at once: all the node's cores on a RAM disk (read at run time, so that a
    hand-edited #SBATCH line changes it too), one at a time on a disk.

    Measured with bench/staging.py (20,000 files of 40 KB, 2 shards, 2 cores, cold cache):
    parallel extraction took 0.79 s against 1.44 s for one archive on tmpfs. On ext4, two
    extractors at once were bimodal (0.9-1.3 s or 1.9-3.0 s; median 2.08 s over 10 runs,
    each into a fresh folder) where one after the other was steady (1.4-2.2 s; median 1.62 s):
    they contend for the journal."""
    return NODE_CORES if _on_ramdisk(profile) else "1"


def _on_ramdisk(profile: SiteProfile) -> bool:
    tmpdir = profile.storage.slurm_tmpdir
    return bool(tmpdir and tmpdir.kind == "ramdisk")


def _stage(spec: JobSpec, parallel: Union[str, FromSlurm], findings: Findings,
           chain: Optional[ChainPlan] = None, tmpdir: Optional[SlurmTmpdir] = None, ranks_by_count: bool = False) -> Optional[StagePlan]:
    """``ranks_by_count``: SLURM may place the job on several nodes (_ranks_by_count), so each stages its own inputs."""
    stage = spec.stage
    if stage is None:
        return None
    several_nodes = ranks_by_count or spec.resources.nodes > 1
    steps = tuple(_stage_step(index, item.source, item.to, several_nodes, findings) for index, item in enumerate(stage.inputs))
    per_task = "/$SLURM_ARRAY_TASK_ID" if spec.array else ""
    for index, out in enumerate(stage.outputs):
        _check_destination(out.to, f"stage.outputs.{index}.to", findings)
    outputs = tuple(("$SLURM_TMPDIR/" + _literal(out.source), _destination(out.to)) for out in stage.outputs)
    checkpoint = None
    if stage.checkpoint:
        c = stage.checkpoint
        _check_destination(c.to, "stage.checkpoint.to", findings)
        checkpoint = ("$SLURM_TMPDIR/" + _literal(c.source), _destination(c.to) + per_task, c.every_s)
    lead = 0
    if not (outputs or checkpoint) and stage.lead_s is not None and not kind_of(spec).requeues_on_signal:
        findings.warn("stage.lead", "nothing is copied back (no stage.outputs or stage.checkpoint), so no signal is asked for "
                      "and the lead does nothing; remove it, or add what to save")
    if outputs or checkpoint:
        time_s = chain.link_time_s if chain else spec.resources.time_s
        lead = stage.lead_s if stage.lead_s is not None else min(DEFAULT_LEAD_S, max(60, time_s // 10))
        if lead >= time_s:
            findings.error("stage.lead", f"copying back {lead}s before the end leaves no time to run in {time_s}s; "
                           "ask more time or a shorter lead")
        elif lead + SIGNAL_EARLY_S >= time_s:
            findings.warn("stage.lead", f"SLURM may send the signal to save up to {SIGNAL_EARLY_S}s before the lead (sbatch "
                          f"--signal), so in {time_s}s with a {lead}s lead the payload may be stopped as it starts, or "
                          f"never start; ask more than {lead + SIGNAL_EARLY_S}s, or a shorter lead")
    stop_s, exit_stop_s = stop_times(lead) if lead else (0, 0)
    return StagePlan(steps, several_nodes, spec.resources.nodes, parallel, outputs, checkpoint, lead, stop_s, exit_stop_s,
                     _output_folders(out.source for out in stage.outputs), **_tmpdir_words(tmpdir))


def _tmpdir_on(tmpdir: Optional[SlurmTmpdir], node_types: Sequence[NodeType]) -> Optional[SlurmTmpdir]:
    """The site's $SLURM_TMPDIR on the nodes the job can land on: where they all have one kind of
    local disk, that kind (Rorqual's GPU nodes have NVMe where its default nodes have a SATA SSD);
    else the site's own word. A RAM disk stays one."""
    kinds = {t.local_disk.kind for t in node_types if t.local_disk and t.local_disk.kind}
    if tmpdir is None or tmpdir.kind == "ramdisk" or len(kinds) != 1 or None in (t.local_disk for t in node_types):
        return tmpdir
    return tmpdir._replace(kind=kinds.pop())


def _more_room(profile: SiteProfile, gpus: Optional[GpuChoice]) -> Tuple[str, str]:
    """How to ask a bigger $SLURM_TMPDIR where the site's --tmp reaches nodes with more local disk
    (Rorqual): the directive at its smallest, and why, with the range and the page; for a CPU
    job, also how few of the CPU nodes have a disk above the rest's."""
    room = profile.rules.tmp_request
    if room is None:
        return ("", "")
    source = f" ({room.source[0]})" if room.source else ""
    return (f"--tmp={format_size(room.min_mib)}",
            f"a larger $SLURM_TMPDIR, {format_size(room.min_mib)} to {format_size(room.max_mib)}"
            f"{'' if gpus else _few_big_disks(profile)}{source}")


def _few_big_disks(profile: SiteProfile) -> str:
    """'; above 480G only 8 of the CPU nodes' where the CPU nodes' local disks differ (Rorqual:
    670 + 8 with 480G, 8 with 3840G), so that a CPU job asking more knows it waits for few nodes."""
    disks = [(t.local_disk.size_mib, t.count or 0) for t in profile.node_types
             if not t.gpus and t.local_disk and t.local_disk.size_mib and not t.retired_on]
    sizes = sorted({size for size, _ in disks})
    if len(sizes) < 2:
        return ""
    few = sum(count for size, count in disks if size > sizes[-2])
    return f"; above {format_size(sizes[-2])} only {few} of the CPU nodes" if few else ""


def _optional_directives(spec: JobSpec, profile: SiteProfile, gpus: Optional[GpuChoice], stage) -> Tuple[Tuple[str, str], ...]:
    """The site's advice a user may switch on, written as `##SBATCH` lines (sbatch reads none):
    a larger $SLURM_TMPDIR where the job stages inputs (Rorqual), one network switch for a
    tightly coupled GPU job across nodes (Nibi: it can lengthen the wait, so it is left off)."""
    found = []
    if stage is not None and stage.inputs and _more_room(profile, gpus)[0]:
        found.append(_more_room(profile, gpus))
    one_switch = profile.launch.interconnect.one_switch
    if gpus and spec.resources.nodes > 1 and one_switch:
        found.append(("--switches=1", f"tightly coupled: one switch ({one_switch})"))
    return tuple(found)


def _tmpdir_words(tmpdir: Optional[SlurmTmpdir]) -> Dict[str, str]:
    """What the script says $SLURM_TMPDIR is, and the page it cites: the site's profile (a RAM
    disk on Trillium and Niagara, whose files are the job's memory), not one wording for all."""
    if tmpdir is None:
        return {}
    return {"tmpdir_words": tmpdir.words(), "tmpdir_source": tmpdir.source[0] if tmpdir.source else ""}


def _check_signal_directive(spec: JobSpec, stage, findings: Findings) -> None:
    """An extra --signal (or an abbreviation of it) where slurmkit writes its own for the copy
    back: the later directive wins, silently changing when the outputs are saved."""
    if not (stage and stage.lead_s):
        return
    from slurmkit.core.sanity import long_name

    for index, directive in enumerate(spec.extra_directives):
        if long_name(directive.partition("=")[0]) == "signal":
            findings.error(f"extra_directives.{index}", f"{directive!r} replaces the --signal=B:USR1@{stage.lead_s} slurmkit writes "
                           "to save the outputs before the time limit; use stage.lead to choose how long before")


#: signals the batch script survives: TERM has a trap in every script; these others do nothing by default
_BATCH_SURVIVES = frozenset(("TERM", "CHLD", "CONT", "URG", "WINCH"))
_SIGNAL_NUMBERS = {"1": "HUP", "2": "INT", "3": "QUIT", "9": "KILL", "10": "USR1", "12": "USR2", "14": "ALRM", "15": "TERM"}


def _check_batch_signal(spec: JobSpec, stage, findings: Findings) -> None:
    """An extra ``--signal=B:SIG@N`` that the batch script has no trap for: the batch shell would die
    N seconds early, the program with it, and no exit file would record the job's end. (Where
    slurmkit writes its own USR1, _check_signal_directive and _check_requeue_directives say so.)"""
    if (stage and stage.lead_s) or kind_of(spec).requeues_on_signal:
        return
    from slurmkit.core.sanity import long_name

    for index, directive in enumerate(spec.extra_directives):
        option, _, value = directive.partition("=")
        flags, _, rest = value.rpartition(":")
        name = rest.split("@")[0].upper().removeprefix("SIG")
        name = _SIGNAL_NUMBERS.get(name, name)
        if long_name(option) == "signal" and "B" in flags.upper() and name not in _BATCH_SURVIVES | _setup_traps(spec):
            findings.error(f"extra_directives.{index}", f"{directive!r}: the batch script has no handler for {name}, so it would "
                           "die of it before the time limit, your program with it, and no exit file would record the end; "
                           "to tell your program, drop 'B:' and run it under srun (launch.launcher: srun), whose steps SLURM signals")


#: ``trap ACTION SIGNAL...`` in a set-up line, with what follows the trap word
_TRAP = re.compile(r"(?:^|[;&|({\s])trap\s+(.*)", re.S)


def _setup_traps(spec: JobSpec) -> frozenset:
    """The signals the job's own set-up lines trap (``trap 'touch STOP' USR1``): the batch
    shell survives those, and their handler is the job's way to hear --signal=B:SIG."""
    names = set()
    for line in spec.environment.setup:
        for match in _TRAP.finditer(line):
            for word in re.findall(r"[A-Za-z0-9]+", match.group(1).rsplit("'", 1)[-1].rsplit('"', 1)[-1]):
                name = word.upper().removeprefix("SIG")
                names.add(_SIGNAL_NUMBERS.get(name, name))
    return frozenset(names)


def _asked_lead(spec: JobSpec) -> Optional[int]:
    """stage.lead, where the spec gives one: for a kind that requeues on the signal, how long
    before the limit the program is told to save."""
    return spec.stage.lead_s if spec.stage else None


def _check_requeue_directives(spec: JobSpec, time_s: int, findings: Findings) -> None:
    """An extra --signal, --requeue, --no-requeue or --open-mode where slurmkit writes its own for
    a kind that saves and requeues before the limit (Lightning): the later directive wins, and the
    save comes at another time, the job is not requeued, or the next run overwrites the log."""
    if not kind_of(spec).requeues_on_signal:
        return
    from slurmkit.core.sanity import long_name

    lead = _asked_lead(spec)
    if lead is not None and lead >= time_s:
        findings.error("stage.lead", f"telling the program to save {lead}s before the end leaves no time to run in {time_s}s; "
                       "ask more time or a shorter lead")
    own = {flag[2:]: f"{flag}={value}" if value else flag for flag, value in requeue_directives(time_s, lead)}
    own["no-requeue"] = "--requeue"
    for index, directive in enumerate(spec.extra_directives):
        name = long_name(directive.partition("=")[0])
        if name in own:
            verb = "repeats" if directive == own[name] else "contradicts"
            findings.error(f"extra_directives.{index}", f"{directive!r} {verb} the {own[name]} slurmkit writes for kind "
                           f"{kind_of(spec).name!r}, whose program saves a checkpoint on that signal and is requeued, "
                           "its log appended to; leave it out")


def _output_folders(sources) -> Tuple[str, ...]:
    """The folders a program writes its outputs into, made before it starts: an output named
    like a file (with a suffix: metrics.csv, logs/train.log) gets the folder it is in, any other
    (runs) is taken to be a folder and is made itself. $SLURM_TMPDIR itself is there already."""
    folders = []
    for source in sources:
        path = posixpath.normpath(source)
        folder = posixpath.dirname(path) if "." in posixpath.basename(path).lstrip(".") else path
        if folder not in ("", "."):
            folders.append("$SLURM_TMPDIR/" + _literal(folder))
    return tuple(dict.fromkeys(folders))


def _check_destination(to: str, field: str, findings: Findings) -> None:
    """A save is first copied whole beside its destination (DEST.partial-JOBID), and a checkpoint
    then replaces its destination whole, so a destination must be a path of its own: never the
    spec's folder, one above it, or /. (In an array, each task's checkpoint is
    DESTINATION/<task id>, so that no task replaces another's; outputs join one folder.)"""
    parts = [part for part in posixpath.normpath(to).split("/") if part not in ("", ".")]
    if all(part == ".." for part in parts):
        findings.error(field, f"{to!r} would be replaced whole by the output: "
                       "give it a folder of its own (e.g. results), not the spec's folder or one above it")
    elif re.fullmatch(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", posixpath.normpath("$HOME" + to[1:] if to[:2] in ("~", "~/") else to)):
        findings.error(field, f"{to!r} is a whole folder such as your home or scratch, which the output would replace "
                       f"or fill: give it a folder of its own inside it (e.g. {to.rstrip('/')}/results)")


def _stage_step(index: int, source: str, to: str, several_nodes: bool, findings: Findings) -> StageStep:
    target = "$SLURM_TMPDIR" + ("/" + _literal(to) if to else "")
    where = _from_submit_dir(source)
    name = source.rstrip("/").lower()
    if name.endswith(IMAGE_SUFFIXES):
        if not to:
            stem = PurePosixPath(source.rstrip("/")).stem
            findings.error(f"stage.inputs.{index}", f"a squashfs image is mounted on a folder of its own: "
                           f"give it one ({{from: {source}, to: {stem}}})")
        # A mount made inside a job step ends with that step, so several nodes extract instead.
        action = "extract-image" if several_nodes else "mount-image"
        return StageStep(action, where, target)   # the runtime copies it to the node and unmounts it at the end
    if name.endswith(PACK_SUFFIX):
        return StageStep("extract-shards", where, target)
    for suffix, options in TAR_SUFFIXES:
        if name.endswith(suffix):
            return StageStep("extract", where, target, options)
    return StageStep("copy-as" if to else "copy", where, target)


def _literal(path: str) -> str:
    """A user's path as a shell word of the plan: its ``$`` stay literal."""
    return path.replace("$", "$$")


def _other_home_findings(spec: JobSpec):
    from slurmkit.core.userpaths import other_home_findings  # here: only a spec with paths needs it

    return other_home_findings(spec)


def _home(path: Optional[str]) -> Optional[str]:
    """``~`` and ``~/...`` as ``$HOME``: venv and build-cache paths read as stage paths do (userpaths.with_home)."""
    from slurmkit.core.userpaths import with_home

    return with_home(path) if path else path


def _destination(to: str) -> str:
    """An output's or the checkpoint's ``to`` is the folder (or file) the copy becomes; a trailing
    ``/`` names the same folder, never a place inside it (cp's meaning): without it, the copy is
    made beside the destination (DEST.partial-JOBID), and a missing folder is made with its parents."""
    return _from_submit_dir(to.rstrip("/") or to)


def _from_submit_dir(path: str) -> str:
    """Relative paths are from the spec's folder, which is where slurmkit runs sbatch; ``~`` and
    ``$HOME``, ``$SCRATCH``, ... expand in the job, as in the user's shell (userpaths.py)."""
    from slurmkit.core.userpaths import in_job  # here: only a spec with stage paths needs it

    return in_job(path)


def _tasks(spec: JobSpec, shape: Tuple[int, int], findings: Findings):
    """Kind many-tasks: the task file and joblogs (slurmkit/resolve/manytasks.py)."""
    if spec.tasks is None:
        return None
    from slurmkit.resolve.manytasks import tasks_plan  # beside this module: it reads resolve's path rules

    return tasks_plan(spec, shape, findings)


# ------------------------------------------------------------------------------------- chains

CHAIN_MARKER = ".slurmkit-chain-done"


def _chain(spec: JobSpec, profile: SiteProfile, findings: Findings) -> Optional[ChainPlan]:
    """A chain when the spec asks for one, or when it is longer than the site allows and can resume."""
    limit = profile.scheduling.max_walltime_seconds
    longer = bool(limit and spec.resources.time_s > limit)
    if not (spec.resubmit or longer):
        return None
    checkpoint = spec.stage.checkpoint if spec.stage else None
    if spec.resubmit and kind_of(spec).requeues_on_signal:
        findings.error("resubmit", f"kind {kind_of(spec).name!r} requeues the job itself at each time limit (Lightning saves on "
                       "SIGUSR1, then the job is requeued and resumes from that checkpoint), as often as it takes: "
                       "remove resubmit")
        return None
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
    if limit and longer:
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
    findings = Findings()
    # Shards pay only where they are extracted at once: on a RAM disk (see _extraction_parallelism).
    ramdisk = _on_ramdisk(profile)
    inputs = spec.stage.inputs if spec.stage else ()   # what the shapes were taken from: none without a stage
    for shape in shapes:
        if shape.files > MANY_SMALL_FILES and shape.bytes / shape.files < SMALL_FILE_BYTES:
            name = shape.path.rstrip("/").split("/")[-1]
            packed, options = (f"{name}.pack", " --shards 4") if ramdisk else (f"{name}.tar", "")
            # A pack holds the folder's contents, not the folder: `to` puts them where the folder was.
            place = inputs[shape.index].to or name
            findings.warn(f"stage.inputs.{shape.index}", f"{shape.path} holds {shape.files} files of "
                          f"{compact_bytes(shape.bytes // shape.files)} on average: many small files read slowly from Lustre; "
                          f"pack it once (slurmkit pack {shape.path} -o {packed}{options}) "
                          f"and stage it where the folder was: {{from: {packed}, to: {place}}}")
    tmpdir = profile.storage.slurm_tmpdir
    if tmpdir and tmpdir.counts_against_memory and shapes:
        staged_mib = sum(s.bytes for s in shapes) // (1 << 20)
        memory = spec.resources.mem_mb or min((_stated(t.memory_mib) for t in profile.node_types if not t.gpus), default=None)
        if memory and staged_mib > 0.9 * memory:
            findings.error("stage.inputs", f"{format_size(staged_mib)} staged into {profile.name}'s RAM-disk $SLURM_TMPDIR "
                           f"leaves no memory of {format_size(memory)} per node for the job; stage less or read it from scratch")
        elif memory and staged_mib > 0.5 * memory:
            findings.warn("stage.inputs", f"{format_size(staged_mib)} staged into {profile.name}'s RAM-disk $SLURM_TMPDIR uses over half "
                          f"of the {format_size(memory)} of memory per node")
    return tuple(findings)


# ------------------------------------------------------------------------------------- builds

#: What each build needs installed before it runs without build isolation (so that it compiles
#: against the venv's torch/tensorflow), and the modules it compiles against.
BUILD_REQUIRES = {
    "mpi4py": ("setuptools", "wheel", "cython"),
    "horovod": ("setuptools", "wheel", "cmake", "packaging", "psutil", "pyyaml", "cloudpickle", "cffi"),
}
#: The module a build's check imports for each framework: ``import horovod`` alone loads none of
#: Horovod's compiled framework extensions, so a wheel made for another torch would pass it.
HOROVOD_MODULES = {"pytorch": "horovod.torch", "tensorflow": "horovod.tensorflow"}
#: Python package names that say which framework a virtualenv installs.


def _check_builds(spec: JobSpec, profile: SiteProfile, findings: Findings) -> None:
    if spec.environment.builds and spec.environment.venv is None:
        findings.error("environment.builds", "a build installs into the job's virtualenv: add environment.venv "
                       "(e.g. venv: {packages: [torch]})")
    if spec.environment.nccl and "horovod" not in {b.name for b in spec.environment.builds}:
        findings.error("environment.builds", "an NCCL tarball is for the Horovod build to compile against: add horovod "
                       "to environment.builds, or leave the tarball out (PyTorch's wheels bring their own NCCL)")
    elif spec.environment.nccl and not spec.resources.gpus:
        findings.error("environment.builds", "Horovod uses NCCL for its GPU operations only, and this job has no GPUs: "
                       "leave the NCCL tarball out (the CPU build uses MPI)")
    elif spec.environment.nccl and any(m.split("/")[0] == "nccl" for m in spec.environment.modules):
        findings.warn("environment.modules", "the nccl module is not what Horovod builds against or loads here (the "
                      "NCCL tarball is, first on LD_LIBRARY_PATH): leave the module out, or the tarball")
    if spec.environment.nccl and profile.rules.env_build is not None:
        findings.error("environment.builds", f"{profile.name} builds Python environments on its login node (slurmkit env build), "
                       "where slurmkit does not unpack an NCCL tarball yet: leave it out and load the site's nccl module")


def _nccl(spec: JobSpec, profile: SiteProfile) -> Optional[NcclPlan]:
    """Where the user's NCCL tarball is unpacked: the build cache's ``nccl/<version>``, so each
    version is unpacked once and a Horovod build's cache key (its HOROVOD_NCCL_HOME) names it."""
    tarball = spec.environment.nccl
    if tarball is None:
        return None
    from slurmkit.core.userpaths import in_job

    cache = _build_cache(spec, profile)
    return NcclPlan(tarball=in_job(tarball.path), version=tarball.version, home=f"{cache}/nccl/{tarball.version}",
                    setrpaths=profile.software.setrpaths)


def _build_modules(spec: JobSpec, profile: SiteProfile, gpus, user: List[str], findings: Findings) -> List[str]:
    """The modules a build compiles against that the spec does not load: the profile's version
    of each, or one error naming those to add. A source build reads $EBROOTNCCL and $CUDA_HOME
    under ``set -u``, so rendering it without its modules would only fail later, on the node."""
    added: List[str] = []
    missing: Dict[str, List[str]] = {}
    for family, build in _build_module_families(spec, profile, gpus):
        if any(m.split("/")[0] == family for m in user):
            continue
        if profile.software.modules.get(family):
            added.append(profile.software.modules[family])
        else:
            missing.setdefault(build, []).append(family)
    for build, families in missing.items():
        findings.error("environment.modules", f"the {build} build compiles against {' and '.join(families)}, and {profile.name}'s "
                       f"profile names no version: add {', '.join(f + '/VERSION' for f in families)} to environment.modules "
                       "(`module spider NAME` lists the versions)")
    return added


def _build_module_families(spec: JobSpec, profile: SiteProfile, gpus) -> Tuple[Tuple[str, str], ...]:
    """(module family, the build that needs it): the site's MPI for every build, CUDA and NCCL for Horovod on GPUs."""
    names = [b.name for b in spec.environment.builds]
    families: Tuple[Tuple[str, str], ...] = ((mpi_flavour(spec.environment.modules, profile), names[0]),) if names else ()
    if "horovod" in names and gpus:
        families += (("cuda", "horovod"),) + (() if spec.environment.nccl else (("nccl", "horovod"),))
    return families


def _build_cache(spec: JobSpec, profile: SiteProfile) -> str:
    """The build cache as a word of the plan: a relative ``build_cache`` is the spec folder's
    (``$SLURM_SUBMIT_DIR/...``), so HOROVOD_NCCL_HOME and LD_LIBRARY_PATH hold where it is
    wherever the job, pip or a rank runs from."""
    from slurmkit.core.userpaths import in_job

    return in_job(spec.environment.build_cache) if spec.environment.build_cache else default_build_cache(profile)


def default_build_cache(profile: SiteProfile) -> str:
    """Scratch where the site has it (a purge only costs a rebuild), else the home cache."""
    scratch = profile.storage.scratch
    if scratch and scratch.path:
        return scratch.path.rstrip("/") + "/slurmkit-builds"
    return "$HOME/.cache/slurmkit/builds"


def _builds(spec: JobSpec, profile: SiteProfile, gpus) -> Tuple[BuildPlan, ...]:
    if not spec.environment.builds:
        return ()
    plans = _build_plans(spec, profile, gpus)
    return tuple(p._replace(options=horovod_options(p, spec, profile, gpus, _nccl(spec, profile))) if p.name == "horovod" else p
                 for p in plans)


def horovod_options(build: BuildPlan, spec: JobSpec, profile: SiteProfile, gpus, nccl: Optional[NcclPlan]) -> Tuple[Tuple[str, str], ...]:
    """The script's ``slurmkit_horovod_wheel`` call, as named options a user can read and change
    (a version to pin, a framework to add): the recipe itself (build requirements, HOROVOD_*
    variables, the import check) is in the runtime library, which derives from these options
    the same ``build`` this plan holds (a test runs both and compares). Only what differs from
    the library's defaults is written: the wheelhouse's horovod first, pip --no-index, NCCL and
    CUDA from the loaded modules."""
    version = build.requirement.partition("==")[2]
    options = [("--frameworks", ",".join(build_frameworks(spec))), ("--profile", profile.name)]
    options += [("--version", version)] if version else []
    options += [] if gpus else [("--cpu-only", "")]
    options += [("--nccl", nccl.home)] if nccl and gpus else []
    options += [] if build.pip_options else [("--index", "")]
    options += [("--no-site-wheel", "")] if build.pip_options and not build.from_wheelhouse else []
    return tuple(options) + (("--cache", build.cache),)


def _build_plans(spec: JobSpec, profile: SiteProfile, gpus) -> Tuple[BuildPlan, ...]:
    cache = _build_cache(spec, profile)
    wheelhouse = bool(profile.software.virtualenv.wheelhouse)
    nccl = _nccl(spec, profile)
    return tuple(BuildPlan(
        name=b.name,
        requirement=b.requirement,
        cache=cache,
        variables=_build_variables(b.name, spec, gpus, profile.software.module_system not in (None, "none"), nccl),
        build_requires=BUILD_REQUIRES[b.name],
        from_wheelhouse=wheelhouse and b.name == "horovod" and nccl is None,   # the site's wheel has the site's NCCL
        pip_options=("--no-index",) if wheelhouse else (),
        check=_build_check(b.name, spec),
        source=source_folder(cache, b.name, b.version) if fetched(b.name) else "",
    ) for b in spec.environment.builds)


def build_frameworks(spec: JobSpec) -> Tuple[str, ...]:
    """The frameworks a Horovod build is for: launch.framework when given, else those the venv's
    packages install, else the kind's own. (A requirements file is not read: nothing here reads files.)"""
    if spec.launch.framework:
        return (spec.launch.framework,)
    venv = spec.environment.venv
    named = [package_name(p) for p in (venv.packages if venv else ())]
    found = tuple(sorted({PACKAGE_FRAMEWORKS[n] for n in named if n in PACKAGE_FRAMEWORKS}, key=tuple(HOROVOD_MODULES).index))
    return found or (_framework(spec),)


def _build_check(name: str, spec: JobSpec) -> str:
    """What the wheelhouse and the build cache must pass: an import that loads the compiled parts."""
    if name == "mpi4py":
        return "from mpi4py import MPI"
    return "import " + ", ".join(HOROVOD_MODULES[f] for f in build_frameworks(spec))


def _build_variables(name: str, spec: JobSpec, gpus, modules: bool, nccl: Optional[NcclPlan] = None) -> Tuple[Tuple[str, str], ...]:
    if name == "mpi4py":
        return (("MPICC", "mpicc"),)
    frameworks = build_frameworks(spec)
    variables = [("HOROVOD_WITH_MPI", "1"), ("HOROVOD_WITHOUT_MXNET", "1"), ("HOROVOD_WITHOUT_GLOO", "1")]
    variables.append(("HOROVOD_WITH_PYTORCH", "1") if "pytorch" in frameworks else ("HOROVOD_WITHOUT_PYTORCH", "1"))
    variables.append(("HOROVOD_WITH_TENSORFLOW", "1") if "tensorflow" in frameworks else ("HOROVOD_WITHOUT_TENSORFLOW", "1"))
    if gpus:
        variables.append(("HOROVOD_GPU_OPERATIONS", "NCCL"))
        if modules:   # set by the cuda and nccl modules, which _build_modules made sure are loaded
            variables += [("HOROVOD_NCCL_HOME", nccl.home if nccl else "$EBROOTNCCL"), ("HOROVOD_CUDA_HOME", "$CUDA_HOME")]
    else:
        variables.append(("HOROVOD_CPU_OPERATIONS", "MPI"))
    if nccl and gpus and not modules:   # a site without modules: the tarball is still what it builds against
        variables.append(("HOROVOD_NCCL_HOME", nccl.home))
    return tuple(variables)
