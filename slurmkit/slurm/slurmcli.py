"""Running SLURM's commands: retries for a busy or restarting controller, one-line errors.

Every call to sbatch, sacct, scontrol and scancel goes through ``run_slurm`` so that the
transient failures of a real cluster ("Socket timed out", "Unable to contact slurm
controller") are retried with back-off in one place, and everything else is reported with the
scheduler's own reason. A configuration SLURM cannot read is none of these: it is told at once
(core/slurmconf.py), before the command runs when ``SLURM_CONF`` names no readable file.
"""

import shlex
import subprocess
import time
from pathlib import Path
from typing import Callable, Dict, Mapping, Optional, Sequence, Union

from slurmkit.core.errors import SlurmkitError

TRANSIENT = (
    "Socket timed out",
    "Unable to contact slurm controller",
    "Resource temporarily unavailable",
    "Slurm temporarily unable to accept job",
    "Zero Bytes were transmitted or received",
    "Connection refused",
)


class SchedulerError(SlurmkitError):
    """SLURM refused or could not do what was asked (the message is its reason).

    ``transient`` says the failure may have been the controller being busy or away rather than
    a refusal: such a request may still have reached the controller (sbatch must look before
    it tries again).
    """

    exit_code = 1

    def __init__(self, message: str, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient


def is_transient(stderr: str) -> bool:
    return any(marker in stderr for marker in TRANSIENT)


def scheduler_reason(stderr: str) -> str:
    """The line of SLURM's stderr that says why, without the ``sbatch: error:`` prefixes."""
    lines = [line.split("error:", 1)[-1].strip() for line in stderr.splitlines() if line.strip()]
    return "; ".join(dict.fromkeys(lines)) or "no reason given"


def run_slurm(argv: Sequence[str], retry_for: float = 60.0, env: Optional[Mapping[str, str]] = None,
              cwd: Optional[Union[str, Path]] = None, failed: Optional[str] = None, sleep: Callable[[float], None] = time.sleep,
              timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """Run a SLURM command; retry transient failures for up to ``retry_for`` seconds.

    Raises SchedulerError (``failed``, or "<command> failed", then the scheduler's reason) when
    the command fails for good; SlurmConfigError, before running it or after its first failure,
    when SLURM cannot read its configuration (never retried: it is not the controller).
    """
    from slurmkit.core.slurmconf import check_slurm_conf, config_failure
    from slurmkit.core.verbosity import detail

    check_slurm_conf(env)
    deadline = time.monotonic() + retry_for
    delay = 0.5
    while True:
        started = time.monotonic()
        try:
            result = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
        except FileNotFoundError:
            raise SchedulerError(f"{argv[0]} is not installed here: run slurmkit where SLURM's commands are (a login node)") from None
        except subprocess.TimeoutExpired:
            result = subprocess.CompletedProcess(argv, 1, "", f"Socket timed out: no answer within {timeout:g} s")
        detail(f"ran {shlex.join(str(a) for a in argv)} ({time.monotonic() - started:.2f} s, exit {result.returncode})")
        if result.returncode == 0:
            return result
        unreadable = config_failure(result.stderr, env)
        if unreadable is not None:
            raise unreadable
        if not is_transient(result.stderr) or time.monotonic() + delay > deadline:
            raise SchedulerError(f"{failed or argv[0] + ' failed'}: {scheduler_reason(result.stderr)}",
                                 transient=is_transient(result.stderr))
        sleep(delay)
        delay = min(delay * 2, 8.0)


def scancel(job_ids: Sequence[str], run: Optional[Callable[[Sequence[str]], object]] = None) -> Dict[str, str]:
    """Cancel ``job_ids`` in one scancel call: each id SLURM refused -> its reason (empty: all
    cancelled). scancel cancels the others and names each refused id (``Kill job error on job id
    99999: Invalid job id specified``); a failure naming none refuses them all."""
    import re

    try:
        (run or run_slurm)(["scancel", *job_ids])
    except SchedulerError as error:
        named = dict(re.findall(r"job id (\S+?): ([^;]+)", error.message))
        refused = {job: named[job].strip() for job in job_ids if job in named}
        return refused or {job: error.message for job in job_ids}
    return {}
