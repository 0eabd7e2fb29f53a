"""What the submit host knows when a script is rendered that the spec does not say, for the
site rules that need it (slurmkit/siterules.py): the bytes the staged inputs take on a node's
disk (the --tmp Rorqual needs for them). resolve() takes these as an input and still reads
nothing itself, so the same spec, profile and facts always give the same script; Job gathers
them (job.py), only for a site whose rules use them.
"""

from pathlib import Path
from typing import NamedTuple, Tuple

from .localdisk import StagedSize, staged_sizes


class LocalFacts(NamedTuple):
    staged: Tuple[StagedSize, ...] = ()     # each staged input on the node's disk (localdisk.py)


def gather(spec, profile, base_dir: Path) -> LocalFacts:
    """The facts ``profile``'s rules use, read from this host for ``spec`` (relative paths from ``base_dir``)."""
    staged = staged_sizes(spec, base_dir) if profile.rules.tmp_request and spec.stage else ()
    return LocalFacts(staged=staged)
