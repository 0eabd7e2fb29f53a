"""The archive formats a job's inputs may be staged from, by file name: what ``slurmkit pack``
writes and what the resolver reads, in one place.

Each tar suffix carries the flags that make tar read it; a ``.pack`` is a folder of tar shards;
a squashfs image is mounted, not extracted.
"""

TAR_SUFFIXES = ((".tar.zst", ("--zstd",)), (".tzst", ("--zstd",)), (".tar.gz", ("-z",)), (".tgz", ("-z",)),
                (".tar.xz", ("-J",)), (".txz", ("-J",)), (".tar.bz2", ("-j",)), (".tar", ()))
PACK_SUFFIX = ".pack"          # a folder of tar shards made by `slurmkit pack --shards`
IMAGE_SUFFIXES = (".sqfs", ".squashfs")   # a squashfs image made by `slurmkit pack -o NAME.sqfs`
