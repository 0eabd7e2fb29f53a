"""Data for $SLURM_TMPDIR: packing a folder once, and what staging it will cost.

Reading one large file from Lustre is far faster than reading thousands of small ones, so a
dataset of many small files is packed once (``slurmkit pack``) and each job extracts the pack
on its node-local disk. A pack is one tar archive; or, with shards, a ``NAME.pack`` folder of
tar archives that the job extracts in parallel; or a squashfs image (``NAME.sqfs``) that the job
copies whole and mounts read-only, so that no file is created on the node at all. Each carries a
manifest of files and bytes. GNU tar does the archiving (fast, and the same tool extracts on the
node); mksquashfs (squashfs-tools) makes the images.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import zlib
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

from slurmkit.core.errors import SlurmkitError
from slurmkit.core.files import check_destination, write_atomic
from slurmkit.core.progress import NO_METER, Meter
from slurmkit.core.records import Record

COMPRESSIBLE = 0.8                # compress when a sample shrinks below this fraction


class PackError(SlurmkitError):
    """The folder cannot be packed (missing, empty, tar failed)."""


class Shard(Record):
    name: str
    files: int
    bytes: int


class Manifest(Record):
    source: str
    files: int
    bytes: int
    compression: str               # zstd | none
    shards: Tuple[Shard, ...]

    def to_json(self) -> str:
        data = self._asdict()
        data["shards"] = [s._asdict() for s in self.shards]
        return json.dumps(data, indent=2) + "\n"


#: how far ``check`` (and the --tmp estimate) walks one staged folder: a data set of a million
#: files is counted in about 2 s; ``from: /`` would walk the whole file system.
MAX_WALK_FILES = 200_000
MAX_WALK_SECONDS = 2.0


class Walk(Record):
    files: List[Tuple[str, int]]   # (relative path, bytes) of each regular file, in a stable order
    skipped: List[str]             # what is not a regular file: symbolic links, named pipes, sockets, devices
    complete: bool                 # False: stopped at the file or time cap


def walk(folder: Path, max_files: Optional[int] = None, max_seconds: Optional[float] = None) -> Walk:
    """The regular files under ``folder`` (links not followed), what was skipped, and whether
    the walk got to the end before ``max_files`` files or ``max_seconds``."""
    import stat
    import time

    found, skipped = [], []
    deadline = time.monotonic() + max_seconds if max_seconds is not None else None
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            dirs.remove(name)
            skipped.append(os.path.relpath(os.path.join(root, name), folder))
        for name in sorted(files):
            path = os.path.join(root, name)
            try:
                status = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(status.st_mode):
                found.append((os.path.relpath(path, folder), status.st_size))
            else:
                skipped.append(os.path.relpath(path, folder))
            if (max_files is not None and len(found) >= max_files) or (deadline and time.monotonic() > deadline):
                return Walk(found, skipped, False)
    return Walk(found, skipped, True)


def list_files(folder: Path) -> List[Tuple[str, int]]:
    """Every regular file under ``folder`` as (relative path, bytes), in a stable order."""
    return walk(folder).files


def counted(folder: Path) -> Walk:
    """``walk`` within check's caps (MAX_WALK_FILES, MAX_WALK_SECONDS)."""
    return walk(folder, MAX_WALK_FILES, MAX_WALK_SECONDS)


def total_bytes(files: Sequence[Tuple[str, int]]) -> int:
    return sum(size for _, size in files)


def split_evenly(files: Sequence[Tuple[str, int]], shards: int) -> List[List[Tuple[str, int]]]:
    """Consecutive runs of ``files`` with about the same bytes each (neighbours stay together)."""
    total = sum(size for _, size in files)
    groups: List[List[Tuple[str, int]]] = [[] for _ in range(max(1, min(shards, len(files))))]
    done, index = 0, 0
    for item in files:
        if index < len(groups) - 1 and groups[index] and done >= total * (index + 1) / len(groups):
            index += 1
        groups[index].append(item)
        done += item[1]
    return [g for g in groups if g]


