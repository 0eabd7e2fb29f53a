"""What a job's staged inputs take on a node's local disk (``$SLURM_TMPDIR``), measured on the
submit host when the script is rendered, and the ``--tmp`` that holds them.

A site whose default ``$SLURM_TMPDIR`` is small but whose ``--tmp`` reaches nodes with more
local disk (Rorqual: 375G by default, ``--tmp=xG`` with x from 370 to 3360 for its NVMe nodes;
https://docs.alliancecan.ca/wiki/Rorqual/en) gets the ``--tmp`` added from these sizes
(siterules.tmp_for_staged). What each input takes on the node, by how the script stages it:

- a file or folder that is copied: its bytes;
- an archive that is extracted (``.tar``, ``.tar.zst``, a ``.pack`` of shards): what it unpacks
  to. ``slurmkit pack`` writes a manifest beside it (``NAME.manifest.json``, or ``manifest.json``
  in a ``.pack``) with the exact bytes of the files it holds: that is used when present. Without
  one, an uncompressed tar unpacks to about its own size, and a compressed one is estimated at
  ``COMPRESSED_RATIO`` times its size (the finding says so, and how to make it exact);
- a squashfs image that is mounted: the image, copied whole; one that is extracted (a job on
  several nodes): the image and its contents, both on the disk until the copy is removed.

The ``--tmp`` asked is those bytes plus ``HEADROOM_PERCENT`` for what the job writes beside them,
rounded up to whole gigabytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional, Tuple

from slurmkit.core.records import Record
from slurmkit.core.units import format_size

#: A compressed archive without a manifest is taken to unpack to this many times its size:
#: slurmkit pack compresses only data that a sample shows shrinking below 0.8 (staging.COMPRESSIBLE),
#: and zstd's default level gives about 3x on text-like scientific data. An estimate: the finding
#: says it is one, and a manifest (slurmkit pack) or 'resources.tmp' replaces it.
COMPRESSED_RATIO = 3
#: Room on the disk beyond the staged bytes, in percent of them, for what the job writes there
#: (outputs, checkpoints).
HEADROOM_PERCENT = 10
MIB = 1 << 20


class StagedSize(Record):
    """One staged input as it will lie on the node's disk."""

    # mypy: a field named index overrides tuple.index, which nothing calls on a record; namedtuple
    # allows the name, and mypy itself types size.index as int.
    index: int  # type: ignore[assignment]  # its place in stage.inputs
    path: str            # as the spec names it
    bytes: int           # on the node's local disk
    how: str             # what it is on the disk and how that was found, for the finding ("400G copied")
    estimated: bool      # True when a compression ratio, not a manifest, gave the size


def staged_sizes(spec, base_dir: Path) -> Tuple[StagedSize, ...]:
    """Each staged input that exists on this host; a missing one is left out (it may not exist yet)."""
    from slurmkit.core.userpaths import on_submit_host

    sizes = []
    for index, item in enumerate(spec.stage.inputs if spec.stage else ()):
        path = on_submit_host(item.source, base_dir)
        if path is not None and path.exists():
            sizes.append(_on_node(index, item.source, path, several_nodes=spec.resources.nodes > 1))
    return tuple(sizes)


def tmp_for(total_bytes: int) -> int:
    """The --tmp (MiB, whole GiB) for ``total_bytes`` on the disk: with HEADROOM_PERCENT, rounded up."""
    return -(-total_bytes * (100 + HEADROOM_PERCENT) // (100 << 30)) * 1024   # integers: 400G gives 440G, not 441G


def _on_node(index: int, source: str, path: Path, several_nodes: bool) -> StagedSize:
    from slurmkit.core.archives import IMAGE_SUFFIXES, PACK_SUFFIX, TAR_SUFFIXES

    name = source.rstrip("/").lower()
    if name.endswith(IMAGE_SUFFIXES):
        image = _bytes(path)
        if not several_nodes:
            return StagedSize(index, source, image, f"{gib(image)}, the image copied whole", False)
        contents, how, estimated = _unpacked(path, Path(str(path) + ".manifest.json"), image, compressed=True)
        return StagedSize(index, source, image + contents, f"{gib(image)}, the image copied whole, and what it {how}", estimated)
    if name.endswith(PACK_SUFFIX) and path.is_dir():
        shards = _bytes(path)
        compressed = any(p.name.endswith((".zst", ".gz", ".xz", ".bz2")) for p in path.glob("shard-*"))
        contents, how, estimated = _unpacked(path, path / "manifest.json", shards, compressed)
        return StagedSize(index, source, contents, how, estimated)
    for suffix, options in TAR_SUFFIXES:
        if name.endswith(suffix) and path.is_file():
            contents, how, estimated = _unpacked(path, Path(str(path) + ".manifest.json"), _bytes(path), bool(options))
            return StagedSize(index, source, contents, how, estimated)
    size = _bytes(path)
    return StagedSize(index, source, size, f"{gib(size)} copied", False)


def _unpacked(path: Path, manifest: Path, archive: int, compressed: bool) -> Tuple[int, str, bool]:
    """What an archive unpacks to: its manifest's bytes, else an estimate from its size."""
    exact = _manifest_bytes(manifest)
    if exact is not None:
        return exact, f"unpacks to {gib(exact)} (its manifest, {manifest.name})", False
    if not compressed:
        return archive, f"unpacks to about {gib(archive)}, its own size", False
    return (archive * COMPRESSED_RATIO, f"unpacks to about {gib(archive * COMPRESSED_RATIO)} (estimated: {COMPRESSED_RATIO}x "
            f"the compressed {gib(archive)}; no manifest gives the exact size)", True)


def _manifest_bytes(manifest: Path) -> Optional[int]:
    try:
        from slurmkit.core.files import read_bytes_bounded  # a pipe named like a manifest is not waited on

        value = json.loads(read_bytes_bounded(manifest, 1 << 20)).get("bytes")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _bytes(path: Path) -> int:
    """What ``path`` holds; a folder is counted within staging's walk caps (``from: /`` would
    walk the whole file system), so a huge one gives at least what was counted."""
    if path.is_dir():
        from slurmkit.resolve.staging import counted

        return sum(size for _, size in counted(path).files)
    return path.stat().st_size


def gib(count: int) -> str:
    """Bytes in gigabytes as a person reads them: ``400G``, ``0.5G``."""
    return format_size(count // MIB) if count % (1 << 30) == 0 else f"{count / (1 << 30):.1f}G"
