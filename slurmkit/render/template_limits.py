"""Bounds on what a template may build while it renders, so that a cloned repository's template
cannot exhaust the memory or the time of the command that renders it.

Templates in ``./templates`` come with a cloned repository: Jinja's immutable sandbox keeps
them from Python objects, but not from asking for gigabytes (``"a" * 2000000000``,
``"%2000000000s"|format``, ``"a"|center(2000000000)``, ``10 ** 100000``) or for hours. Here:
operators and the filters and methods that size their result are checked before they run,
the script is gathered piece by piece and refused past MAX_OUTPUT_CHARS, and rendering on the
main thread stops after MAX_RENDER_SECONDS of CPU time. A script is a few KiB and renders in milliseconds;
no real template comes near these bounds.
"""

import re
from typing import Any

#: the longest string, list or integer (in digits) one template operation may build.
MAX_VALUE_CHARS = 1 << 20
#: the largest script a template may produce (a real one is a few KiB).
MAX_OUTPUT_CHARS = 16 << 20
#: how much CPU time a render may take on the main thread (a real one: milliseconds). CPU time,
#: not the clock's: a busy login node slows a render down without making it loop, and a
#: sandboxed template cannot wait on anything, so a template that loops shows in its CPU time.
MAX_RENDER_SECONDS = 10
#: how much more address space a render may take on the main thread: what the checks above
#: cannot see (``~`` joins that double a string in a loop or a recursive macro) ends in a
#: MemoryError, reported as one line, instead of gigabytes.
MAX_RENDER_MEMORY = 1 << 30


class TemplateTooLarge(Exception):
    """A template operation past the bounds above (reported at the template's line)."""


def _sized(value: Any) -> int:
    if isinstance(value, (str, bytes, list, tuple)):
        return len(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value.bit_length() * 3 // 10   # about its decimal digits
    return 0


def _check_size(count: float, what: str) -> None:
    if count > MAX_VALUE_CHARS:
        raise TemplateTooLarge(f"{what} would build about {int(count):,} items, past the {MAX_VALUE_CHARS:,} "
                               "a template may build; templates format the plan")


def checked_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse ``*``, ``**``, ``+`` and ``%`` whose result would be too large, before computing it."""
    if operator == "*":
        for seq, times in ((left, right), (right, left)):
            if isinstance(times, int) and isinstance(seq, (str, bytes, list, tuple)):
                _check_size(len(seq) * max(times, 0), "'*'")
        if isinstance(left, int) and isinstance(right, int):
            _check_size(_sized(left) + _sized(right), "'*'")
    elif operator == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1:
        _check_size(max(right, 0) * abs(left).bit_length() * 3 / 10, "'**'")
    elif operator == "+":
        _check_size(_sized(left) + _sized(right), "'+'")
    elif operator == "%" and isinstance(left, str):
        check_percent_format(left)


_PERCENT_WIDTH = r"%(?:\([^)]*\))?[-#0 +]*(\d*)(?:\.(\d*))?"   # compiled on first use (re's cache)


def check_percent_format(template: str) -> None:
    for width, precision in re.findall(_PERCENT_WIDTH, template):
        _check_size(int(width or 0) + int(precision or 0), "a %-format width")


def check_format_spec(template: str) -> None:
    """The widths in a ``str.format`` template (``{:2000000000}``), nested fields included."""
    import string

    try:
        fields = list(string.Formatter().parse(template))
    except ValueError:
        return   # str.format raises its own error for it
    for _, _, spec, _ in fields:
        if spec:
            for number in re.findall(r"\d+", spec):
                _check_size(int(number), "a format width")
            check_format_spec(spec)


def bounded_filters(filters: dict) -> dict:
    """Jinja's filters whose result grows with an argument, checked first."""
    filters = dict(filters)   # Jinja's own, before these replace them
    def center(value, width=80):
        _check_size(int(width), "center")
        return filters["center"](value, width)

    def indent(value, width=4, *args, **kwargs):
        _check_size(len(width) if isinstance(width, str) else int(width), "indent")
        return filters["indent"](value, width, *args, **kwargs)

    def format_(value, *args, **kwargs):
        check_percent_format(str(value))
        return filters["format"](value, *args, **kwargs)

    return {"center": center, "indent": indent, "format": format_}


def gathered(chunks) -> str:
    """The pieces a template's generate() yields, joined; refused past MAX_OUTPUT_CHARS as soon as it gets there."""
    import io

    text, total = io.StringIO(), 0   # not a list of pieces: millions of small strings cost 50 bytes each
    for chunk in chunks:
        total += len(chunk)
        if total > MAX_OUTPUT_CHARS:
            raise TemplateTooLarge(f"the script would be larger than {MAX_OUTPUT_CHARS >> 20} MiB "
                                   "(a script is a few KiB): the template repeats without end")
        text.write(chunk)
    return text.getvalue()


class time_limit:
    """Stop a render that runs past MAX_RENDER_SECONDS, or that asks for MAX_RENDER_MEMORY more
    address space (main thread only: signals go there, and the address-space limit is the
    process's, so it is set only for the milliseconds a render takes, and put back)."""

    def __enter__(self):
        import signal
        import threading

        self.armed = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
        self.memory = None
        if self.armed:
            self.previous = signal.signal(signal.SIGPROF, self._expired)
            signal.setitimer(signal.ITIMER_PROF, MAX_RENDER_SECONDS)
            self.memory = _cap_address_space()
        return self

    @staticmethod
    def _expired(signum, frame):
        raise TemplateTooLarge(f"rendering took more than {MAX_RENDER_SECONDS} s of CPU time (a script renders in "
                               "milliseconds): the template loops without end")

    def __exit__(self, *exc):
        if self.armed:
            import signal

            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, self.previous)
        if self.memory is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, self.memory)
        return False


def _cap_address_space():
    """Lower RLIMIT_AS to what the process has now plus MAX_RENDER_MEMORY; the previous limits
    (to put back), or None where it cannot be read or would not be lowered."""
    try:
        import os
        import resource

        with open("/proc/self/statm", "rb") as statm:
            now = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        previous = resource.getrlimit(resource.RLIMIT_AS)
        wanted = now + MAX_RENDER_MEMORY
        soft, hard = previous
        if soft != resource.RLIM_INFINITY and soft <= wanted:
            return None
        if hard != resource.RLIM_INFINITY and wanted > hard:
            return None
        resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
        return previous
    except (OSError, ValueError, ImportError):
        return None
