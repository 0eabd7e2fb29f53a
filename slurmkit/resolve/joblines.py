"""Site rules about what a job's own lines do (its command and setup), read as words the way
downloads.py reads them: a compiler flag that builds for the CPU the job happens to compile on
(rules.host_cpu_flags: Narval's -xHost and -march=native), and a library preloaded that takes
effect only under one launcher (rules.preload_launcher: Trillium's VAST MPI-IO preload, mpirun).

Both are warnings: the job runs, slower than the site's page says it could, or (an Intel -x<code>
build on AMD CPUs) stops at its first instruction, which slurmkit cannot see before it runs.
"""

from __future__ import annotations

import fnmatch
from typing import List, Sequence, Tuple

from slurmkit.core.findings import Finding
from slurmkit.core.shellwords import commands, raw_words
from slurmkit.sites.profiles import SiteProfile

#: Programs that compile (and the MPI wrappers around them): their flags are what is built.
COMPILERS = ("cc", "c++", "gcc", "g++", "gfortran", "clang", "clang++", "flang", "icc", "icpc", "ifort", "icx", "icpx", "ifx",
             "nvcc", "nvc", "nvc++", "nvfortran", "mpicc", "mpicxx", "mpic++", "mpif77", "mpif90", "mpifort", "mpiicc",
             "mpiicpc", "mpiifort")


def _source(urls: Sequence[str]) -> str:
    return f" (source: {urls[0]})" if urls else ""


def _places(spec) -> List[Tuple[str, Sequence[str]]]:
    command = (spec.launch.shell,) if spec.launch.shell else (" ".join(spec.launch.command),)
    return [("launch.shell" if spec.launch.shell else "launch.command", command), ("environment.setup", spec.environment.setup)]


def _unquoted(word: str) -> str:
    return word.replace("'", "").replace('"', "")


def _build_flags(piece: str) -> List[str]:
    """The flags a command compiles with: a compiler's own words, and the words of a
    ``*FLAGS=`` assignment (``export CFLAGS="-O3 -march=native"``, ``cmake -DCMAKE_C_FLAGS=...``)."""
    words = [_unquoted(w) for w in raw_words(piece)]
    flags = []
    for word in words:
        name, equals, value = word.partition("=")
        if equals and name.lstrip("-D").upper().endswith("FLAGS"):
            flags += value.split()
    while words and "=" in words[0] and not words[0].startswith("-"):
        words = words[1:]
    if words and words[0].rsplit("/", 1)[-1] in COMPILERS:
        flags += words[1:]
    return flags


def host_cpu_flag_findings(spec, profile: SiteProfile) -> List[Finding]:
    """A warning for each compiler flag of the job's lines that builds for the host's CPU where
    the site says such builds run badly or not at all (rules.host_cpu_flags)."""
    rule = profile.rules.host_cpu_flags
    if rule is None:
        return []
    instead = f"; build with {rule.instead} instead" if rule.instead else ""
    findings = []
    for field, lines in _places(spec):
        for line in lines:
            for piece in commands(line):
                bad = [f for f in _build_flags(piece) if any(fnmatch.fnmatchcase(f, p) for p in rule.flags)]
                findings += [Finding("warning", field, f"{flag!r} builds for the CPU the job compiles on: on {profile.name} it "
                                     f"gives code that runs as on the oldest CPUs, or (an Intel -x<code> build) does not run "
                                     f"at all{instead}{_source(rule.source)}") for flag in dict.fromkeys(bad)]
    return findings


def preload_launcher_findings(spec, profile: SiteProfile, launcher: str) -> List[Finding]:
    """A warning where the job's setup preloads a library the site says takes effect only under
    another launcher than the job's (rules.preload_launcher)."""
    rule = profile.rules.preload_launcher
    if rule is None or not launcher or launcher == rule.launcher:
        return []
    for field, lines in _places(spec):
        if any(rule.preload in word for line in lines for piece in commands(line) for word in raw_words(piece)):
            return [Finding("warning", field, f"the job preloads {rule.preload}, which takes effect only under {rule.launcher}, "
                            f"but it runs its command with {launcher}: set 'launch.launcher: {rule.launcher}', or leave the "
                            f"preload out{_source(rule.source)}")]
    return []
