"""slurmkit's runtime library by itself: its own bash tests (tests/runtime/test_*.sh), run
against slurmkit/render/runtime.sh with no template and no script around it, and shellcheck."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from slurmkit.render.runtime import runtime

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "slurmkit" / "render" / "runtime.sh"


@pytest.mark.parametrize("test", sorted((ROOT / "tests" / "runtime").glob("test_*.sh")), ids=lambda p: p.stem)
def test_the_runtimes_own_bash_tests_pass(test):
    env = {**os.environ, "SLURMKIT_RUNTIME": str(LIBRARY)}
    done = subprocess.run([shutil.which("bash"), str(test)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_runtime_passes_bash_n_and_shellcheck():
    assert subprocess.run(["bash", "-n", str(LIBRARY)]).returncode == 0
    result = subprocess.run(["shellcheck", "--shell=bash", str(LIBRARY)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
    tests = sorted(str(p) for p in (ROOT / "tests" / "runtime").glob("*.sh"))   # (test functions are called by name: info SC2317)
    result = subprocess.run(["shellcheck", "--shell=bash", "--severity=warning", "-x", *tests], capture_output=True, text=True,
                            cwd=ROOT / "tests" / "runtime")
    assert result.returncode == 0, result.stdout


def test_the_name_carries_the_version_and_the_hash_of_the_file():
    from slurmkit.core.version import __version__

    lib = runtime()
    assert lib.name == f"slurmkit-runtime-{__version__}-{lib.sha256[:12]}.sh"
    assert lib.text == LIBRARY.read_text()
