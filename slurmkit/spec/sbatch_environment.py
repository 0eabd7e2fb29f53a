"""sbatch's input environment variables: set in a user's shell, each replaces what the script says.

sbatch reads ``SBATCH_TIMELIMIT``, ``SBATCH_PARTITION``, ``SBATCH_GRES`` and about fifty
others as if they were options, and "environment variables will override any options set in a
batch script" (man sbatch, INPUT ENVIRONMENT VARIABLES; Slurm 22.05 here, the same rule and
list in 23.x and 24.x). One ``export SBATCH_TIMELIMIT=1:00:00`` left in ``~/.bashrc`` therefore
gives every job an hour whatever its script says, and nothing in the script shows it. The
resolver reports each one that is set (a warning naming the line it replaces, or what it adds);
``$SBATCH_ACCOUNT`` has its own rule (accounts.py). The command line wins over both, so the
options slurmkit's own sbatch call passes (``--output``, ``--error``, ``--comment``) are not
reported.
"""

from __future__ import annotations

import os
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

#: variable -> the sbatch option it stands for (man sbatch 22.05, INPUT ENVIRONMENT VARIABLES).
INPUT_VARIABLES: Dict[str, str] = {
    "SBATCH_ACCTG_FREQ": "--acctg-freq", "SBATCH_ARRAY_INX": "--array", "SBATCH_BATCH": "--batch",
    "SBATCH_CLUSTERS": "--clusters", "SLURM_CLUSTERS": "--clusters", "SBATCH_CONSTRAINT": "--constraint",
    "SBATCH_CONTAINER": "--container", "SBATCH_CORE_SPEC": "--core-spec", "SBATCH_CPUS_PER_GPU": "--cpus-per-gpu",
    "SBATCH_DELAY_BOOT": "--delay-boot", "SBATCH_DISTRIBUTION": "--distribution",
    "SBATCH_EXCLUSIVE": "--exclusive", "SBATCH_EXPORT": "--export", "SBATCH_GET_USER_ENV": "--get-user-env",
    "SBATCH_GPU_BIND": "--gpu-bind", "SBATCH_GPU_FREQ": "--gpu-freq", "SBATCH_GPUS": "--gpus",
    "SBATCH_GPUS_PER_NODE": "--gpus-per-node", "SBATCH_GPUS_PER_TASK": "--gpus-per-task", "SBATCH_GRES": "--gres",
    "SBATCH_GRES_FLAGS": "--gres-flags", "SBATCH_HINT": "--hint", "SLURM_HINT": "--hint",
    "SBATCH_IGNORE_PBS": "--ignore-pbs", "SBATCH_INPUT": "--input", "SBATCH_JOB_NAME": "--job-name",
    "SBATCH_MEM_BIND": "--mem-bind", "SBATCH_MEM_PER_CPU": "--mem-per-cpu", "SBATCH_MEM_PER_GPU": "--mem-per-gpu",
    "SBATCH_MEM_PER_NODE": "--mem", "SBATCH_NETWORK": "--network", "SBATCH_NO_KILL": "--no-kill",
    "SBATCH_NO_REQUEUE": "--no-requeue", "SBATCH_OPEN_MODE": "--open-mode", "SBATCH_OVERCOMMIT": "--overcommit",
    "SBATCH_PARTITION": "--partition", "SBATCH_POWER": "--power", "SBATCH_PROFILE": "--profile",
    "SBATCH_QOS": "--qos", "SBATCH_REQ_SWITCH": "--switches", "SBATCH_REQUEUE": "--requeue",
    "SBATCH_RESERVATION": "--reservation", "SBATCH_SIGNAL": "--signal", "SBATCH_SPREAD_JOB": "--spread-job",
    "SBATCH_THREAD_SPEC": "--thread-spec", "SBATCH_THREADS_PER_CORE": "--threads-per-core",
    "SBATCH_TIMELIMIT": "--time", "SBATCH_USE_MIN_NODES": "--use-min-nodes", "SBATCH_WAIT": "--wait",
    "SBATCH_WAIT_ALL_NODES": "--wait-all-nodes", "SBATCH_WAIT4SWITCH": "--switches", "SBATCH_WCKEY": "--wckey",
}
#: options sbatch's command line gives in slurmkit's own call: they win over the environment.
COMMAND_LINE = ("--output", "--error", "--comment", "--parsable")
#: options whose variable also changes sbatch itself, not only the job.
_SBATCH_ITSELF = {"--wait": "sbatch waits for the job to end before it returns",
                  "--batch": "it picks the nodes' features the batch step runs on"}


def set_variables(environ: Optional[Mapping[str, str]] = None) -> List[Tuple[str, str]]:
    """``(variable, value)`` of each input variable set in ``environ``, in a stable order."""
    environ = os.environ if environ is None else environ
    return [(name, environ[name]) for name in sorted(INPUT_VARIABLES) if name in environ]


def findings(directives: Sequence[Tuple[str, str]], environ: Optional[Mapping[str, str]] = None) -> List[Tuple[str, str, str]]:
    """A ``(level, field, message)`` warning for each input variable set: the #SBATCH line it
    replaces, or the option it adds to a job whose script does not say it."""
    from slurmkit.core.sanity import SPEC_OPTIONS

    script = {flag: value for flag, value in directives}
    found = []
    for variable, value in set_variables(environ):
        option = INPUT_VARIABLES[variable]
        if option in COMMAND_LINE:
            continue
        field = SPEC_OPTIONS.get(option[2:], "extra_directives").split(" ")[0]
        given = f"${variable}={value}" if value else f"${variable} (set, empty)"
        if option in script:
            line = f"{option}={script[option]}" if script[option] else option
            what = f"replaces the script's #SBATCH {line}"
        else:
            what = f"adds {option}{'=' + value if value else ''} to the job, which the script does not ask for"
        why = f"; {_SBATCH_ITSELF[option]}" if option in _SBATCH_ITSELF else ""
        found.append(("warning", field, f"{given} {what} (sbatch reads its environment after the #SBATCH lines{why}); "
                                        f"unset {variable} to run the job as rendered"))
    return found
