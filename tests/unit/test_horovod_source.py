"""Horovod is compiled from its release's source, fetched on the submit host into the build cache,
with slurmkit's change to C++17 for PyTorch 2.1 and later: which builds get a fetched source,
which versions get the change, what the change does for each torch, and the fetch itself (with a
stand-in pip that writes a made-up source archive; the real one is the slow tier's)."""

import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from slurmkit.api.job import Job
from slurmkit.build.sources import fetch_sources, with_cxx17_for_new_torch
from slurmkit.core.errors import ClusterError
from slurmkit.render.runtime import runtime
from slurmkit.resolve.buildsources import CXX17_CHANGE, source_change

#: the shape of the block Horovod 0.28.1's horovod/torch/CMakeLists.txt sets its C++ standard with
#: (written here for the test, around it lines of no consequence)
TORCH_CMAKE = ('set(Pytorch_CXX11 ${Pytorch_CXX11} PARENT_SCOPE)\n'
               'if(NOT Pytorch_VERSION VERSION_LESS "1.5.0")\n'
               '    set(CMAKE_CXX_STANDARD 14)\n'
               'endif()\n'
               'message(STATUS "standard ${CMAKE_CXX_STANDARD}")\n')


def _job(profile="local", builds=("horovod==0.28.1", "mpi4py"), **environment):
    return Job(name="hvd", profile=profile, account="def-a", kind="horovod",
               resources={"time": "1h", "nodes": 2, "tasks_per_node": 2},
               environment={"modules": ["openmpi/4.1.5"], "venv": {"packages": ["torch"]}, "builds": list(builds),
                            "build_cache": "/cache", **environment},
               launch={"command": "python train.py"})


def test_horovod_compiles_from_a_source_in_the_build_cache_and_mpi4py_from_the_index():
    builds = {b.name: b for b in _job().resolve().plan.builds}
    assert builds["horovod"].source == "/cache/sources/horovod-0.28.1"
    assert builds["mpi4py"].source == ""


def test_an_unpinned_horovod_has_its_own_source_folder():
    (build,) = _job(builds=["horovod"]).resolve().plan.builds
    assert build.source == "/cache/sources/horovod-newest"


def test_a_wheelhouse_site_tries_its_wheel_then_compiles_the_fetched_source_not_the_wheelhouse():
    """pip wheel --no-index horovod on a wheelhouse site copied the site's wheel and compiled nothing."""
    script = _job(profile="narval", builds=["horovod"], modules=["openmpi/4.1.5", "cuda/12.2", "nccl/2.18.3"]).render()
    call = script[script.index("slurmkit_on_each_node slurmkit_horovod_wheel "):].split("\n")[:2]
    assert call == ["slurmkit_on_each_node slurmkit_horovod_wheel --frameworks pytorch --profile narval --cpu-only \\",
                    "    --cache /cache"]
    # the runtime compiles $cache/sources/horovod-newest (test_horovod_wheel_shell.py checks it against the plan's source)


@pytest.mark.parametrize("name, version, change", [
    ("horovod", "0.28.1", CXX17_CHANGE), ("horovod", "0.28.0", CXX17_CHANGE), ("horovod", "0.21", CXX17_CHANGE),
    ("horovod", "0.29.0", None), ("horovod", "1.0.0rc1", None), ("mpi4py", "3.1.4", None),
])
def test_the_cxx17_change_is_made_to_the_horovod_releases_that_compile_torch_as_cxx14(name, version, change):
    assert source_change(name, version) == change


