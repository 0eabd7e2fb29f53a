"""The folder a job script is in at a given line, from the ``cd`` lines before it.

A relative path (``source .env/bin/activate``) means what it meant where the script read it:
after ``cd /home/u/proj`` that is ``/home/u/proj/.env``. slurmkit runs its own part of the job
(the virtualenv, the modules) before the script's kept lines, in the submit folder, so such a
path is written out from the folder the ``cd`` named, or, where import cannot know that folder,
the line stays among the kept ones, after the ``cd``.
"""

from __future__ import annotations

import posixpath
import re
from typing import Dict, Mapping, Optional, Sequence

from slurmkit.port import bashtree

#: a folder written out in full: absolute, under $HOME or $SLURM_TMPDIR, with nothing else to expand
_KNOWN_ROOT = re.compile(r"(/|\$\{?(HOME|SLURM_TMPDIR)\}?(/|$))[^$`*?\[]*")
_SUBMIT = re.compile(r"\$\{?(SLURM_SUBMIT_DIR|PBS_O_WORKDIR)\}?/?")
#: a relative folder with nothing to expand
_PLAIN_RELATIVE = re.compile(r"[^/$`*?\[~-][^$`*?\[]*")


def folder_at(tree: Mapping[int, Sequence[bashtree.Statement]], values: Dict[str, str], number: int) -> Optional[str]:
    """Where the script is when line ``number`` runs: "" for the submit folder (no ``cd`` before,
    or back to $SLURM_SUBMIT_DIR), a folder relative to it or written out in full, or None where
    a ``cd`` before it goes where import cannot tell (computed, in a block, ``cd -``, pushd)."""
    folder: Optional[str] = ""
    for first in sorted(line for line in tree if line < number):
        for command in bashtree.walk(tree[first], functions=False):
            if command.name in ("pushd", "popd") or (command.name == "cd" and command.within):
                folder = None
            elif command.name == "cd":
                folder = _moved(folder, [w for w in command.argv[1:] if w not in ("-P", "-L", "-e", "-@")], values)
    return folder


def _moved(folder: Optional[str], words: Sequence[str], values: Dict[str, str]) -> Optional[str]:
    target = bashtree.substituted(words[0], values) if words else "$HOME"
    if target.startswith("~"):
        target = "$HOME" + target[1:]
    if _SUBMIT.fullmatch(target):
        return ""
    if _KNOWN_ROOT.fullmatch(target):
        return posixpath.normpath(target)
    if folder is not None and _PLAIN_RELATIVE.fullmatch(target):
        return posixpath.normpath(posixpath.join(folder, target)) if folder else posixpath.normpath(target)
    return None


def resolved(path: str, folder: Optional[str]) -> Optional[str]:
    """``path`` as the script meant it in ``folder`` (folder_at): a path written out in full is
    itself; a relative one is joined to the folder; None where the folder is unknown."""
    if path.startswith(("/", "~", "$")) or folder == "":
        return path
    if folder is None:
        return None
    return posixpath.normpath(posixpath.join(folder, path))
