"""slurmkit pack: archives that tar reads back, shards of even size, a manifest, and check's advice."""

import json
import shutil
import subprocess
import tarfile

import pytest
from click.testing import CliRunner

from slurmkit import Job
from slurmkit.cli.main import main
from slurmkit.resolve.staging import pack, split_evenly


def _dataset(folder, count=30, size=1000, text=False):
    for i in range(count):
        sub = folder / f"d{i // 10}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{i:03d}.txt").write_bytes((b"same line\n" * (size // 10)) if text else bytes((i * 7 + j) % 251 for j in range(size)))


def test_a_pack_folder_has_even_shards_a_manifest_and_every_file_once(tmp_path):
    _dataset(tmp_path / "data")
    manifest = pack(tmp_path / "data", tmp_path / "data.pack", shards=3, compression="none")
    assert (manifest.files, manifest.bytes, len(manifest.shards)) == (30, 30000, 3)
    assert [s.files for s in manifest.shards] == [10, 10, 10]
    names = []
    for shard in manifest.shards:
        with tarfile.open(tmp_path / "data.pack" / shard.name) as archive:
            names += [m.name for m in archive.getmembers() if m.isfile()]
    assert sorted(names) == sorted(f"d{i // 10}/f{i:03d}.txt" for i in range(30))
    assert json.loads((tmp_path / "data.pack" / "manifest.json").read_text())["files"] == 30


def test_compressible_data_is_packed_with_zstd_when_auto(tmp_path):
    _dataset(tmp_path / "text", text=True)
    manifest = pack(tmp_path / "text", tmp_path / "text.tar.zst", compression="auto")
    assert manifest.compression == "zstd"
    listing = subprocess.run(["tar", "--zstd", "-tf", str(tmp_path / "text.tar.zst")], capture_output=True, text=True, check=True).stdout
    assert len([line for line in listing.splitlines() if line.endswith(".txt")]) == 30
    assert (tmp_path / "text.tar.zst.manifest.json").exists()


def test_split_evenly_keeps_neighbours_together():
    files = [(f"f{i}", size) for i, size in enumerate([5, 5, 5, 5, 10, 10])]
    assert [[name for name, _ in group] for group in split_evenly(files, 2)] == [["f0", "f1", "f2", "f3"], ["f4", "f5"]]


def test_pack_cli_refuses_a_missing_folder_in_one_line(tmp_path):
    result = CliRunner().invoke(main, ["pack", str(tmp_path / "nope"), "-o", str(tmp_path / "x.tar")])
    assert result.exit_code == 2 and result.output.strip() == f"error: {tmp_path / 'nope'}: not a folder"


def _small_files_advice(tmp_path, profile_lines):
    folder = tmp_path / "images"
    folder.mkdir()
    for i in range(1200):
        (folder / f"{i}.jpg").write_bytes(b"x" * 100)
    (tmp_path / "job.yaml").write_text(f"name: s\n{profile_lines}account: def-x\nresources: {{time: 3h}}\n"
                                      "stage: {inputs: [images]}\nlaunch: python a.py --images $SLURM_TMPDIR/images\n")
    (warning,) = [f for f in Job.from_yaml(tmp_path / "job.yaml").check() if f.field == "stage.inputs.0"]
    return warning


def test_check_suggests_pack_for_a_folder_of_many_small_files(tmp_path):
    warning = _small_files_advice(tmp_path, "profile: nibi\n")
    assert warning.message.startswith("images holds 1200 files of 100B on average: many small files read slowly from Lustre;")
    assert warning.message.endswith("pack it once (slurmkit pack images -o images.tar) and stage it where the folder was: "
                                    "{from: images.tar, to: images}")


def test_on_a_ram_disk_site_check_suggests_shards(tmp_path):
    warning = _small_files_advice(tmp_path, "profile: trillium\nkind: threaded\n")
    assert warning.message.endswith("pack it once (slurmkit pack images -o images.pack --shards 4) and stage it where the folder was: "
                                    "{from: images.pack, to: images}")


def test_staging_more_than_the_memory_on_a_ram_disk_site_is_an_error(tmp_path):
    from slurmkit.resolve.resolve import staged_data_findings
    from slurmkit.resolve.staging import InputShape
    from slurmkit.sites.profiles import load_profile

    job = Job(name="s", profile="trillium", resources={"time": "3h"}, kind="threaded", stage={"inputs": ["big.tar"]}, launch="x")
    trillium = load_profile("trillium")
    (error,) = staged_data_findings(job.spec, trillium, [InputShape(0, "big.tar", 1, 740 << 30)])
    assert error.level == "error" and "RAM-disk $SLURM_TMPDIR leaves no memory" in error.message
    (warning,) = staged_data_findings(job.spec, trillium, [InputShape(0, "big.tar", 1, 500 << 30)])
    assert warning.level == "warning"


@pytest.mark.parametrize("profile, parallel", [("trillium", '"$((${SLURM_CPUS_PER_TASK:-1} * ${SLURM_NTASKS_PER_NODE:-1}))"'),
                                               ("nibi", "1")])
def test_shards_are_extracted_in_parallel_only_on_a_ram_disk(profile, parallel):
    """On a RAM disk, with all the node's cores, as SLURM counts them when the job runs."""
    whole = profile == "trillium"
    job = Job(name="s", profile=profile, account="def-x", kind="threaded",
              resources={"time": "3h", **({} if whole else {"cpus_per_task": 8})}, stage={"inputs": ["d.pack"]}, launch="x")
    assert str(job.resolve().plan.stage.parallel) == parallel


def test_a_squashfs_image_holds_every_file_and_is_written_whole(tmp_path):
    _dataset(tmp_path / "data")
    manifest = pack(tmp_path / "data", tmp_path / "data.sqfs", compression="none")
    assert (manifest.files, manifest.bytes, manifest.compression, manifest.shards[0].name) == (30, 30000, "none", "data.sqfs")
    listing = subprocess.run(["unsquashfs", "-lc", "-d", "", str(tmp_path / "data.sqfs")],
                             capture_output=True, text=True, check=True).stdout
    assert sorted(line.lstrip("/") for line in listing.split()) == sorted(f"d{i // 10}/f{i:03d}.txt" for i in range(30))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "data.sqfs", "data.sqfs.manifest.json"]


def test_compressible_data_makes_a_zstd_image(tmp_path):
    _dataset(tmp_path / "text", text=True)
    assert pack(tmp_path / "text", tmp_path / "text.sqfs").compression == "zstd"
    stats = subprocess.run(["unsquashfs", "-s", str(tmp_path / "text.sqfs")], capture_output=True, text=True, check=True).stdout
    assert "Compression zstd" in stats


def test_pack_to_an_image_without_mksquashfs_is_one_line_and_writes_nothing(tmp_path, monkeypatch):
    _dataset(tmp_path / "data", count=3)
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "mksquashfs" else real_which(name))
    result = CliRunner().invoke(main, ["pack", str(tmp_path / "data"), "-o", str(tmp_path / "data.sqfs")])
    assert result.exit_code == 2
    assert result.output == "error: mksquashfs is not installed here: install squashfs-tools, or pack to .tar or .pack\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]


def test_pack_cli_says_it_made_an_image(tmp_path):
    _dataset(tmp_path / "data", count=3)
    result = CliRunner().invoke(main, ["pack", str(tmp_path / "data"), "-o", str(tmp_path / "data.sqfs"), "--compression", "none"])
    assert result.exit_code == 0, result.output
    assert result.output == (f"packed 3 files, 0.0 MiB, into {tmp_path / 'data.sqfs'} (a squashfs image, compression none)\n"
                             f"stage it in a job with: stage: {{inputs: [{{from: {tmp_path / 'data.sqfs'}, to: data}}]}} "
                             "(the job finds the files in $SLURM_TMPDIR/data)\n")


# ------------------------------------------------------------------------------- never half-written

def _interrupt_on_call(monkeypatch, number):
    """subprocess.run as slurmkit.resolve.staging calls it, but Ctrl-C arrives during call ``number``
    (after the archiver has written part of its output)."""
    import slurmkit.resolve.staging as staging

    real_run, calls = subprocess.run, []

    def run(argv, **kwargs):
        calls.append(argv)
        if len(calls) == number:
            real_run(argv, **kwargs)          # the archive (or shard) is there, the pack is not done
            raise KeyboardInterrupt
        return real_run(argv, **kwargs)

    monkeypatch.setattr(staging.subprocess, "run", run)
    return calls


@pytest.mark.parametrize("name, number", [("data.tar", 1), ("data.pack", 2), ("data.sqfs", 1)])
def test_an_interrupted_pack_leaves_nothing_that_looks_whole(tmp_path, monkeypatch, name, number):
    _dataset(tmp_path / "data")
    calls = _interrupt_on_call(monkeypatch, number)
    with pytest.raises(KeyboardInterrupt):
        pack(tmp_path / "data", tmp_path / name, shards=3, compression="none")
    assert len(calls) == number
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]