def test_the_change_keeps_cxx14_for_old_torch_and_gives_cxx17_from_torch_2_1():
    changed = with_cxx17_for_new_torch(TORCH_CMAKE)
    assert 'if(NOT Pytorch_VERSION VERSION_LESS "2.1")\n    set(CMAKE_CXX_STANDARD 17)\n' in changed
    assert 'elseif(NOT Pytorch_VERSION VERSION_LESS "1.5.0")\n    set(CMAKE_CXX_STANDARD 14)\nendif()' in changed
    assert "3a31d933a13c" in changed        # the upstream commit that does the same, named in the file


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
@pytest.mark.parametrize("torch, standard", [("2.0.1", "14"), ("2.1.0", "17"), ("2.5.1", "17"), ("2.13.0", "17"), ("1.4.0", "")])
def test_cmake_reads_the_changed_file_as_cxx17_for_torch_2_1_and_later(tmp_path, torch, standard):
    script = tmp_path / "torch.cmake"
    script.write_text(f'set(Pytorch_VERSION "{torch}")\n' + with_cxx17_for_new_torch(TORCH_CMAKE))
    result = subprocess.run(["cmake", "-P", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert f"standard {standard}\n" in result.stdout + result.stderr


def test_a_source_without_the_cxx14_block_is_refused_rather_than_built_unchanged():
    with pytest.raises(ClusterError, match="cannot be made"):
        with_cxx17_for_new_torch(TORCH_CMAKE.replace("14", "17"))


# ------------------------------------------------------------------------------ the fetch

def _stand_in_pip(calls, fails=False):
    """pip download as a stand-in: the source archive of horovod 0.28.1, made up, in -d's folder."""
    def run(argv, **_):
        calls.append(argv)
        if fails:
            return subprocess.CompletedProcess(argv, 1)
        folder = Path(argv[argv.index("-d") + 1])
        with tarfile.open(folder / "horovod-0.28.1.tar.gz", "w:gz") as archive:
            for name, text in (("horovod-0.28.1/horovod/torch/CMakeLists.txt", TORCH_CMAKE), ("horovod-0.28.1/setup.py", "")):
                info = tarfile.TarInfo(name)
                info.size = len(text.encode())
                archive.addfile(info, io.BytesIO(text.encode()))
        return subprocess.CompletedProcess(argv, 0)
    return run


def _cmake_in(archive: Path) -> str:
    with tarfile.open(archive) as source:
        return source.extractfile("horovod-0.28.1/horovod/torch/CMakeLists.txt").read().decode()


def test_the_fetch_asks_pip_for_the_source_and_makes_the_change_once(tmp_path):
    plan = _job(build_cache=str(tmp_path / "cache")).resolve().plan
    calls = []
    (folder,) = fetch_sources(plan.builds, {}, run=_stand_in_pip(calls))
    assert folder == tmp_path / "cache" / "sources" / "horovod-0.28.1"
    assert calls[0][:2] == [sys.executable, "-m"]
    assert calls[0][2:6] == ["pip", "download", "--no-deps", "--no-binary"] and calls[0][-1] == "horovod==0.28.1"
    assert "set(CMAKE_CXX_STANDARD 17)" in _cmake_in(folder / "horovod-0.28.1.tar.gz")
    assert f"changed by slurmkit: {CXX17_CHANGE}" in (folder / "SOURCE.txt").read_text()
    fetch_sources(plan.builds, {}, run=_stand_in_pip(calls))
    assert len(calls) == 1, "fetched once"


def test_a_source_fetched_again_is_the_same_bytes_so_the_same_cache_key(tmp_path, monkeypatch):
    archives = []
    for cache, now in (("one", 1.7e9), ("two", 1.8e9)):      # fetched at two times (gzip's header holds one)
        monkeypatch.setattr(time, "time", lambda now=now: now)
        (folder,) = fetch_sources(_job(build_cache=str(tmp_path / cache)).resolve().plan.builds, {}, run=_stand_in_pip([]))
        archives.append((folder / "horovod-0.28.1.tar.gz").read_bytes())
    assert archives[0] == archives[1]


def test_a_failed_fetch_leaves_nothing_and_says_nothing_was_submitted(tmp_path):
    plan = _job(build_cache=str(tmp_path / "cache")).resolve().plan
    with pytest.raises(ClusterError, match="nothing was submitted"):
        fetch_sources(plan.builds, {}, run=_stand_in_pip([], fails=True))
    assert sorted(p.name for p in (tmp_path / "cache" / "sources").iterdir()) == ["horovod-0.28.1.lock"]


def test_a_relative_build_cache_is_fetched_into_the_spec_folder(tmp_path):
    plan = _job(build_cache="cache").resolve().plan
    (folder,) = fetch_sources(plan.builds, {"SLURM_SUBMIT_DIR": str(tmp_path)}, run=_stand_in_pip([]))
    assert folder == tmp_path / "cache" / "sources" / "horovod-0.28.1"


# ------------------------------------------------------------------------------ in the job

FAKE_PIP = """#!/bin/bash
echo "pip $*" >> "$PIP_LOG"
if [ "$1" = wheel ]; then
    while [ "$1" != -w ]; do shift; done
    touch "$2/horovod-0.28.1-cp311-cp311-linux_x86_64.whl"
fi
exit 0
"""


def _functions(*names: str) -> str:
    return "".join(re.search(rf"^{name}\(\) \{{.*?^\}}\n", runtime().text, re.S | re.M).group(0) for name in names)


def _build(tmp_path: Path, source: Path) -> subprocess.CompletedProcess:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "pip").write_text(FAKE_PIP)
    (bin_dir / "pip").chmod(0o755)
    if not (bin_dir / "python").exists():
        (bin_dir / "python").symlink_to(sys.executable)
    body = _functions("slurmkit_build", "_sk_fetched_source") + (
        'slurmkit_build local "" cmake horovod horovod==0.28.1 "$SOURCE" "$CACHE" pass HOROVOD_WITH_MPI=1\n')
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PIP_LOG": str(tmp_path / "pip.log"),
           "CACHE": str(tmp_path / "cache"), "SOURCE": str(source)}
    return subprocess.run(["bash", "-euo", "pipefail", "-c", body], env=env, capture_output=True, text=True)


