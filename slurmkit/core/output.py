"""What slurmkit prints: user data byte for byte on stdout, messages escaped on stderr.

``click.echo`` strips ANSI escape sequences whenever stdout is not a terminal, so a script
printed by ``render > job.sh`` would differ from the one ``render -o job.sh`` writes (an
``ESC[31m`` in a variable's value would vanish). Scripts, specs and logs are therefore written
here as UTF-8 bytes, unchanged, exactly as ``files.write_atomic`` writes them.

Messages (errors, warnings, notes) quote file names and values a user or an attacker chose; a
file named ``x<ESC>]0;PWNED<BEL>.yaml`` would otherwise set a terminal's title or clear it.
Every such line goes through ``message_line``, which shows each control character as its
Python escape (``\\x1b``), so what the user reads is what is in the name.
"""

import re
import sys

#: C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides that
#: make a name read other than it is (Trojan Source, CVE-2021-42574).
_CONTROL = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]"   # compiled on first use (re's cache)


def escaped(text: str) -> str:
    """``text`` with every control character shown as ``\\xNN`` / ``\\uNNNN`` (tab and newline kept)."""
    text = str(text)
    if text.isprintable():
        return text   # the common case, without a regular expression
    return re.sub(_CONTROL, lambda m: ascii(m.group())[1:-1], text)


def verbatim(text: str, err: bool = False) -> None:
    """Print ``text`` unchanged (no ANSI stripping, no newline added), as UTF-8 bytes: what
    ``-o FILE`` would have written, byte for byte."""
    stream = sys.stderr if err else sys.stdout
    data = text.encode("utf-8")
    binary = getattr(stream, "buffer", None)
    stream.flush()
    if binary is None:
        stream.write(text)
    else:
        binary.write(data)
        binary.flush()


def message_line(line: str, err: bool = True) -> None:
    """Print one message line (``error: ...``, ``warning: ...``), control characters escaped."""
    import click

    click.echo(escaped(line), err=err)