def _packed(tmp_path):
    """Every file of the packs beside ``data``, with its bytes."""
    return {str(p.relative_to(tmp_path)): p.read_bytes() for p in sorted(tmp_path.rglob("*"))
            if p.is_file() and p.relative_to(tmp_path).parts[0] != "data"}


@pytest.mark.parametrize("name, failing_call", [("data.tar", 1), ("data.pack", 2)])
def test_a_failed_repack_leaves_the_previous_pack_whole(tmp_path, monkeypatch, name, failing_call):
    import slurmkit.resolve.staging as staging

    _dataset(tmp_path / "data")
    pack(tmp_path / "data", tmp_path / name, shards=2, compression="none")
    before = _packed(tmp_path)
    (tmp_path / "data" / "new.txt").write_text("more\n")
    real_run, calls = subprocess.run, []

    def run(argv, **kwargs):   # tar fails on its last shard, after the others were written
        calls.append(argv)
        return real_run(["false"] if len(calls) == failing_call else argv, **kwargs)

    monkeypatch.setattr(staging.subprocess, "run", run)
    with pytest.raises(staging.PackError):
        pack(tmp_path / "data", tmp_path / name, shards=2, compression="none")
    assert _packed(tmp_path) == before and len(before) >= 2


def test_a_killed_pack_leaves_only_a_partial_name_and_the_next_pack_replaces_it(tmp_path):
    """SIGKILL cannot be caught: what it leaves is named .partial, never data.tar."""
    import os
    import signal
    import sys
    import time

    _dataset(tmp_path / "data")
    fake = tmp_path / "bin"
    fake.mkdir()
    # A tar that writes the start of its archive, then hangs: the kill lands in the middle.
    (fake / "tar").write_text('#!/bin/bash\nhead -c 10240 /dev/zero > "$2"\nsleep 60\n')   # tar -cf ARCHIVE ...
    (fake / "tar").chmod(0o755)
    code = ("from slurmkit.resolve.staging import pack; "
            f"pack({str(tmp_path / 'data')!r}, {str(tmp_path / 'data.tar')!r}, compression='none')")
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
    process = subprocess.Popen([sys.executable, "-c", code], env=env, start_new_session=True)
    deadline = time.monotonic() + 30
    while not (tmp_path / "data.tar.partial").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert "data.tar" not in names and "data.tar.manifest.json" not in names and "data.tar.partial" in names
    pack(tmp_path / "data", tmp_path / "data.tar", compression="none")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "data", "data.tar", "data.tar.manifest.json"]
    with tarfile.open(tmp_path / "data.tar") as archive:
        assert len([m for m in archive.getmembers() if m.isfile()]) == 30


