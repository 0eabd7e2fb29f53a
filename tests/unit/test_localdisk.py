"""What staged inputs take on a node's local disk (slurmkit/resolve/localdisk.py), from which the
--tmp Rorqual needs is sized: copies, archives with and without a manifest, packs, images."""

import json

from slurmkit.resolve.localdisk import COMPRESSED_RATIO, staged_sizes, tmp_for
from slurmkit.spec.spec import spec_from_mapping

GIB = 1 << 30


def spec(inputs, nodes=1):
    return spec_from_mapping({"name": "d", "account": "def-x", "resources": {"time": "1h", "nodes": nodes},
                              "kind": "mpi" if nodes > 1 else "serial",
                              "stage": {"inputs": inputs}, "launch": {"command": "true"}}, source="job.yaml")


def sparse(path, size):
    with open(path, "wb") as handle:
        handle.truncate(size)


def test_copied_files_and_folders_count_their_bytes(tmp_path):
    sparse(tmp_path / "a.bin", 3 * GIB)
    (tmp_path / "d").mkdir()
    sparse(tmp_path / "d" / "x", GIB)
    sparse(tmp_path / "d" / "y", GIB)
    sizes = staged_sizes(spec(["a.bin", "d"]), tmp_path)
    assert [(s.index, s.bytes, s.how, s.estimated) for s in sizes] == [(0, 3 * GIB, "3G copied", False), (1, 2 * GIB, "2G copied", False)]


def test_a_missing_input_is_left_out(tmp_path):
    assert staged_sizes(spec(["absent.tar"]), tmp_path) == ()


def test_an_uncompressed_tar_unpacks_to_about_its_size(tmp_path):
    sparse(tmp_path / "data.tar", 5 * GIB)
    (size,) = staged_sizes(spec(["data.tar"]), tmp_path)
    assert (size.bytes, size.estimated) == (5 * GIB, False) and "its own size" in size.how


def test_a_compressed_tar_without_a_manifest_is_estimated_and_says_so(tmp_path):
    sparse(tmp_path / "data.tar.zst", 100 * GIB)
    (size,) = staged_sizes(spec(["data.tar.zst"]), tmp_path)
    assert size.bytes == COMPRESSED_RATIO * 100 * GIB and size.estimated
    assert size.how == "unpacks to about 300G (estimated: 3x the compressed 100G; no manifest gives the exact size)"


def test_slurmkit_pack_manifest_gives_the_exact_unpacked_size(tmp_path):
    sparse(tmp_path / "data.tar.zst", 100 * GIB)
    (tmp_path / "data.tar.zst.manifest.json").write_text(json.dumps({"bytes": 250 * GIB}), encoding="utf-8")
    (size,) = staged_sizes(spec(["data.tar.zst"]), tmp_path)
    assert (size.bytes, size.estimated) == (250 * GIB, False) and "its manifest" in size.how


def test_a_broken_manifest_falls_back_to_the_estimate(tmp_path):
    sparse(tmp_path / "data.tgz", GIB)
    (tmp_path / "data.tgz.manifest.json").write_text("{not json", encoding="utf-8")
    (size,) = staged_sizes(spec(["data.tgz"]), tmp_path)
    assert size.bytes == COMPRESSED_RATIO * GIB and size.estimated


def test_a_pack_of_shards_counts_its_manifest(tmp_path):
    pack = tmp_path / "inputs.pack"
    pack.mkdir()
    sparse(pack / "shard-000.tar.zst", GIB)
    (pack / "manifest.json").write_text(json.dumps({"bytes": 7 * GIB}), encoding="utf-8")
    (size,) = staged_sizes(spec(["inputs.pack"]), tmp_path)
    assert size.bytes == 7 * GIB and not size.estimated


def test_a_mounted_image_is_its_copy_and_an_extracted_one_adds_its_contents(tmp_path):
    sparse(tmp_path / "t.sqfs", 10 * GIB)
    (tmp_path / "t.sqfs.manifest.json").write_text(json.dumps({"bytes": 12 * GIB}), encoding="utf-8")
    inputs = [{"from": "t.sqfs", "to": "t"}]
    assert staged_sizes(spec(inputs), tmp_path)[0].bytes == 10 * GIB
    assert staged_sizes(spec(inputs, nodes=2), tmp_path)[0].bytes == 22 * GIB   # several nodes extract it


def test_tmp_is_the_bytes_and_ten_percent_rounded_up_to_whole_gigabytes():
    assert tmp_for(400 * GIB) == 440 * 1024
    assert tmp_for(400 * GIB + 1) == 441 * 1024
    assert tmp_for(1) == 1024
