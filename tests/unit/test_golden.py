"""Golden scripts: every bundled profile x job kind, rendered and compared byte for byte.

Regenerate after an intended change with SLURMKIT_UPDATE_GOLDEN=1 and review the diff like
code. A combination the cluster cannot run is pinned as its .errors file instead.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from slurmkit.api.job import Job
from slurmkit.render.render import render
from slurmkit.sites.profiles import list_profiles
from slurmkit.spec.spec import spec_from_mapping

from .golden_specs import KINDS, spec_for

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
UPDATE = os.environ.get("SLURMKIT_UPDATE_GOLDEN") == "1"
PROFILES = sorted(p.name for p in list_profiles()[0])
CASES = [(profile, kind) for profile in PROFILES for kind in KINDS]


def _outcome(profile_name, kind):
    """(suffix, text): the script, or the errors when the cluster cannot run this kind."""
    from slurmkit.sites.profiles import load_profile

    # Named as a user's file is, so that the commands the script names (slurmkit env build
    # ddp-demo.yaml) are ones a user could run, not the Python API's.
    job = Job(spec=spec_from_mapping(spec_for(load_profile(profile_name), kind), source=f"{kind}-demo.yaml"))
    resolution = job.resolve()
    if resolution.plan is None:
        return ".errors", "".join(f"{f}\n" for f in resolution.errors)
    return ".sbatch", render(resolution.plan)


@pytest.mark.parametrize("profile,kind", CASES)
def test_golden_output_is_unchanged(profile, kind):
    suffix, text = _outcome(profile, kind)
    path = GOLDEN / profile / f"{kind}{suffix}"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in path.parent.glob(f"{kind}.*"):
            stale.unlink()
        path.write_text(text)
    assert path.exists(), f"no golden file {path}; run with SLURMKIT_UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text()


def test_every_bundled_profile_has_a_working_script_for_most_kinds():
    scripts = sorted(GOLDEN.glob("*/*.sbatch"))
    assert len(scripts) >= len(PROFILES) * 3


def test_rendering_twice_gives_identical_bytes():
    first = [_outcome(p, k)[1] for p, k in CASES]
    assert first == [_outcome(p, k)[1] for p, k in CASES]


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="tests/run installs shellcheck")
def test_every_golden_script_passes_bash_n_and_shellcheck():
    scripts = sorted(GOLDEN.glob("*/*.sbatch"))
    assert scripts
    for script in scripts:
        subprocess.run(["bash", "-n", str(script)], check=True)
    result = subprocess.run(["shellcheck", "--shell=bash", *map(str, scripts)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