@pytest.mark.parametrize("name", ["data.zip", "data.tar.gz", "data.tgz", "archive", "data.tar.bz2"])
def test_pack_refuses_a_suffix_it_does_not_write_and_writes_nothing(tmp_path, name):
    _dataset(tmp_path / "data", count=3)
    result = CliRunner().invoke(main, ["pack", str(tmp_path / "data"), "-o", str(tmp_path / name), "--compression", "none"])
    assert result.exit_code == 2 and "pack writes .tar, .tar.zst" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]


def test_pack_refuses_a_zstd_name_for_an_archive_it_will_not_compress(tmp_path):
    _dataset(tmp_path / "data", count=3)
    result = CliRunner().invoke(main, ["pack", str(tmp_path / "data"), "-o", str(tmp_path / "data.tar.zst"), "--compression", "none"])
    assert result.exit_code == 2 and "so name it .tar" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]


@pytest.mark.parametrize("existing", ["data.tar", "data.tar.manifest.json"])
def test_pack_refuses_to_overwrite_without_force(tmp_path, existing):
    _dataset(tmp_path / "data", count=3)
    (tmp_path / existing).write_text("mine")
    args = ["pack", str(tmp_path / "data"), "-o", str(tmp_path / "data.tar"), "--compression", "none"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "already exists; use --force to overwrite" in result.stderr
    assert (tmp_path / existing).read_text() == "mine"
    assert CliRunner().invoke(main, [*args, "--force"]).exit_code == 0
    assert tarfile.is_tarfile(tmp_path / "data.tar")
