"""What every ``--json`` option prints: one JSON object on stdout, always with ``"schema": 1``.

A script reads one document whatever happened: the command's result (lists are ``[]`` when
empty, never a sentence), or ``{"schema": 1, "error": {"code": ..., "message": ...}}`` with the
exit code the text output would have had. The codes are stable: a script may branch on them,
so a new exception class gets its own code here (tests/unit/test_cli_json.py fails otherwise)
and docs/json.md lists them all (the same test checks that too).
"""

import json
from typing import Optional

import click

from slurmkit.core.output import message_line

#: version of every JSON document; raised only when a field changes meaning or goes away.
SCHEMA = 1

#: exception class name -> stable error code. An exception takes the code of the first class
#: of its method resolution order listed here (names, so that nothing is imported to look one up).
ERROR_CODES = {
    "OpenTodos": "todos-open",
    "SpecProfileNotFound": "profile-not-found",
    "SpecError": "spec-invalid",
    "ProfileError": "profile-invalid",
    "InputError": "input-invalid",
    "UnitError": "value-invalid",
    "ProfileNotFound": "profile-not-found",
    "NoProfileDetected": "profile-not-detected",
    "SlurmConfigError": "slurm-config-unreadable",
    "SlurmNotConfigured": "slurm-not-configured",
    "SlurmUnreachable": "slurm-unreachable",
    "SchedulerError": "slurm-failed",
    "NotRecorded": "not-recorded",
    "RegistryError": "registry-failed",
    "ClusterError": "cluster-failed",
    "ChainIncomplete": "chain-incomplete",
    "SweepIncomplete": "sweep-incomplete",
    "SubmitError": "submit-failed",
    "BadArguments": "arguments-invalid",
    "PackError": "pack-failed",
    "CannotWrite": "write-failed",
    "PortRefused": "port-refused",
    "ScaffoldError": "scaffold-invalid",
    "JobFailed": "job-failed",
    "JobFolderGone": "job-folder-gone",
    "JobLogGone": "job-log-unreadable",
    "WaitTimeout": "wait-timeout",
    "HostUnreachable": "remote-unreachable",
    "AuthRefused": "remote-auth-refused",
    "ConnectionDropped": "remote-dropped",
    "NoSlurm": "remote-no-slurm",
    "QuotaExceeded": "remote-quota-exceeded",
    "TooBig": "remote-sync-too-big",
    "RemoteConfigError": "remote-config-invalid",
    "RemoteError": "remote-failed",
    "NotApplied": "apply-refused",
    "CannotRerun": "rerun-refused",
    "TooManyCalls": "too-many-calls",
    "SlurmkitError": "failed",
}
#: a command line click could not parse (unknown option, bad argument): exit 2.
USAGE_CODE = "usage"


def error_code(error: BaseException) -> str:
    """The stable code of ``error``: its nearest listed class's, else ``failed``."""
    for cls in type(error).__mro__:
        if cls.__name__ in ERROR_CODES:
            return ERROR_CODES[cls.__name__]
    return ERROR_CODES["SlurmkitError"]


def error_object(error) -> dict:
    """``{"code", "message"}`` of a SlurmkitError, with ``file``, ``line`` and ``field`` where
    it is about a place in a file the user wrote (``message`` is then the part after them)."""
    body = {"code": error_code(error), "message": error.message}
    if hasattr(error, "keypath"):  # an InputError: spec, profile or YAML file
        body.update(file=error.file, line=error.line, field=error.keypath or None, message=error.detail)
    if len(getattr(error, "errors", ())) > 1:   # SpecErrors: every problem of the spec, the first being the above
        body["errors"] = [error_object(each) for each in error.errors]
    return body


def emit(**fields) -> None:
    """Print one document: ``{"schema": 1, **fields}``."""
    click.echo(json.dumps({"schema": SCHEMA, **fields}, indent=2, default=str))


def emit_line(event: str, **fields) -> None:
    """One line of JSON Lines (``watch --json``): ``{"schema": 1, "time": ISO-8601 UTC, "event": ..., ...}``,
    flushed at once so that a pipe's reader sees each change as it happens."""
    import sys
    from datetime import datetime, timezone

    now = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    click.echo(json.dumps({"schema": SCHEMA, "time": now, "event": event, **fields}, default=str))
    sys.stdout.flush()


def wants_json() -> bool:
    """Whether the command now running was given ``--json`` (its parameter is ``as_json``)."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.params.get("as_json"))


class JsonCommand(click.Command):
    """A click command with a ``--json`` option whose usage errors are JSON too when it is given."""

    def make_context(self, info_name, args, parent=None, **extra):
        as_json = "--json" in args
        try:
            return super().make_context(info_name, list(args), parent=parent, **extra)
        except click.UsageError as error:
            if not as_json:
                raise
            self.usage_error({"code": USAGE_CODE, "message": error.format_message(), "field": _param_name(error)})
            message_line(f"error: {error.format_message()}")
            raise SystemExit(2) from None

    def usage_error(self, body: dict) -> None:
        emit(error=body)


class JsonLinesCommand(JsonCommand):
    """A JsonCommand whose ``--json`` output is JSON Lines: a usage error is one ``error`` line."""

    def usage_error(self, body: dict) -> None:
        emit_line("error", error=body)


def _param_name(error: click.UsageError) -> Optional[str]:
    """``--account`` for an option, ``JOBID`` for an argument, None when click did not say."""
    if isinstance(error, (click.NoSuchOption, click.BadOptionUsage)) and error.option_name:
        return error.option_name
    param = getattr(error, "param", None)
    if param is None:
        return None
    if isinstance(param, click.Option):
        return max(param.opts, key=len)
    return param.human_readable_name
