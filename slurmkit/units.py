"""Sizes and durations as SLURM reads them, normalised to MiB and seconds.

Profiles, job files and the command line all write ``125G`` or ``7-00:00:00``; everything past
the loaders works with plain ints (MiB, seconds) so that no comparison ever mixes units.
"""

import math
import re
from typing import Union

from .errors import UnitError

_SIZE_FACTORS = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 ** 2, "P": 1024 ** 3}
_SIZE_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*(?:([KMGTP])(?:i?B)?)?$", re.IGNORECASE)
_SIZE_HELP = "use a number with K, M, G or T (binary units: 4G, 4000M, 4GiB, 7T, 512K); a bare number means MiB"

# SLURM's --time forms: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S.
_SLURM_TIME_RE = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$")
_SHORT_TIME_RE = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$", re.IGNORECASE)
_DURATION_HELP = ("use a SLURM time (7-00:00:00, 24:00:00, 1:00:00, 0-03:00, or minutes such as 30) "
                  "or a short form (7d, 24h, 90m, 3h30m)")


def parse_size(value: Union[str, int, float]) -> int:
    """Return ``value`` in MiB (rounded up: a limit of 512K still needs a whole MiB)."""
    if isinstance(value, bool):
        raise UnitError(f"{value!r} is not a size: {_SIZE_HELP}")
    if isinstance(value, (int, float)):
        if value < 0:
            raise UnitError(f"{value!r} is not a size: sizes cannot be negative")
        return int(math.ceil(value))
    match = _SIZE_RE.match(str(value).strip())
    if not match:
        raise UnitError(f"{value!r} is not a size: {_SIZE_HELP}")
    number, unit = match.groups()
    return int(math.ceil(float(number) * _SIZE_FACTORS[(unit or "M").upper()]))


def parse_duration(value: Union[str, int]) -> int:
    """Return ``value`` in seconds; a bare number means minutes, as in ``sbatch --time``."""
    if isinstance(value, bool) or isinstance(value, float):
        raise UnitError(f"{value!r} is not a duration: {_DURATION_HELP}")
    if isinstance(value, int):
        if value < 0:
            raise UnitError(f"{value!r} is not a duration: durations cannot be negative")
        return value * 60
    text = str(value).strip()
    seconds = _slurm_time(text) if text else None
    if seconds is None and text and any(ch.isalpha() for ch in text):
        match = _SHORT_TIME_RE.match(text)
        if match:
            d, h, m, s = (int(part or 0) for part in match.groups())
            seconds = ((d * 24 + h) * 60 + m) * 60 + s
    if seconds is None:
        raise UnitError(f"{value!r} is not a duration: {_DURATION_HELP}")
    return seconds


def _slurm_time(text: str):
    match = _SLURM_TIME_RE.match(text)
    if not match:
        return None
    days, first, second, third = match.groups()
    if days is not None:  # D-H, D-H:M, D-H:M:S
        h, m, s = int(first), int(second or 0), int(third or 0)
        return ((int(days) * 24 + h) * 60 + m) * 60 + s
    if third is not None:  # H:M:S
        return (int(first) * 60 + int(second)) * 60 + int(third)
    if second is not None:  # M:S
        return int(first) * 60 + int(second)
    return int(first) * 60  # M


def format_duration(seconds: int) -> str:
    """Short, exact form for people: 604800 -> ``7d``, 12600 -> ``3h30m``."""
    if seconds == 0:
        return "0m"
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)


def format_slurm_time(seconds: int) -> str:
    """The ``D-HH:MM:SS`` form sbatch reads; partial minutes round up (never ask for less)."""
    minutes = -(-seconds // 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    return f"{days}-{hours:02d}:{minutes:02d}:00"


def format_size(mib: int) -> str:
    """The largest unit that keeps the number exact: 4096 -> ``4G``, 4000 -> ``4000M``."""
    for unit, size in (("T", 1024 ** 2), ("G", 1024)):
        if mib and mib % size == 0:
            return f"{mib // size}{unit}"
    return f"{mib}M"