def looks_compressible(folder: Path, files: Sequence[Tuple[str, int]], sample_bytes: int = 4 << 20) -> bool:
    """Compress a sample of the files with zlib's fastest level: does it shrink?"""
    raw = packed = 0
    step = max(1, len(files) // 64)
    for relative, _ in files[::step]:
        with open(folder / relative, "rb") as handle:
            chunk = handle.read(sample_bytes // 64)
        raw += len(chunk)
        packed += len(zlib.compress(chunk, 1))
    return raw > 0 and packed / raw < COMPRESSIBLE


def pack(folder, output, shards: int = 1, compression: str = "auto", tell: Optional[Callable[[str], None]] = None,
         meter: Meter = NO_METER) -> Manifest:
    """Archive ``folder`` into ``output`` (``.tar``/``.tar.zst``, a ``.pack`` folder of shards,
    or a ``.sqfs`` squashfs image). Only regular files are packed: ``tell`` hears what was
    skipped (symbolic links, named pipes, sockets, devices). ``meter`` hears the bytes packed
    (core/progress.py: a bar on a terminal)."""
    folder, output = Path(folder), Path(output)
    if not folder.is_dir():
        raise PackError(f"{folder}: not a folder")
    _check_suffix(output)
    _check_destinations(output)
    seen = walk(folder)
    files = seen.files
    if seen.skipped and tell:
        shown = ", ".join(seen.skipped[:5]) + (f" and {len(seen.skipped) - 5} more" if len(seen.skipped) > 5 else "")
        tell(f"warning: skipped {len(seen.skipped)} entr{'y' if len(seen.skipped) == 1 else 'ies'} "
             f"that {'is' if len(seen.skipped) == 1 else 'are'} not {'a regular file' if len(seen.skipped) == 1 else 'regular files'} "
             f"(symbolic links, named pipes, sockets and devices are not packed): {shown}")
    if not files:
        raise PackError(f"{folder}: no files to pack")
    meter.start(total_bytes(files))
    from slurmkit.core.archives import IMAGE_SUFFIXES

    if output.name.lower().endswith(IMAGE_SUFFIXES):
        zstd = compression == "zstd" or (compression == "auto" and looks_compressible(folder, files))
        with written_whole(output) as partial:
            shard_list: Tuple[Shard, ...] = (_squash(folder, files, partial, output.name, zstd),)
        meter.advance(shard_list[0].bytes)
        return _write_manifest(folder, files, zstd, shard_list, output.with_name(output.name + ".manifest.json"))
    zstd = _choose_compression(folder, files, compression)
    if output.suffix != ".pack":
        if zstd and not output.name.endswith(ZSTD_TAR_SUFFIXES):
            raise PackError(f"{output}: the data compresses, so name it .tar.zst (or use --compression none)")
        if not zstd and output.name.endswith(ZSTD_TAR_SUFFIXES):
            raise PackError(f"{output}: the archive will not be compressed (--compression none, or no zstd here), "
                            f"so name it .tar: staging reads a .tar.zst with zstd")
        with written_whole(output) as partial:
            shard_list = (_tar(folder, files, partial, output.name, zstd, meter),)
        return _write_manifest(folder, files, zstd, shard_list, output.with_name(output.name + ".manifest.json"))
    # A .pack folder is made whole under its temporary name, manifest last, then renamed.
    with written_whole(output) as partial:
        partial.mkdir(parents=True)
        names = [f"shard-{i:03d}.tar{'.zst' if zstd else ''}" for i in range(shards)]
        shard_list = tuple(_tar(folder, group, partial / name, name, zstd, meter)
                           for group, name in zip(split_evenly(files, shards), names))
        manifest = _write_manifest(folder, files, zstd, shard_list, partial / "manifest.json")
    return manifest


#: the names of the archives pack writes: a tar, a zstd tar, a folder of shards, a squashfs image.
ZSTD_TAR_SUFFIXES = (".tar.zst", ".tzst")
PACK_SUFFIXES = (".tar", *ZSTD_TAR_SUFFIXES, ".pack")


def _check_suffix(output: Path) -> None:
    """Refuse a name whose suffix promises a format pack does not write (``x.zip``, ``x.tar.gz``):
    staging reads an archive by its suffix, and would read a tar named .zip as a zip."""
    from slurmkit.core.archives import IMAGE_SUFFIXES

    if not (output.name.endswith(PACK_SUFFIXES) or output.name.lower().endswith(IMAGE_SUFFIXES)):
        raise PackError(f"{output}: pack writes {', '.join(PACK_SUFFIXES + IMAGE_SUFFIXES)}; name the output with one "
                        f"of them (a .tar of the same files: {output.name.split('.')[0] or 'data'}.tar)")


def _check_destinations(output: Path) -> None:
    """Refuse, before any work, an ``output`` (and its manifest beside it) that is a named pipe,
    a device, a socket or a link: the pack would be renamed over it (files.check_destination)."""
    if output.suffix == ".pack":
        check_destination(output, folder=True)
        return
    check_destination(output)
    check_destination(output.with_name(output.name + ".manifest.json"))


@contextlib.contextmanager
def written_whole(target: Path):
    """A temporary path beside ``target`` (``NAME.partial``) that becomes ``target`` only when
    the block completes: an archive, shard folder or manifest is never seen half-written under
    its own name. A failure or an interruption (Ctrl-C) removes the temporary; a kill leaves it,
    named as what it is, and the next pack replaces it. A previous ``target`` stays whole until
    the new one takes its place."""
    partial = target.with_name(target.name + ".partial")
    _remove(partial)
    try:
        yield partial
    except BaseException:
        _remove(partial)
        raise
    try:
        if target.is_dir() and not target.is_symlink():   # a folder cannot be renamed onto another
            old = target.with_name(target.name + ".old")
            _remove(old)
            target.rename(old)
            partial.rename(target)
            _remove(old)
        else:
            partial.replace(target)
    except OSError as error:
        _remove(partial)
        raise PackError(f"{target}: cannot put the new pack in place ({error.strerror}): remove or rename it and pack again") from None


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _write_manifest(folder: Path, files, zstd: bool, shard_list, path: Path) -> Manifest:
    manifest = Manifest(str(folder.resolve()), len(files), sum(s for _, s in files), "zstd" if zstd else "none", shard_list)
    write_atomic(path, manifest.to_json())
    return manifest


def _choose_compression(folder: Path, files, compression: str) -> bool:
    if compression == "none":
        return False
    available = shutil.which("zstd") is not None
    if compression == "zstd":
        if not available:
            raise PackError("zstd is not installed here: install it, or use --compression none")
        return True
    return available and looks_compressible(folder, files)


def _tar(folder: Path, group, target: Path, name: str, zstd: bool, meter: Meter = NO_METER) -> Shard:
    listing = target.with_name(target.name + ".files")
    listing.write_text("".join(f"{relative}\n" for relative, _ in group))
    argv = ["tar", "-cf", str(target), "--owner=0", "--group=0", "--numeric-owner", "-b", "2048", "-C", str(folder), "-T", str(listing)]
    if zstd:
        argv[1:1] = ["--zstd"]
    try:
        returncode, stderr = _tar_metered(argv, group, meter) if meter is not NO_METER else _tar_quiet(argv)
    finally:
        listing.unlink()
    if returncode != 0:
        raise PackError(f"tar could not pack {folder}: {stderr.strip()}")
    return Shard(name, len(group), sum(size for _, size in group))


def _tar_quiet(argv: List[str]) -> Tuple[int, str]:
    result = subprocess.run(argv, capture_output=True, text=True)
    return result.returncode, result.stderr


def _tar_metered(argv: List[str], group, meter: Meter) -> Tuple[int, str]:
    """tar with ``-v``: each name it prints as it adds the file advances ``meter`` by that file's
    size; what a name tar spelt otherwise left out is made up at the end."""
    import tempfile

    sizes = dict(group)
    counted = 0
    with tempfile.TemporaryFile("w+") as errors:
        with subprocess.Popen([argv[0], "-v", *argv[1:]], stdout=subprocess.PIPE, stderr=errors, text=True,
                              errors="replace") as tar:
            assert tar.stdout is not None
            for line in tar.stdout:
                size = sizes.get(line.rstrip("\n"), 0)
                counted += size
                meter.advance(size)
        errors.seek(0)
        meter.advance(sum(sizes.values()) - counted)
        return tar.returncode, errors.read()


def _squash(folder: Path, files, target: Path, name: str, zstd: bool) -> Shard:
    """One squashfs image of ``folder`` at ``target``.

    Data that does not compress is stored as it is (``-noD``...): the image then reads at disk
    speed through squashfuse, with no decompression on the node."""
    if shutil.which("mksquashfs") is None:
        raise PackError("mksquashfs is not installed here: install squashfs-tools, or pack to .tar or .pack")
    argv = ["mksquashfs", str(folder), str(target), "-noappend", "-no-progress", "-quiet", "-no-xattrs"]
    argv += ["-comp", "zstd"] if zstd else ["-noI", "-noD", "-noF", "-noX"]
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        raise PackError(f"mksquashfs could not pack {folder}: {result.stderr.strip() or result.stdout.strip()}")
    return Shard(name, len(files), sum(size for _, size in files))


# ------------------------------------------------------------------------------------ inspect

class InputShape(Record):
    # mypy: a field named index overrides tuple.index, which nothing calls on a record; namedtuple
    # allows the name, and mypy itself types shape.index as int.
    index: int  # type: ignore[assignment]  # its place in stage.inputs
    path: str
    files: int
    bytes: int
    complete: bool = True          # False: counting stopped at staging's walk caps (files and bytes are at least these)


def inspect_inputs(spec, base_dir: Path) -> List[InputShape]:
    """What each staged input holds on disk (missing inputs are left out: they may not exist yet)."""
    shapes = []
    for index, item in enumerate(spec.stage.inputs if spec.stage else ()):
        from slurmkit.core.userpaths import on_submit_host

        path = on_submit_host(item.source, base_dir)  # ~ and $SCRATCH as the job will read them
        if path is None:
            continue
        if path.is_dir():
            seen = counted(path)
            count = len(seen.files) if path.suffix != ".pack" else 1
            shapes.append(InputShape(index, item.source, count, sum(s for _, s in seen.files), seen.complete))
        elif path.is_file():
            shapes.append(InputShape(index, item.source, 1, path.stat().st_size))
    return shapes
