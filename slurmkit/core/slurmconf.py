"""Whether SLURM's commands can read their configuration, told before any of them is run.

A ``SLURM_CONF`` that names no file makes every SLURM command retry for 60 s ("cannot stat
file ..., retrying in 1sec up to 60sec") and then fail as a controller that does not answer
would: slurmkit would retry that again, and call it a refusal or an outage. A configuration
that cannot be read is the user's to fix, so it is checked before a command runs (one
``stat``) and recognised in SLURM's own words after one failed (a folder, an empty or broken
file, an included file that is missing), and said at once as a SlurmConfigError.

Without ``SLURM_CONF``, SLURM looks in its own place and then asks DNS (configless): nothing is
checked here then, since a login node needs no file.
"""

import os
import re
import stat
from typing import Mapping, Optional

from slurmkit.core.errors import SlurmConfigError

#: what SLURM's commands print when their configuration cannot be read or parsed (22.05 to 24.x).
CONFIG_UNREADABLE = ("Unable to process configuration file", "s_p_parse_file:", "could not open config file")
#: ``sbatch: error: `` before SLURM's words
_PREFIX = re.compile(r"^(?:[\w.-]+: )?(?:(?:error|fatal): )?")
#: what the user can do, at the end of every message.
FIX = "export SLURM_CONF=<your cluster's slurm.conf>, or unset it where SLURM finds its own (a login node)"


def conf_problem(env: Optional[Mapping[str, str]] = None) -> Optional[SlurmConfigError]:
    """The error for a ``SLURM_CONF`` that names no readable file, or None (fine, or unset)."""
    conf = (os.environ if env is None else env).get("SLURM_CONF")
    if not conf:
        return None
    try:
        mode = os.stat(conf).st_mode
    except FileNotFoundError:
        why = "names no file"
    except OSError as error:
        why = f"cannot be read ({error.strerror or error})"
    else:
        if stat.S_ISDIR(mode):
            why = "is a folder, not a slurm.conf"
        elif not stat.S_ISREG(mode):
            why = "is not a regular file"
        elif not os.access(conf, os.R_OK):
            why = "cannot be read (Permission denied)"
        else:
            return None
    return SlurmConfigError(f"SLURM_CONF={conf} {why}: SLURM's commands cannot read their configuration "
                            f"(nothing was asked of the cluster); {FIX}")


def check_slurm_conf(env: Optional[Mapping[str, str]] = None) -> None:
    """Raise SlurmConfigError when ``SLURM_CONF`` names no readable file (before any SLURM command)."""
    problem = conf_problem(env)
    if problem is not None:
        raise problem


def config_failure(stderr: str, env: Optional[Mapping[str, str]] = None) -> Optional[SlurmConfigError]:
    """The error for a SLURM command that failed because it could not read its configuration
    (SLURM's words in ``stderr``), or None for any other failure."""
    if not any(marker in stderr for marker in CONFIG_UNREADABLE):
        return None
    problem = conf_problem(env)
    if problem is not None:
        return problem
    conf = (os.environ if env is None else env).get("SLURM_CONF")
    where = f"SLURM_CONF={conf}" if conf else "SLURM_CONF is unset: SLURM's own slurm.conf"
    said = "; ".join(dict.fromkeys(_PREFIX.sub("", line.strip()) for line in stderr.splitlines() if line.strip()))
    return SlurmConfigError(f"SLURM's commands cannot read their configuration ({where}): {said}; "
                            f"fix that file, or {FIX}")
