"""What a function job raised, carried back from the node so that ``result()`` raises it here.

submitit keeps only the text of a failed call's traceback (``FailedJobError``), so a caller
cannot ``except ValueError``. ``carrying(fn)`` wraps the call: on the node, what ``fn`` raises
is pickled with its traceback's text into ``<id>_<task>_raised.pkl`` beside submitit's result,
then raised on, so that the job still fails (FAILED, exit 1) and submitit still records it.
``raised_here`` reads it back: the user's own exception, its remote traceback as its
``__cause__`` (as concurrent.futures does for a process pool) and, on Python 3.11+, a note.

The wrapper is built inside a function, from the standard library only, so that cloudpickle
pickles it by value: the node needs submitit and the user's code, not slurmkit.
"""

from __future__ import annotations  # the wrapper's hints stay text: pickled by value, they name nothing of slurmkit's

from pathlib import Path
from typing import Any, Callable, Optional, TypeVar

from slurmkit.core.records import Record

R = TypeVar("R")

#: the file's name beside submitit's ``<id>_<task>_result.pkl``.
SUFFIX = "_raised.pkl"


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a job, on its node: the ``__cause__`` of the
    exception ``result()`` raises, so that a traceback printed here shows where it failed there."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f'\n"""\n{self.text.rstrip()}\n"""'


def carrying(fn: Callable[..., R]) -> Callable[..., R]:
    """``fn``, which on the node leaves what it raises beside submitit's result (see above)."""

    def call(*args: Any, **kwargs: Any) -> R:
        try:
            return fn(*args, **kwargs)
        except Exception as error:
            import os
            import traceback

            text = "".join(traceback.format_exception(type(error), error, error.__traceback__.tb_next if error.__traceback__ else None))
            try:
                import cloudpickle  # type: ignore[import-untyped]  # submitit's own dependency: there wherever submitit runs

                pickled: Optional[bytes] = cloudpickle.dumps(error)
            except Exception:   # an exception that cannot be pickled (a lock, a socket in its args): its text still goes
                pickled = None
            try:
                import pickle

                import submitit

                result = submitit.JobEnvironment().paths.result_pickle
                place = result.with_name(result.name[:-len("_result.pkl")] + "_raised.pkl")
                partial = place.with_name(f"{place.name}.{os.getpid()}.tmp")
                partial.write_bytes(pickle.dumps((pickled, text, f"{type(error).__module__}.{type(error).__qualname__}")))
                os.replace(partial, place)
            except Exception:   # pragma: no cover - the job's folder unwritable: submitit's own record is all there is
                pass
            raise

    return call


class Raised(Record):
    """What a function job left of the exception it raised: the exception rebuilt here (None
    when it could not be), its traceback on the node, its class's name, and why it is None."""

    error: Optional[BaseException]
    traceback: str
    kind: str
    why: str = ""


def raised_path(result_pickle: Path) -> Path:
    """The raised file beside submitit's result file of the same job and task."""
    return result_pickle.with_name(result_pickle.name[:-len("_result.pkl")] + SUFFIX)


def read_raised(result_pickle: Path) -> Optional[Raised]:
    """What the job raised, read back; None when it left no raised file (it raised nothing, or
    it died without running its ``except``: killed, out of memory, cancelled)."""
    import pickle

    from slurmkit.core.files import read_bytes_bounded

    try:
        pickled, text, kind = pickle.loads(read_bytes_bounded(raised_path(result_pickle), 64 << 20))
    except FileNotFoundError:
        return None
    except Exception as error:   # unreadable, or not what carrying() writes
        return Raised(None, "", "an exception", f"its record {raised_path(result_pickle)} cannot be read ({error})")
    if pickled is None:
        return Raised(None, text, kind, f"the {kind} it raised could not be pickled on the node")
    try:
        import cloudpickle

        rebuilt = cloudpickle.loads(pickled)
    except Exception as problem:   # its class is not importable here, or its __init__ wants other arguments
        return Raised(None, text, kind, f"the {kind} it raised cannot be rebuilt here ({type(problem).__name__}: {problem})")
    if not isinstance(rebuilt, BaseException):
        return Raised(None, text, kind, f"its record holds a {type(rebuilt).__name__}, not an exception")
    return Raised(rebuilt, text, kind)


def with_remote_traceback(error: BaseException, text: str, job_id: str) -> BaseException:
    """``error`` with its traceback on the node as its cause, and a note naming the job."""
    error.__cause__ = RemoteTraceback(text)
    add_note = getattr(error, "add_note", None)
    if add_note is not None:   # Python 3.11+
        add_note(f"raised in slurmkit job {job_id}, on its node; the traceback there is above")
    return error