def test_the_job_compiles_the_fetched_archive_and_says_what_it_is(tmp_path):
    source = tmp_path / "sources" / "horovod-0.28.1"
    source.mkdir(parents=True)
    (source / "horovod-0.28.1.tar.gz").write_text("a source")
    (source / "SOURCE.txt").write_text(f"changed by slurmkit: {CXX17_CHANGE}\n")
    result = _build(tmp_path, source)
    assert result.returncode == 0, result.stderr
    (wheel_call,) = [line for line in (tmp_path / "pip.log").read_text().splitlines() if line.startswith("pip wheel")]
    assert wheel_call.endswith(f" {source}/horovod-0.28.1.tar.gz")
    assert f"slurmkit: source: changed by slurmkit: {CXX17_CHANGE}" in result.stderr
    assert "pip install --no-index --no-deps --force-reinstall " in (tmp_path / "pip.log").read_text()


def test_another_source_is_another_cache_key(tmp_path):
    source = tmp_path / "sources" / "horovod-0.28.1"
    source.mkdir(parents=True)
    (source / "horovod-0.28.1.tar.gz").write_text("a source")
    assert _build(tmp_path, source).returncode == 0
    (source / "horovod-0.28.1.tar.gz").write_text("the source changed otherwise")
    assert _build(tmp_path, source).returncode == 0
    assert len(list((tmp_path / "cache" / "horovod").glob("local-*/*.whl"))) == 2


def test_a_job_whose_source_was_not_fetched_stops_and_says_where_it_is_fetched(tmp_path):
    result = _build(tmp_path, tmp_path / "sources" / "horovod-0.28.1")
    assert result.returncode != 0
    assert "no source of horovod==0.28.1 in " in result.stderr and "slurmkit submit" in result.stderr
    assert not (tmp_path / "pip.log").exists(), "nothing was built"


def test_a_remote_submission_warns_that_it_does_not_fetch_the_source():
    from slurmkit.slurm.remote_jobs import _unfetched_sources

    (warning,) = _unfetched_sources(_job().resolve().plan)
    assert warning.field == "environment.builds" and "horovod==0.28.1 is compiled from its source" in warning.message
    assert _unfetched_sources(_job(builds=["mpi4py"]).resolve().plan) == []


def test_submit_fetches_the_source_before_sbatch(tmp_path, monkeypatch):
    import slurmkit.build.sources
    import slurmkit.slurm.submit

    order = []
    monkeypatch.setattr(slurmkit.build.sources, "fetch_sources", lambda builds, env: order.append(("fetch", env["SLURM_SUBMIT_DIR"])))
    monkeypatch.setattr(slurmkit.slurm.submit, "submit_script", lambda *a, **k: order.append(("sbatch",)))
    job = _job(build_cache=str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    job.submit(folder=tmp_path / "logs")
    assert order == [("fetch", str(tmp_path)), ("sbatch",)]
