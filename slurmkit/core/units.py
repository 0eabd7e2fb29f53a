"""Sizes and durations as SLURM reads them, normalised to MiB and seconds.

Profiles, job files and the command line all write ``125G`` or ``7-00:00:00``; everything past
the loaders works with plain ints (MiB, seconds) so that no comparison ever mixes units.
"""

import math
import re
from typing import Union

from slurmkit.core.errors import UnitError

_SIZE_FACTORS = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 ** 2, "P": 1024 ** 3}
_SIZE_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*(?:([KMGTP])(?:i?B)?)?$", re.IGNORECASE)
_SIZE_HELP = "use a number with K, M, G or T (binary units: 4G, 4000M, 4GiB, 7T, 512K); a bare number means MiB"

# SLURM's --time forms: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S.
_SLURM_TIME_RE = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$")
_SHORT_TIME_RE = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$", re.IGNORECASE)
#: the largest size slurmkit reads, in MiB (1024P): more than any node, disk or file system holds.
MAX_SIZE_MB = 1 << 40
#: the longest duration slurmkit reads, in seconds (365 days): Alliance clusters run jobs of 28 days at most.
MAX_DURATION_S = 365 * 86400
#: the longest size or duration text: "7-00:00:00" or "1.5G" is ten characters; a longer one is a mistake or an attack.
_MAX_TEXT = 64
_DURATION_HELP = ("use a SLURM time (7-00:00:00, 24:00:00, 1:00:00, 0-03:00, or minutes such as 30) "
                  "or a short form (7d, 24h, 90m, 3h30m)")


def parse_size(value: Union[str, int, float]) -> int:
    """Return ``value`` in MiB (rounded up: a limit of 512K still needs a whole MiB)."""
    if isinstance(value, bool) or (isinstance(value, float) and not math.isfinite(value)):
        raise UnitError(f"{shown(value)} is not a size: {_SIZE_HELP}")
    if isinstance(value, (int, float)):
        if value < 0:
            raise UnitError(f"{shown(value)} is not a size: sizes cannot be negative")
        return _at_most(math.ceil(value), MAX_SIZE_MB, value, "size", "1024P, more than any node or file system holds")
    text = _short_text(value, "size", _SIZE_HELP)
    match = _SIZE_RE.match(text)
    if not match:
        raise UnitError(f"{value!r} is not a size: {_SIZE_HELP}")
    number, unit = match.groups()
    return _at_most(math.ceil(float(number) * _SIZE_FACTORS[(unit or "M").upper()]), MAX_SIZE_MB, value, "size",
                    "1024P, more than any node or file system holds")


def parse_duration(value: Union[str, int]) -> int:
    """Return ``value`` in seconds; a bare number means minutes, as in ``sbatch --time``."""
    if isinstance(value, bool) or isinstance(value, float):
        raise UnitError(f"{shown(value)} is not a duration: {_DURATION_HELP}")
    if isinstance(value, int):
        if value < 0:
            raise UnitError(f"{shown(value)} is not a duration: durations cannot be negative")
        return _at_most(value * 60, MAX_DURATION_S, value, "duration", "365 days; Alliance clusters run jobs of 28 days at most")
    text = _short_text(value, "duration", _DURATION_HELP)
    seconds = _slurm_time(text) if text else None
    if seconds is None and text and any(ch.isalpha() for ch in text):
        match = _SHORT_TIME_RE.match(text)
        if match:
            d, h, m, s = (int(part or 0) for part in match.groups())
            seconds = ((d * 24 + h) * 60 + m) * 60 + s
    if seconds is None:
        raise UnitError(f"{value!r} is not a duration: {_DURATION_HELP}")
    return _at_most(seconds, MAX_DURATION_S, value, "duration", "365 days; Alliance clusters run jobs of 28 days at most")


def shown(value) -> str:
    """``value`` for a message: its repr, or for a whole number too long to print (Python will
    not print one of more than 4,300 digits) how long it is."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 100:
        bits = value.bit_length()  # str() is exact below Python's limit; log10 is close enough past it
        return f"a number of {len(str(abs(value))) if bits < 14_000 else int(math.log10(abs(value))) + 1:,} digits"
    return repr(value)


def _short_text(value, what: str, help_text: str) -> str:
    text = str(value).strip()
    if len(text) > _MAX_TEXT:
        raise UnitError(f"{len(text):,} characters is not a {what}: {help_text}")
    return text


def _at_most(amount: int, limit: int, value, what: str, why: str) -> int:
    if amount > limit:
        raise UnitError(f"{shown(value)} is more than slurmkit's largest {what}, {why}")
    return amount


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


def human_size(count: int) -> str:
    """Bytes as a limit is stated: ``4 MiB``, ``64 KiB``, ``12 bytes``."""
    return f"{count >> 20} MiB" if count >= 1 << 20 else f"{count >> 10} KiB" if count >= 1 << 10 else f"{count} bytes"


def compact_bytes(count: int) -> str:
    """Bytes in three digits, as a measure is stated: ``1.5G``, ``40K``, ``12B``."""
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if count >= size:
            return f"{count / size:.3g}{unit}"
    return f"{count}B"
