"""The rendered script's squashfs stage-in, run with bash: the mount, and what it does without one.

The mount itself is tested on the local cluster (tests/integration/test_staging_on_cluster.py);
here the node lacks squashfuse or FUSE, which the cluster cannot be made to lack."""

import os
import re
import shutil
import subprocess

from slurmkit import Job
from slurmkit.render.runtime import runtime
from slurmkit.resolve.staging import pack


def _image_function(tmp_path):
    job = Job(name="s", profile="nibi", account="def-x", resources={"time": "1h"}, launch="true",
              stage={"inputs": [{"from": "shots.sqfs", "to": "shots"}]})
    script = job.render(warn=False)
    (call,) = re.findall(r"^(slurmkit_stage_in mount-image .*)$", script, flags=re.M)
    return runtime().text, call


def _run(tmp_path, path_dir):
    (tmp_path / "shots").mkdir()
    for i in range(20):
        (tmp_path / "shots" / f"s{i:02d}.txt").write_text(f"shot {i}\n")
    pack(tmp_path / "shots", tmp_path / "shots.sqfs", compression="none")
    function, call = _image_function(tmp_path)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {"PATH": str(path_dir), "SLURM_TMPDIR": str(scratch), "SLURM_SUBMIT_DIR": str(tmp_path)}
    result = subprocess.run([shutil.which("bash"), "-c", f"set -euo pipefail\n{function}\n{call}\n"],
                            env=env, capture_output=True, text=True)
    return result, scratch


def _bin_with(tmp_path, names, stubs=()):
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in names:
        os.symlink(shutil.which(name), folder / name)
    for name in stubs:
        (folder / name).write_text("#!/bin/sh\necho 'fuse: device not found' >&2\nexit 1\n")
        (folder / name).chmod(0o755)
    return folder


def test_without_fuse_the_image_is_extracted_and_its_copy_removed(tmp_path):
    result, scratch = _run(tmp_path, _bin_with(tmp_path, ["mkdir", "cp", "dirname", "rm", "unsquashfs", "nproc"], stubs=["squashfuse_ll"]))
    assert result.returncode == 0, result.stderr
    assert "cannot be mounted here (no squashfuse or no FUSE): extracting it" in result.stderr
    assert sorted(p.name for p in (scratch / "shots").iterdir()) == [f"s{i:02d}.txt" for i in range(20)]
    assert (scratch / "shots" / "s07.txt").read_text() == "shot 7\n"
    assert list((scratch / ".slurmkit" / "images").iterdir()) == []


def test_with_neither_squashfuse_nor_unsquashfs_the_stage_in_fails_and_says_what_to_do(tmp_path):
    result, scratch = _run(tmp_path, _bin_with(tmp_path, ["mkdir", "cp", "dirname", "rm"]))
    assert result.returncode == 1
    assert result.stderr.strip().endswith("can be neither mounted nor extracted here (no squashfuse, no unsquashfs): "
                                          "pack it to .tar or .pack")
