"""An NCCL of the user's choosing (``builds: [horovod, {nccl: TARBALL}]``) on the real local
cluster (Debian's Slurm 22.05; nothing here depends on the version): the job unpacks the
tarball once into the build cache, runs the site's ``setrpaths.sh`` on it, builds Horovod with
``HOROVOD_NCCL_HOME`` pointing at it, and runs with it on ``LD_LIBRARY_PATH``; a second job
finds both in the cache.

Two stand-ins keep this in the default tier (the real Horovod build takes minutes: the slow
tier, test_horovod_build_slow.py): the tarball is a small one in NVIDIA's layout (one folder
holding ``lib/libnccl.so`` and ``include/nccl.h``), and the ``horovod`` that pip builds is a
tiny source package, laid in the build cache's sources folder where `slurmkit submit` would have
fetched Horovod's, whose setup.py writes down the HOROVOD_NCCL_HOME it was built with: the build
job runs real pip, in a real virtualenv, through slurmkit's own build step and cache.
"""

import subprocess
import tarfile
import textwrap
from pathlib import Path

import pytest
import yaml

from slurmkit import Job

from .slurm import STATE, sbatch, wait_for_job

VERSION = "2.99.1-1+cuda12.0"
TARBALL = f"nccl_{VERSION}_x86_64.txz"
#: what slurmkit's build step installs before it builds Horovod (resolve.BUILD_REQUIRES).
BUILD_REQUIRES = ("setuptools", "wheel", "cmake", "packaging", "psutil", "pyyaml", "cloudpickle", "cffi")

SETUP_PY = '''
import os
from setuptools import setup
os.makedirs("horovod", exist_ok=True)
with open("horovod/built_with.txt", "w") as f:
    f.write(os.environ.get("HOROVOD_NCCL_HOME", "unset"))
setup(name="horovod", version="0.0.1", packages=["horovod"], package_data={"horovod": ["built_with.txt"]})
'''
PROGRAM = ("import horovod, os, pathlib; "
           "print('built with', (pathlib.Path(horovod.__file__).parent / 'built_with.txt').read_text()); "
           "print('library path', os.environ['LD_LIBRARY_PATH'])")


@pytest.fixture(scope="module")
def build_venv():
    """A virtualenv with Horovod's build requirements, made once and kept (as users keep one)."""
    venv = STATE / "venvs" / "horovod-build-requires"
    if not (venv / "ready").exists():
        subprocess.run(["rm", "-rf", str(venv)], check=True)
        subprocess.run(["/usr/bin/python3.11", "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", *BUILD_REQUIRES], check=True)
        (venv / "ready").write_text("")
    subprocess.run([str(venv / "bin" / "pip"), "uninstall", "-q", "-y", "horovod"], capture_output=True)
    return venv


def _nccl_tarball(folder: Path) -> Path:
    top = folder / TARBALL.replace(".txz", "")
    (top / "lib").mkdir(parents=True)
    (top / "include").mkdir()
    (top / "lib" / "libnccl.so.2").write_text("a stand-in for NCCL's library\n")
    (top / "lib" / "libnccl.so").symlink_to("libnccl.so.2")
    (top / "include" / "nccl.h").write_text("#define NCCL_MAJOR 2\n")
    with tarfile.open(folder / TARBALL, "w:xz") as tar:
        tar.add(top, arcname=top.name)
    return folder / TARBALL


def _horovod_source(folder: Path) -> Path:
    """The stand-in ``horovod==0.0.1`` as a source distribution in ``folder``."""
    source = folder / "horovod-0.0.1"
    (source / "horovod").mkdir(parents=True)
    (source / "setup.py").write_text(SETUP_PY)
    (source / "horovod" / "__init__.py").write_text("")
    (source / "horovod" / "torch.py").write_text("")        # the build's check imports horovod.torch
    (source / "PKG-INFO").write_text("Metadata-Version: 1.0\nName: horovod\nVersion: 0.0.1\n")
    with tarfile.open(folder / "horovod-0.0.1.tar.gz", "w:gz") as tar:
        tar.add(source, arcname=source.name)
    return folder


def _job(tmp_path, build_venv, name):
    spec = {"name": name, "profile": "lab-nccl", "account": "def-test", "kind": "serial",
            "resources": {"time": "10m", "mem": "1G", "gpus": "p100:1"},   # the stand-in P100s: NCCL is for GPU builds
            "environment": {"venv": {"path": str(build_venv)}, "builds": ["horovod==0.0.1", {"nccl": TARBALL}],
                            "build_cache": str(tmp_path / "cache"),
                            "variables": {"PIP_NO_INDEX": "1"}},   # nothing from an index: the source is in the cache
            "launch": {"command": ["python", "-c", PROGRAM]}}
    (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(spec))
    return Job.from_yaml(tmp_path / f"{name}.yaml")


def _run(tmp_path, job, name):
    script = tmp_path / f"{name}.sbatch"
    script.write_text(job.render(warn=False))
    submission = sbatch(script, "--output", str(tmp_path / f"{name}.out"))
    assert submission.returncode == 0, submission.stderr
    row = wait_for_job(submission.job_id, timeout=300)
    out = (tmp_path / f"{name}.out").read_text()
    assert row["State"] == "COMPLETED", out[-4000:]
    return out


def test_nccl_is_unpacked_once_fixed_up_built_against_and_loaded(cluster, tmp_path, build_venv, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _nccl_tarball(tmp_path)
    _horovod_source(tmp_path / "cache" / "sources" / "horovod-0.0.1")     # where the submit host fetches it
    setrpaths = tmp_path / "setrpaths.sh"
    setrpaths.write_text(textwrap.dedent(f"""\
        #!/bin/bash
        echo "$@" >> {tmp_path}/setrpaths.calls
        """))
    setrpaths.chmod(0o755)
    (tmp_path / "site_profiles").mkdir()
    (tmp_path / "site_profiles" / "lab-nccl.yaml").write_text(
        f"name: lab-nccl\nextends: local\nsoftware:\n  setrpaths: {setrpaths}\n")
    home = tmp_path / "cache" / "nccl" / VERSION

    first = _run(tmp_path, _job(tmp_path, build_venv, "first"), "first")
    assert f"slurmkit: unpacking NCCL from {tmp_path / TARBALL} into {home}" in first
    assert (home / "lib" / "libnccl.so").read_text() == "a stand-in for NCCL's library\n"
    assert (tmp_path / "setrpaths.calls").read_text() == f"--path {home}.partial/{TARBALL[:-4]} --add_origin\n"
    assert f"built with {home}" in first                                   # the build saw its path
    assert f"library path {home}/lib" in first
    (key,) = (tmp_path / "cache" / "horovod").glob("lab-nccl-*/key.txt")
    assert f"variable HOROVOD_NCCL_HOME={home}" in key.read_text()         # and it is part of the cache key

    second = _run(tmp_path, _job(tmp_path, build_venv, "second"), "second")
    assert "unpacking NCCL" not in second and "slurmkit: building" not in second
    assert "horovod==0.0.1 from the build cache" in second and f"built with {home}" in second
    assert len((tmp_path / "setrpaths.calls").read_text().splitlines()) == 1
