"""The ``slurmkit`` command: a thin click layer over the Python API.

Subcommands are registered by import path and imported only when they run, so
``slurmkit --help`` and ``slurmkit --version`` pay for click alone (see bench/).
"""

import importlib

import click

from slurmkit.core.output import message_line
from slurmkit.core.version import __version__

#: command name -> "module:attribute" of its click command, imported on first use.
LAZY_COMMANDS = {
    "new": "slurmkit.cli.jobs:new_command",
    "render": "slurmkit.cli.jobs:render_command",
    "check": "slurmkit.cli.jobs:check_command",
    "submit": "slurmkit.cli.run:submit_command",
    "status": "slurmkit.cli.run:status_command",
    "watch": "slurmkit.cli.run:watch_command",
    "cancel": "slurmkit.cli.run:cancel_command",
    "logs": "slurmkit.cli.run:logs_command",
    "pack": "slurmkit.cli.pack:pack_command",
    "import": "slurmkit.cli.port:import_command",
    "port": "slurmkit.cli.port:port_command",
    "profiles": "slurmkit.cli.profiles:profiles",
    "report": "slurmkit.cli.report:report_command",
    "build": "slurmkit.cli.build:build_command",
    "env": "slurmkit.cli.env:env_group",
    "fetch": "slurmkit.cli.remote:fetch_command",
    "docs": "slurmkit.cli.docs:docs_command",
    "resubmit": "slurmkit.cli.rerun:resubmit_command",
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported only when invoked or listed in help."""

    def __init__(self, *args, lazy_commands=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands or {})

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy_commands))

    def get_command(self, ctx, name):
        if name in self.lazy_commands:
            module_name, attribute = self.lazy_commands[name].split(":")
            module = importlib.import_module(module_name)
            return with_verbosity(getattr(module, attribute))
        return super().get_command(ctx, name)

    def format_commands(self, ctx, formatter):
        # Listing help strings would import every subcommand: show each one's summary, made
        # from its own help by docs/gen.py (summaries.py).
        from slurmkit.cli.summaries import SUMMARIES

        rows = [(name, SUMMARIES.get(name, "")) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def complete_profile_names(ctx, param, incomplete: str):
    """Shell completion of --profile: the names of the profiles on the search path (not abstract)."""
    from slurmkit.sites.profiles import list_profiles

    found, _ = list_profiles()
    return [profile.name for profile in found if profile.name.startswith(incomplete)]


def complete_job_ids(ctx, param, incomplete: str):
    """Shell completion of job ids: the jobs submitted with slurmkit here, newest first, as
    ``ID`` with the job's name beside it (shells that show descriptions show it)."""
    from click.shell_completion import CompletionItem

    from slurmkit.core.errors import SlurmkitError
    from slurmkit.slurm.registry import submissions

    try:
        jobs = submissions()
    except SlurmkitError:   # an unreadable registry completes nothing rather than printing a traceback
        return []
    return [CompletionItem(job.job_id, help=job.name) for job in reversed(jobs) if job.job_id.startswith(incomplete)]


def job_id_arguments(ctx, param, value):
    """Click callback of every JOBID argument: a job id (``123``, a job or a whole array) or an
    array task (``123_4``), nothing else. The ids reach sacct, squeue and scancel as arguments:
    an option there (``--user=x``) would change what is asked, and a mistyped id would read as a
    controller that does not answer."""
    for job_id in (value,) if isinstance(value, str) else value:
        if not (job_id.isascii() and job_id.replace("_", "", 1).isdigit() and not job_id.startswith("_")
                and not job_id.endswith("_")):
            raise click.BadParameter(f"{job_id!r} is not a job id: use 123 (a job or a whole array) or 123_4 (one array task)")
    return value


def summary(command: click.Command) -> str:
    """The first sentence of a command's own help: what ``slurmkit --help`` lists for it."""
    text = " ".join((command.help or "").split("\f")[0].split("\n\n")[0].split())
    end = text.find(". ")
    return text if end < 0 else text[:end + 1]


VERBOSE_HELP = ("Also say which profile a command took and why, and each SLURM command run (with its time and exit "
                "status), on stderr.")
QUIET_HELP = "No notes and no 'wrote FILE' lines; the result, warnings and errors still show."


def _set_verbosity(ctx, param, value) -> None:
    """-v or -q given after the command: the level the group's own flag sets; both refused."""
    if not value:
        return
    from slurmkit.core.verbosity import QUIET, VERBOSE, set_level

    given = ctx.meta.setdefault("slurmkit.verbosity", set())   # meta: one per invocation, shared by its contexts
    given.add(param.name)
    if len(given) > 1 or ctx.find_root().params.get("quiet" if param.name == "verbose" else "verbose"):
        raise click.UsageError("give -v (more) or -q (less), not both")
    set_level(VERBOSE if param.name == "verbose" else QUIET)


def with_verbosity(command: click.Command) -> click.Command:
    """``command`` (and every command under it) taking -v and -q after its name, as the group
    does before it: ``slurmkit status -v`` is ``slurmkit -v status``."""
    if not any(param.name == "verbose" for param in command.params):
        command.params += [
            click.Option(["--verbose", "-v"], is_flag=True, expose_value=False, callback=_set_verbosity, help=VERBOSE_HELP),
            click.Option(["--quiet", "-q"], is_flag=True, expose_value=False, callback=_set_verbosity, help=QUIET_HELP)]
    for sub in getattr(command, "commands", {}).values():
        with_verbosity(sub)
    return command


#: the --profile option of every command that takes a job spec.
PROFILE_OPTION = click.option("--profile", "-p", help="Site profile (default: the spec's, else detected).",
                              shell_complete=complete_profile_names)


def fail(error) -> None:
    """End a command on a SlurmkitError: its one line on stderr, its exit code (2 bad input, 1 cluster).

    Under ``--json`` the error is also a JSON document on stdout (see cli_json.py), so a script
    reads one document whatever happened."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.params.get("as_json"):
        from slurmkit.cli.json_output import emit, error_object

        emit(error=error_object(error))
    for message in error.messages():
        message_line(f"error: {message}")
    raise SystemExit(error.exit_code)


def pretty_output() -> bool:
    """Rich tables and live views on a terminal; plain lines when piped or with NO_COLOR."""
    import os
    import sys

    return sys.stdout is not None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")


@click.group(cls=LazyGroup, lazy_commands=LAZY_COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="slurmkit")
@click.option("--verbose", "-v", is_flag=True, help=VERBOSE_HELP)
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
def main(verbose, quiet):
    """Turn a short job description into a correct sbatch script for a named cluster.

    -v and -q go before or after the command (slurmkit -q new ..., slurmkit new ... -q);
    $SLURMKIT_VERBOSITY (-1, 0, 1) sets the same for the Python API.
    """
    from slurmkit.core.verbosity import QUIET, VERBOSE, set_level

    if verbose and quiet:
        raise click.UsageError("give -v (more) or -q (less), not both")
    set_level(VERBOSE if verbose else QUIET if quiet else None)   # None: $SLURMKIT_VERBOSITY, else NORMAL


#: the garbage collector's first threshold while the command line runs: a command allocates many
#: objects and few cycles, and CPython's default (700) runs a collection every few hundred
#: allocations through the imports; a long ``watch`` still collects, every 50,000.
GC_THRESHOLD = 50_000


def run() -> None:
    """The ``slurmkit`` command (the console script and ``python -m slurmkit.cli.main``).

    ``main`` as click runs it, then a quick exit: the interpreter's own teardown (freeing every
    module of jinja2, yaml, click and slurmkit one object at a time) costs more CPU than a
    render's work, and a command line that has flushed its output has nothing left to do. The
    exit functions still run and stdout and stderr are flushed; where that fails, or where
    another thread is still running (Python joins those at exit), the ordinary exit happens
    instead. bench/startup.py measures both.
    """
    import gc

    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    try:
        main()  # click's standalone mode: always ends in SystemExit
    except SystemExit as end:
        quick_exit(end.code)
    except (OSError, AttributeError) as error:
        if not _writing_output(error):
            raise
        _output_failed(error)


#: the functions in which writing a command's output to stdout or stderr fails.
_WRITERS = frozenset(("echo", "verbatim", "message_line", "_write_buffer", "_check_buffer"))


def _writing_output(error: BaseException) -> bool:
    """Whether ``error`` was raised writing to stdout or stderr (a full disk, a closed descriptor,
    ``>&-``): the innermost of slurmkit's, click's or rich's writing functions on its traceback."""
    import sys

    if isinstance(error, AttributeError) and None not in (sys.stdout, sys.stderr):
        return False
    names = []
    traceback = error.__traceback__
    while traceback is not None:
        names.append(traceback.tb_frame.f_code.co_name)
        traceback = traceback.tb_next
    return bool(names) and names[-1] in _WRITERS


