"""The Python face of slurmkit: ``Job`` ties a spec to a profile, resolves and renders it.

    from slurmkit import Job
    job = Job(name="train", profile="nibi", account="def-me",
              resources={"time": "3h", "gpus": "h100:1", "cpus_per_task": 8, "mem": "32G"},
              launch="python train.py")
    print(job.render())

``Job(...)`` takes the same keys as ``job.yaml`` and checks them the same way.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from slurmkit.core.errors import ProfileNotFound, SpecError, SpecProfileNotFound
from slurmkit.core.findings import Finding, level_of
from slurmkit.core.plan import Plan
from slurmkit.core.todos import refuse_open_todos
from slurmkit.render.render import render
from slurmkit.resolve.resolve import Resolution, resolve
from slurmkit.sites.profiles import SiteProfile, select_profile
from slurmkit.spec.spec import JobSpec, load_spec, spec_from_mapping

if TYPE_CHECKING:   # for the hints only: submit.py imports submitit, which Job imports on submit()
    from slurmkit.resolve.staging import InputShape
    from slurmkit.slurm.submit import ChainHandle, JobHandle, SweepHandle

#: a path as callers give one.
PathLike = Union[str, Path]
#: what warnings are given to (``warn=print`` does).
Warn = Callable[[Finding], object]


class Job:
    """A job: its spec, checked; resolved against a site profile, rendered, submitted."""

    def __init__(self, spec: Optional[JobSpec] = None, **fields: Any) -> None:
        if spec is not None and fields:
            raise TypeError("give a JobSpec or keyword fields, not both")
        self.spec = spec if spec is not None else spec_from_mapping(fields, source="Job(...)")

    @classmethod
    def from_yaml(cls, path: PathLike) -> "Job":
        """The job of a spec file; its errors all at once, the names only the site can judge
        (profile, GPU model) among them (resolve/sitenames.py)."""
        try:
            return cls(load_spec(Path(path)))
        except SpecError as error:
            from slurmkit.resolve.sitenames import with_name_errors

            raise with_name_errors(error, Path(path), (_account_check,)) from None

    def profile(self, profile: Optional[str] = None) -> SiteProfile:
        """The site profile: ``profile`` if given, else the spec's, else the detected one."""
        from slurmkit.core.verbosity import detail

        try:
            site, detection = select_profile(profile or self.spec.profile, warn_retired=False)
        except ProfileNotFound as error:
            if profile or not self.spec.source:
                raise
            raise SpecProfileNotFound(self.spec.source, self.spec.line_of("profile"), "profile", error.message) from None
        why = "given" if profile else f"named in {self.spec.source}" if self.spec.profile else f"detected: {detection.reason}"
        detail(f"profile {site.name} ({why})")
        return site

    def resolve(self, profile: Optional[str] = None) -> Resolution:
        """The plan and findings, with what this host knows that the site's rules use (the bytes
        staged inputs take on a node's disk: localfacts.py)."""
        site = self.profile(profile)
        return self._resolve_on(site)

    def _resolve_on(self, site: SiteProfile) -> Resolution:
        from slurmkit.resolve.localfacts import gather

        return resolve(self.spec, site, gather(self.spec, site, self.base_dir()))

    def check(self, profile: Optional[str] = None, folder: Optional[PathLike] = None) -> Tuple[Finding, ...]:
        """Every error and warning for this job on its cluster, including what its staged inputs
        hold on disk (many small files; RAM-disk sites), what a task file holds, and the files it
        needs that are not on this host (staged inputs, requirements, a lasting virtualenv).
        ``folder``: the log folder it will be submitted with (submit's ``folder``; default logs/
        beside the spec), which the site rules check (a folder read-only inside jobs)."""
        from slurmkit.resolve.manytasks import task_file_findings
        from slurmkit.resolve.reads import missing_local_paths, said_for_this_shell
        from slurmkit.resolve.resolve import staged_data_findings
        from slurmkit.resolve.staging import inspect_inputs

        site = self.profile(profile)
        shapes = inspect_inputs(self.spec, self.base_dir())
        resolution = self._resolve_on(site)
        missing = missing_local_paths(self.spec, resolution.plan, self.base_dir()) if resolution.plan else ()
        retired = self._retirement(site) if not _says_port(resolution) else None
        return (tuple(Finding("error", "profile", retired) for _ in (retired,) if retired)
                + tuple(f for f in said_for_this_shell(resolution.findings, missing)
                        if not retired or (f.field, f.message) != ("profile", retired))
                + tuple(Finding(level_of(message), field, message) for field, message in missing)
                + staged_data_findings(self.spec, site, shapes) + _partly_counted(shapes)
                + task_file_findings(self.spec, site, resolution.plan, self.base_dir())
                + self._host_rule_findings(site, resolution.plan, folder) + self._module_line_findings(site)
                + self._old_path_findings(site) + self._account_findings(site))

    def _account_findings(self, site: SiteProfile) -> Tuple[Finding, ...]:
        """The account sbatch would charge, against the user's associations (_account_check)."""
        return tuple(_account_check(site, {"account": self.spec.account}))

    def _retirement(self, site: SiteProfile) -> Optional[str]:
        """What resolve() warns of a retired cluster's profile (with the port command), or None.
        A warning to render and port, which read such specs; an error to check, and submit
        refuses it: a retired cluster runs no jobs, and its spec is not submittable elsewhere as it is."""
        from slurmkit.sites.profiles import retirement_notice

        source = self.spec.source
        return retirement_notice(site, source if source and source.endswith((".yaml", ".yml")) else None)

    def _refuse_retired(self, profile: Optional[str]) -> None:
        """Raise the retirement as a SpecError, unless an error of resolve's already names the
        port (retired GPUs on a retired cluster): that one is raised, by _plan, as the one line."""
        site = self.profile(profile)
        notice = self._retirement(site)
        if notice and not _says_port(self._resolve_on(site)):
            raise SpecError(self.spec.source, self.spec.line_of("profile"), "profile", notice)

    def _module_line_findings(self, site: SiteProfile) -> Tuple[Finding, ...]:
        """The module lines environment.modules does not hold (in a kept if, loop or function;
        in a file the setup sources, beside the spec) that would not load on the cluster: the same
        judgement port makes its to-dos with (modulelines.py). A retired cluster's spec is not
        judged by today's stack."""
        if site.is_retired:
            return ()
        from slurmkit.port.modulelines import check_message, module_line_problems, shell_fields

        fields = shell_fields(self.spec.environment.setup, self.spec.launch.shell, self.spec.launch.command)
        return tuple(Finding("warning", line.field, check_message(line, site.name))
                     for line in module_line_problems(site, fields, self.base_dir()))

    def _old_path_findings(self, site: SiteProfile) -> Tuple[Finding, ...]:
        """Paths into an older stack than the cluster's (/cvmfs/.../easybuild/software/2020/...)
        that the job names by hand: the same judgement port makes its to-dos with (oldpaths.py).
        A retired cluster's spec is not judged by today's stack."""
        if site.is_retired:
            return ()
        from slurmkit.port.oldpaths import advice, old_stack_paths, spec_fields

        return tuple(Finding("warning", path.field, advice(path, site)) for path in old_stack_paths(site, spec_fields(self.spec)))

    def _host_rule_findings(self, site: SiteProfile, plan: Optional[Plan], folder: Optional[PathLike]) -> Tuple[Finding, ...]:
        """The site rules that need this host (slurmkit/resolve/siterules.py): the folders the job
        writes, the login node it goes from, the requirements file. (The bytes it stages are
        resolve()'s, from localfacts.)"""
        import os
        import socket

        from slurmkit.resolve.siterules import host_findings

        log_folder = Path(folder).resolve() if folder else self.folder()
        return tuple(Finding(*f) for f in host_findings(self.spec, site, plan, self.base_dir(), log_folder, os.environ,
                                                        socket.gethostname()))

    def render(self, profile: Optional[str] = None, warn: Optional[Warn] = None, standalone: bool = False) -> str:
        """The sbatch script; raises SpecError naming the first problem if there are errors.

        ``warn`` is called with each warning (a retired cluster's among them), which are
        otherwise dropped: see check() for all findings. ``standalone``: slurmkit's runtime
        library is appended to the script, which then needs no file beside it.
        """
        return render(self._plan(profile, warn), standalone=standalone)

    def _plan(self, profile: Optional[str], warn: Optional[Warn]) -> Plan:
        """The resolved plan; warnings go to ``warn``, the first error is raised as a SpecError.
        A warning that a variable may be exported when you submit is not said where this shell
        does not export it: submit refuses that as an error (_refuse_on_host_rules), said once."""
        from slurmkit.resolve.reads import missing_local_paths, said_for_this_shell

        resolution = self.resolve(profile)
        warnings = resolution.warnings
        if warn and resolution.plan is not None:
            warnings = said_for_this_shell(warnings, missing_local_paths(self.spec, resolution.plan, self.base_dir()))
        for finding in warnings:
            if warn:
                warn(finding)
        if resolution.plan is None:
            first = resolution.errors[0]
            raise SpecError(self.spec.source, self.spec.line_of(first.field), first.field, first.message)
        return resolution.plan

    def _spec_path(self) -> Optional[str]:
        source = self.spec.source
        return str(Path(source).resolve()) if source and source.endswith((".yaml", ".yml")) else source

    def base_dir(self) -> Path:
        """The spec's folder (the working folder for ``Job(...)``): sbatch runs there, so the
        job starts there and relative paths in the spec (staged inputs, outputs) mean it."""
        path = self._spec_path()
        return Path(path).parent if path and path.endswith((".yaml", ".yml")) else Path.cwd()

    def folder(self) -> Path:
        """Where the job's logs and exit-status files go: ``logs/`` beside its job.yaml."""
        return self.base_dir() / "logs"

    def submit(self, profile: Optional[str] = None, folder: Optional[PathLike] = None, after: Iterable[Union[str, int]] = (),
               after_type: str = "ok", warn: Optional[Warn] = None,
               args: Sequence[str] = (), ignore_todos: bool = False) -> Union["JobHandle[int]", "SweepHandle", "ChainHandle"]:
        """Render and submit; returns a JobHandle (submitit's future), a SweepHandle for an
        array, a ChainHandle for a chain. ``after``: the ids of the jobs it waits for.
        ``args``: the words sbatch passes to the script after its name, as ``sbatch job.sh a b``
        does (``$1``, ``"$@"`` in launch.shell and environment.setup); each is one word, never
        read by a shell, and they are recorded with the job. A spec file with ``# to do:`` lines
        left by import or port is refused (OpenTodos) unless ``ignore_todos``."""
        from slurmkit.slurm.submit import submit_chain, submit_script

        if not ignore_todos:
            refuse_open_todos(self._spec_path())
        self._refuse_retired(profile)
        plan = self._plan(profile, warn)
        self._refuse_on_host_rules(self.profile(profile), plan, folder, warn)
        self._fetch_sources(plan)
        if plan.chain:
            return submit_chain(render(plan), plan.chain.links, folder or self.folder(), self.spec.name, plan.profile,
                                spec=self._spec_path(), after=tuple(str(a) for a in after), after_type=after_type,
                                workdir=self.base_dir(), args=args, logs=self.spec.logs or ())
        parts = self._sweep_parts(plan, profile)
        if len(parts) > 1:
            from slurmkit.resolve.arraysplit import throttled
            from slurmkit.slurm.sweeps import submit_sweep

            return submit_sweep([(offset, render(part), part.array.size) for offset, part in parts if part.array], throttled(plan),
                                folder or self.folder(), self.spec.name, plan.profile, spec=self._spec_path(),
                                after=tuple(str(a) for a in after), after_type=after_type, workdir=self.base_dir(), args=args,
                                logs=self.spec.logs or ())
        return submit_script(render(plan), folder or self.folder(), self.spec.name, plan.profile,
                             array_size=plan.array.size if plan.array else None, spec=self._spec_path(),
                             array_indices=plan.array.indices if plan.array else None,
                             after=tuple(str(a) for a in after), after_type=after_type, workdir=self.base_dir(), args=args,
                             logs=self.spec.logs or ())

    def fetch_sources(self, profile: Optional[str] = None) -> None:
        """Fetch into the build cache the sources this job's builds compile from (Horovod's),
        here on the login node, as submit() does before sbatch: for a script rendered and
        submitted by hand."""
        self._fetch_sources(self._plan(profile, None))

    def _fetch_sources(self, plan: Plan) -> None:
        if any(build.source for build in plan.builds):
            import os

            from slurmkit.build.sources import fetch_sources

            fetch_sources(plan.builds, {**os.environ, "SLURM_SUBMIT_DIR": str(self.base_dir())})

    def _sweep_parts(self, plan: Plan, profile: Optional[str]):
        """The plan's parts (arraysplit.py) under the smaller of the profile's largest array and
        the cluster's MaxArraySize, asked of the cluster only for a sweep that could be split."""
        from slurmkit.resolve.arraysplit import split_plan
        from slurmkit.slurm.sweeps import largest_array, live_max_array_size

        if plan.array is None or plan.array.ids or plan.array.size < 2:
            return [(0, plan)]
        return split_plan(plan, largest_array(self.profile(profile).scheduling.max_array_size, live_max_array_size()))

    def _refuse_on_host_rules(self, site: SiteProfile, plan: Plan, folder: Optional[PathLike], warn: Optional[Warn]) -> None:
        """Submit nothing that a site rule says cannot run (a log under a path read-only inside
        jobs, a GPU job from a CPU login node), nor what will stop for a file missing on this host
        (a requirements file): the first error is raised as a SpecError."""
        from slurmkit.resolve.reads import missing_local_paths
        from slurmkit.resolve.siterules import NO_PREBUILT_ENV

        findings = tuple(Finding("error", f.field, f.message) if f.message.startswith(NO_PREBUILT_ENV) else f
                         for f in self._host_rule_findings(site, plan, folder))   # sbatch runs here: so must the env be
        findings += tuple(Finding("error", field, message) for field, message in missing_local_paths(self.spec, plan, self.base_dir())
                          if level_of(message) == "error")   # a file the job will stop without (check warns of the others)
        for finding in findings:
            if finding.level == "warning" and warn:
                warn(finding)
        errors = [f for f in findings if f.level == "error"]
        if errors:
            raise SpecError(self.spec.source, self.spec.line_of(errors[0].field), errors[0].field, errors[0].message)

    def _refuse_elsewhere(self, profile: Optional[str] = None) -> None:
        """SpecError when this host is on another Alliance cluster than the job's profile
        (sites/elsewhere.py): sbatch would send it there. submit() refuses it with the other
        host rules; a dry run and a function job ask here."""
        from slurmkit.sites.elsewhere import cluster_findings

        for finding in cluster_findings(self.profile(profile), self.spec.source):
            raise SpecError(self.spec.source, self.spec.line_of(finding.field), finding.field, finding.message)

    def build_env(self, profile: Optional[str] = None, force: bool = False) -> Path:
        """Build this job's virtualenv here, on the login node, where the site builds them there
        and its jobs only activate them (Trillium; slurmkit/build/envbuild.py); returns its folder."""
        from slurmkit.build.envbuild import build

        return build(self, profile, force)[0]

    def test_only(self, profile: Optional[str] = None, folder: Optional[PathLike] = None, args: Sequence[str] = ()) -> str:
        """Ask the controller where and when this job would start (``sbatch --test-only``), given ``args``."""
        from slurmkit.slurm.submit import test_only

        self._refuse_retired(profile)
        plan = self._plan(profile, None)
        self._refuse_on_host_rules(self.profile(profile), plan, folder, None)   # what submit refuses, a dry run refuses
        return test_only(render(plan), folder or self.folder(), self.spec.name, array=plan.array is not None, workdir=self.base_dir(),
                         args=args)


