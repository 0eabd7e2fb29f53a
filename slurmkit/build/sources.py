"""Fetch, on the submit host, the sources a job's builds compile from, into the build cache
(slurmkit/resolve/buildsources.py says which, where, and what is changed in them).

The login node reaches PyPI; the compute node that builds may not, and a site's wheelhouse holds
no sources. So `slurmkit submit`, `slurmkit build` and `slurmkit env build` fetch each source
once, with pip (``pip download --no-deps --no-binary NAME``, so the site's pip configuration and
proxies apply), make slurmkit's change where one applies, and rename the folder into place only
whole, under a lock. The job stops with one line where its source is missing.
"""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Callable, Iterable, List, Mapping

from slurmkit.core.errors import ClusterError, InputError
from slurmkit.core.files import write_atomic
from slurmkit.resolve.buildsources import CXX17_CHANGE, source_change

#: the file beside a fetched source that says what it is (the job's log repeats it)
ABOUT = "SOURCE.txt"
Run = Callable[..., subprocess.CompletedProcess]


def fetch_sources(builds: Iterable, env: Mapping[str, str], run: Run = subprocess.run) -> List[Path]:
    """Fetch the source of each build that has one (BuildPlan.source), unless it is there; ``env``
    expands the folder's words (the job's $SLURM_SUBMIT_DIR is the submit folder). The folders."""
    from slurmkit.resolve.siterules import expand_variables

    folders = []
    for build in builds:
        if not build.source:
            continue
        text = expand_variables(build.source, env)
        if not text:
            raise InputError(None, None, "environment.build_cache", f"{build.source} reads a variable that is not set here: "
                             f"the source of {build.requirement} cannot be fetched into it")
        folders.append(_fetch(Path(text), build.name, build.requirement, run))
    return folders


def _fetch(folder: Path, name: str, requirement: str, run: Run) -> Path:
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{folder}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if list(folder.glob("*.tar.gz")):
            return folder
        partial = Path(f"{folder}.partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        result = run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", name, "-d", str(partial), requirement])
        archives = list(partial.glob("*.tar.gz"))
        if result.returncode != 0 or len(archives) != 1:
            shutil.rmtree(partial, ignore_errors=True)
            raise ClusterError(f"pip could not fetch the source of {requirement} (exit {result.returncode}; its output is "
                               "above): the job compiles from it, and nothing was submitted")
        _prepare(archives[0], name, requirement)
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(partial, folder)
    return folder


def _prepare(archive: Path, name: str, requirement: str) -> None:
    """Make slurmkit's change to ``archive`` where one applies, and write what was done beside it."""
    version = _archive_version(archive, name)
    fetched = hashlib.sha256(archive.read_bytes()).hexdigest()
    change = source_change(name, version)
    lines = [f"{archive.name} for {requirement}, fetched from the package index (sha256 {fetched})"]
    if change:
        _change_archive(archive, change)
        lines.append(f"changed by slurmkit: {change} (C++17 for PyTorch 2.1 and later, C++14 before, as upstream "
                     "Horovod's commit 3a31d933a13c does after this release)")
    write_atomic(archive.parent / ABOUT, "\n".join(lines) + "\n")


def _archive_version(archive: Path, name: str) -> str:
    match = re.match(rf"^{re.escape(name)}-(.+)\.tar\.gz$", archive.name, re.I)
    if not match:
        raise ClusterError(f"{archive.name} is not a source archive of {name}")
    return match.group(1)


def _change_archive(archive: Path, change: str) -> None:
    """Rewrite ``archive`` with ``change`` made to its files (one gzip'd tar, rewritten whole)."""
    changes = {CXX17_CHANGE: ("horovod/torch/CMakeLists.txt", with_cxx17_for_new_torch)}
    member_path, edit = changes[change]
    buffer = io.BytesIO()
    # gzip's header without a time: the same source changed again gives the same bytes, so the
    # same cache key (its sha256 is part of it).
    with tarfile.open(archive, "r:gz") as source, gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as packed, \
            tarfile.open(fileobj=packed, mode="w") as target:
        found = False
        for member in source.getmembers():
            file = source.extractfile(member) if member.isfile() else None
            data = file.read() if file is not None else None
            if data is not None and member.name.split("/", 1)[-1] == member_path:
                data = edit(data.decode("utf-8")).encode("utf-8")
                member.size, found = len(data), True
            target.addfile(member, io.BytesIO(data) if data is not None else None)
    if not found:
        raise ClusterError(f"{archive.name} has no {member_path}: slurmkit's change {change} cannot be made to it")
    archive.write_bytes(buffer.getvalue())     # in the .partial folder: visible only once whole


#: Horovod 0.28.1's horovod/torch/CMakeLists.txt: C++14 for every PyTorch from 1.5 on.
_CXX14_FOR_TORCH = re.compile(r'^if\(NOT Pytorch_VERSION VERSION_LESS "1\.5\.0"\)\n(\s+)set\(CMAKE_CXX_STANDARD 14\)\nendif\(\)$', re.M)


def with_cxx17_for_new_torch(text: str) -> str:
    """``text`` (horovod/torch/CMakeLists.txt) with C++17 where PyTorch is 2.1 or later, else C++14
    as before: slurmkit's own change, to the effect of upstream Horovod's commit 3a31d933a13c
    ("Compile using C++17 when using PyTorch 2.1"), which no release has. A file without the
    C++14 block it replaces is refused rather than built unchanged."""
    def cxx17(match: re.Match) -> str:
        indent = match.group(1)
        return ("# slurmkit: PyTorch 2.1 and later need C++17 (as upstream Horovod's commit 3a31d933a13c does)\n"
                f'if(NOT Pytorch_VERSION VERSION_LESS "2.1")\n{indent}set(CMAKE_CXX_STANDARD 17)\n'
                f'elseif(NOT Pytorch_VERSION VERSION_LESS "1.5.0")\n{indent}set(CMAKE_CXX_STANDARD 14)\nendif()')

    changed, count = _CXX14_FOR_TORCH.subn(cxx17, text)
    if count != 1:
        raise ClusterError("horovod/torch/CMakeLists.txt does not set C++14 for PyTorch as Horovod 0.28.1 does: "
                           "slurmkit's C++17 change cannot be made to this source")
    return changed

