"""slurmkit's exceptions: each one is a single line a user can act on.

The CLI prints ``str(error)`` after ``error:`` and exits with ``error.exit_code``; nothing
below ever needs a traceback to be understood. Exit codes follow DESIGN.md: 2 for bad input,
1 when the cluster (or a job) failed.
"""

from pathlib import Path
from typing import List, Optional, Sequence, Union


class SlurmkitError(Exception):
    """Base class: a one-line message and the exit code the CLI should use."""

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(message)
        self.message = " ".join(str(message).split())  # one line, whatever the caller built

    def messages(self) -> List[str]:
        """The lines the CLI prints after ``error:``: this one, or each of several (SpecErrors)."""
        return [self.message]


class UnitError(SlurmkitError, ValueError):
    """A size or duration that cannot be read (``4X``, ``7 days``)."""


class InputError(SlurmkitError):
    """A file the user wrote (job spec, YAML) that cannot be used, as ``file:line: key.path: message``."""

    def __init__(self, file: Union[str, Path, None], line: Optional[int], keypath: str, message: str):
        self.file = str(file) if file is not None else None
        self.line = line
        self.keypath = keypath
        self.detail = " ".join(str(message).split())
        where = self.file or "<input>"
        if line:
            where += f":{line}"
        super().__init__(f"{where}: {keypath + ': ' if keypath else ''}{self.detail}")


class ProfileError(InputError):
    """A site profile that breaks the schema, located as ``file:line: key.path: message``."""


class ProfileNotFound(SlurmkitError):
    """A profile name that is on no search-path folder (with a did-you-mean)."""


class NoProfileDetected(SlurmkitError):
    """Nothing said which cluster this is: no flag, variable or hostname matched."""


class ClusterError(SlurmkitError):
    """The live cluster could not be asked (no scontrol, a command failed)."""

    exit_code = 1


class SpecError(InputError):
    """A job spec that breaks the schema or asks for something impossible."""


class SpecProfileNotFound(SpecError):
    """``profile:`` in a spec that names no profile: a spec error, at its line, with the
    JSON code of ProfileNotFound."""


#: the most errors of one spec printed; the rest are counted ("and 3 more errors").
MAX_ERRORS_SHOWN = 20


class SpecErrors(SpecError):
    """Every problem one reading of a spec found, in file order, so that three typos take one
    run to see, not three. The error itself is the first (file, line, key path, detail, as a
    SpecError); ``errors`` holds them all."""

    def __init__(self, errors: Sequence[SpecError]):
        first = errors[0]
        super().__init__(first.file, first.line, first.keypath, first.detail)
        self.errors = tuple(errors)

    def messages(self) -> List[str]:
        shown = [error.message for error in self.errors[:MAX_ERRORS_SHOWN]]
        rest = len(self.errors) - len(shown)
        return shown + ([f"and {rest} more error{'s' if rest > 1 else ''}"] if rest else [])

    def __str__(self) -> str:
        return "\n".join(self.messages())


class OpenTodos(InputError):
    """A spec that still has ``# to do:`` lines from import or port: not submitted."""


#: words that users bring from sbatch, submitit or habit for what a spec's key says (lower case,
#: ``_`` for ``-``): a did-you-mean by spelling alone never finds ``indices`` for ``range``.
OTHER_WORDS = {"range": "indices", "ids": "indices", "array_ids": "indices", "gres": "gpus", "gpus_per_node": "gpus",
               "walltime": "time", "time_limit": "time", "timeout_min": "time",
               "memory": "mem", "mem_per_node": "mem", "email": "user", "mail_user": "user", "mail_type": "events"}


def closest(word: str, choices, cutoff: float = 0.6) -> Optional[str]:
    """The choice most like ``word`` (for a did-you-mean), or None.

    difflib is imported here, on the error path, so that start-up never pays for it.
    """
    import difflib

    names = sorted(set(map(str, choices)))
    plain = str(word).lower().replace("-", "_")
    same = [choice for choice in names if choice.lower().replace("-", "_") == plain]
    if same:   # BF16 for bf16, cpus-per-task for cpus_per_task: difflib compares them as strangers
        return same[0]
    said_elsewhere = [choice for choice in names if choice == OTHER_WORDS.get(plain)]
    if said_elsewhere:   # range for indices: sbatch's (or a habit's) word for the key, no letter alike
        return said_elsewhere[0]
    head = sorted((choice for choice in names if plain and choice.lower().startswith(plain + "_")), key=len)
    if head:   # cpus for cpus_per_task: the word a longer key starts with, not the key one letter off (gpus)
        return head[0]
    matches = difflib.get_close_matches(str(word), sorted(set(choices)), n=1, cutoff=cutoff)
    return matches[0] if matches else None


class SlurmConfigError(SlurmkitError):
    """SLURM's client configuration cannot be read ($SLURM_CONF names no readable file, or
    SLURM could not parse it): no controller was asked, so the cluster is not down and nothing
    is retried. Not a SchedulerError, so that no retry loop of the slurm layer catches it."""

    exit_code = 1