def _account_check(site: SiteProfile, data: Mapping[str, Any]) -> List[Finding]:
    """The account sbatch would charge (``$SBATCH_ACCOUNT`` over the spec's ``account``), against
    the user's associations, asked of accounting only where this host is on the job's own
    cluster (slurm/associations.py); the raw spec's ``account`` serves a spec with other errors."""
    from slurmkit.core.slurmconf import conf_problem
    from slurmkit.resolve.accounts import from_environment
    from slurmkit.sites.elsewhere import cluster_here, for_another_cluster
    from slurmkit.slurm.associations import account_findings, user_accounts

    unreadable = conf_problem()
    if unreadable is not None:   # "no problems found" would hide that nothing could be asked
        return [Finding("warning", "account", "check could not tell which cluster this host is on nor ask accounting "
                                              f"for your accounts (submit stops on it): {unreadable}")]
    here = cluster_here()
    if here is None or for_another_cluster(site, here):
        return []
    environment = from_environment()
    if environment and environment.variable != "SBATCH_ACCOUNT" and data.get("account"):
        environment = None   # sbatch reads $SBATCH_ACCOUNT only: $SLURM_ACCOUNT stands in for an account the spec lacks
    account = environment.account if environment else data.get("account")
    if not isinstance(account, str) or not account:
        return []
    said = account_findings(account, user_accounts())
    if environment:   # the spec does not hold the value: say where it came from
        said = [f._replace(message=f"${environment.variable}={account}: {f.message}") for f in said]
    return said


def _says_port(resolution: Resolution) -> bool:
    """Whether an error of ``resolution`` already tells the user to port the job (retired GPUs)."""
    return any("slurmkit port" in finding.message for finding in resolution.errors)


def _partly_counted(shapes: Iterable["InputShape"]) -> Tuple[Finding, ...]:
    """A warning for each staged folder that check stopped counting (staging.MAX_WALK_FILES/SECONDS)."""
    from slurmkit.resolve.staging import MAX_WALK_FILES, MAX_WALK_SECONDS

    return tuple(Finding("warning", f"stage.inputs.{shape.index}",
                         f"{shape.path}: stopped counting after {shape.files:,} files or {MAX_WALK_SECONDS:g} s "
                         f"(check counts at most {MAX_WALK_FILES:,}): its sizes and file counts are at least what was "
                         "counted; is this the folder you meant to stage?")
                 for shape in shapes if not shape.complete)
