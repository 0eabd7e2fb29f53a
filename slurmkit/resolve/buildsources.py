"""Where a build's source comes from, and what slurmkit changes in it before it is compiled.

Horovod is compiled from its source distribution, fetched from PyPI on the submit host (the login
node, which reaches the internet) into the build cache; the job compiles that file. The job
cannot fetch it itself: compute nodes of most Alliance clusters reach no internet, and the
site's wheelhouse holds wheels only, so ``pip wheel --no-index horovod`` there copies the site's
prebuilt wheel rather than compiling one.

Horovod's releases up to 0.28.1, its last, compile their PyTorch part as C++14
(``horovod/torch/CMakeLists.txt``), and PyTorch 2.1 and later refuse that ("You need C++17 to
compile PyTorch"), while the Alliance requires PyTorch 2.5.1 or later on H100s. Upstream fixed
it after the release (commit 3a31d933a13c, "Compile using C++17 when using PyTorch 2.1"), in
no release since. slurmkit makes the same change to the released source (build/sources.py):
C++17 where the torch it compiles against is 2.1 or later, C++14 as before otherwise, so one
changed source serves every torch.
"""

from __future__ import annotations

import re
from typing import Optional, Tuple

#: the builds compiled from a source fetched on the submit host (mpi4py still comes from the index)
FETCHED_SOURCES = ("horovod",)
#: the newest Horovod release that compiles its PyTorch part as C++14 whatever the torch
LAST_CXX14_HOROVOD = (0, 28, 1)
#: the name of slurmkit's change for those, written beside the changed source and in the job's log
CXX17_CHANGE = "cxx17-for-torch-2.1"
#: the folder name of a source fetched for an unpinned build (the newest release when fetched)
NEWEST = "newest"


def source_folder(cache: str, name: str, version: Optional[str]) -> str:
    """Where the job finds ``name``'s fetched source (one archive): a folder of the build cache,
    named by the pinned version (``horovod-0.28.1``), or ``horovod-newest`` for an unpinned build."""
    return f"{cache}/sources/{name}-{version or NEWEST}"


def fetched(name: str) -> bool:
    """Whether ``name`` is compiled from a source fetched on the submit host."""
    return name in FETCHED_SOURCES


def source_change(name: str, version: str) -> Optional[str]:
    """The change slurmkit makes to ``name`` ``version``'s source before it is compiled, or None.
    A version that does not parse as a release (``0.29.0.dev1`` parses as 0.29.0) is left as it is."""
    release = _release(version)
    if name == "horovod" and release is not None and release <= LAST_CXX14_HOROVOD:
        return CXX17_CHANGE
    return None


def _release(version: str) -> Optional[Tuple[int, ...]]:
    match = re.match(r"^(\d+)\.(\d+)(?:\.(\d+))?", version)
    return tuple(int(part or 0) for part in match.groups()) if match else None