def require_stdout() -> None:
    """For a command that is what it prints (``status``, ``watch``, ``logs``): a closed stdout
    (``>&-``; Python's sys.stdout is None, and click would drop every line) is the one line
    ``render`` gives for it and exit 1, not a silent success."""
    import sys

    if sys.stdout is None:
        _output_failed(AttributeError("stdout"))


def _output_failed(error: BaseException) -> None:
    """One line for an output that could not be written, then exit 1 (not a traceback)."""
    import os

    reason = error.strerror if isinstance(error, OSError) and error.strerror else "the stream is closed"
    try:
        os.write(2, f"error: slurmkit could not write its output: {reason}\n".encode())
    except OSError:
        pass
    os._exit(1)


def quick_exit(code) -> None:
    """Leave with ``code`` as SystemExit would, without tearing the interpreter down."""
    import atexit
    import os
    import sys
    import threading

    status = _exit_status(code)
    if threading.active_count() > 1:
        raise SystemExit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:   # None: started with that descriptor closed (`>&-`)
                stream.flush()
        except (OSError, ValueError):   # a closed pipe or stream: Python's own exit reports it
            raise SystemExit(code) from None
    os._exit(status)


def _exit_status(code) -> int:
    """The status SystemExit(code) ends a process with: None 0, a number itself, else 1 (the
    text printed on stderr first, as Python does)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    import sys

    if sys.stderr is not None:
        print(code, file=sys.stderr)
    return 1

