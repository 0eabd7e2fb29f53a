"""What a job's commands fetch from the internet: a ``pip install`` from the package index, and a
download (a URL or host:path in any command but echo: curl, wget, git clone). Where compute nodes reach no internet (the profile's
``rules.no_internet``: Narval, Rorqual, Trillium), each fails in the job; siterules.py says so.

Each line is split at its unquoted operators (``a && b | c``) and into words by
core/shellwords.py, the splitter the spec reader uses, so a quoted ``'pip install x'`` inside an
``echo`` is not a command; the words are read as written, not expanded.
"""

from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple

from slurmkit.core.shellwords import commands, raw_words

#: git subcommands that reach a remote (clone: only where it names one).
GIT_REMOTE = ("clone", "fetch", "pull", "ls-remote", "submodule")
#: Programs that print their arguments: a URL there is text, not a download.
PRINTERS = ("echo", "printf", ":", "#")
_URL = re.compile(r"(?:https?|ftp|git|ssh)://([^/\s'\":]+)|\b[\w.-]+@([\w.-]+):")
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0", "[::1]")
_PIP = re.compile(r"^(?:\S*/)?pip3?(?:\.\d+)?$")
_PYTHON = re.compile(r"^(?:\S*/)?python3?(?:\.\d+)?$")
#: pip install options whose next word is a value, not a package.
_PIP_VALUED = ("-r", "--requirement", "-c", "--constraint", "-t", "--target", "--prefix", "--root", "-f", "--find-links",
               "-i", "--index-url", "--extra-index-url", "--cache-dir", "--src", "--python-version", "--platform")


def _unquoted(word: str) -> str:
    return word.replace("'", "").replace('"', "")


def _remote(word: str) -> Optional[str]:
    """The host a URL word names, unless it is this machine."""
    match = _URL.search(word)
    host = (match.group(1) or match.group(2)) if match else None
    return None if host is None or host in _LOCAL_HOSTS else host


def _local(word: str) -> bool:
    """A pip argument that is a file or folder, not a package from the index."""
    return word.startswith((".", "/", "~", "$")) or word.endswith((".whl", ".tar.gz", ".zip")) or ("/" in word and "://" not in word)


def _pip_from_index(words: List[str]) -> bool:
    """``pip install ...`` (or ``python -m pip install``) without --no-index that installs a
    package by name or from a requirements file (not only local wheels and folders)."""
    if words and _PYTHON.match(words[0]) and words[1:3] == ["-m", "pip"]:
        words = ["pip"] + words[3:]
    if len(words) < 2 or not _PIP.match(words[0]) or words[1] != "install" or "--no-index" in words:
        return False
    named, previous = [], ""
    for word in words[2:]:
        if previous in ("-r", "--requirement"):
            named.append("-r")       # a requirements file names packages from the index
        elif previous not in _PIP_VALUED and not word.startswith("-"):
            named.append(word)
        previous = word
    return any(w == "-r" or not _local(w) for w in named)


def _download(words: List[str]) -> Optional[str]:
    """What the command downloads (the host a URL names; 'a git remote' for a fetch or pull
    that names none), or None."""
    if not words or words[0] in PRINTERS:
        return None
    host = next((h for h in map(_remote, words[1:]) if h), None)
    if host is None and words[0].rsplit("/", 1)[-1] == "git" and len(words) > 1 and words[1] in GIT_REMOTE[1:]:
        return "a git remote"
    return host


def fetches(lines: Sequence[str]) -> List[Tuple[str, str, str]]:
    """``(kind, command, what)`` for each command of ``lines`` that needs the internet: kind
    ``pip`` (an install from the index) or ``download`` (what: the host it reaches)."""
    found = []
    for line in lines:
        for piece in commands(line):
            words = [_unquoted(w) for w in raw_words(piece)]
            while words and "=" in words[0] and not words[0].startswith("-"):
                words = words[1:]     # VAR=value before the program
            if _pip_from_index(words):
                found.append(("pip", piece, "the package index"))
                continue
            host = _download(words)
            if host:
                found.append(("download", piece, host))
    return found
