"""Staging 20,000 files of 40 KB into $SLURM_TMPDIR with a cold page cache.

Times, until the files are usable in the target folder, (a) `cp -r` of the dataset folder,
(b) slurmkit's stage-in of a pack made once (`slurmkit pack --shards N`: the shards are
extracted in parallel, exactly as the rendered script does), (c) a plain `tar -x` of one
archive, against (d) reading the archive once (`cat > /dev/null`, the limit). The page cache
is dropped before every run (root only); medians of several runs in one go, run interleaved.
The files are random bytes: they do not compress, so no method gains by compression here.

Usage (as root): python bench/staging.py [--files 20000] [--size 40960] [--runs 5] [--target DIR]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from slurmkit.staging import pack


def make_dataset(folder: Path, files: int, size: int) -> None:
    per_dir = 1000
    for index in range(files):
        sub = folder / f"d{index // per_dir:03d}"
        if index % per_dir == 0:
            sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{index:06d}.bin").write_bytes(os.urandom(size))


def cold(command: str, target: Path) -> float:
    """Run ``command`` with an empty target and a cold page cache; return its wall time."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    subprocess.run("sync", check=True)
    Path("/proc/sys/vm/drop_caches").write_text("3\n")
    started = time.perf_counter()
    subprocess.run(["bash", "-c", command], check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--size", type=int, default=40 * 1024)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--shards", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--target", default=None, help="where to stage (default: a folder under the work folder)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="slurmkit-stage-bench-", dir=os.environ.get("TMPDIR", "/tmp")))
    try:
        dataset, single, packed = work / "dataset", work / "dataset.tar", work / "dataset.pack"
        make_dataset(dataset, args.files, args.size)
        started = time.perf_counter()
        pack(dataset, packed, shards=args.shards, compression="none")
        pack_s = time.perf_counter() - started
        pack(dataset, single, compression="none")
        target = Path(args.target) if args.target else work / "SLURM_TMPDIR"
        methods = {
            "read the pack once (limit)": f"cat {packed}/shard-*.tar > /dev/null",
            "cp -r": f"cp -r {dataset}/. {target}/",
            "slurmkit stage-in (pack)": f"find {packed} -maxdepth 1 -name 'shard-*.tar*' -print0 | xargs -0 -r -P {args.shards} -n 1 tar -b 2048 -C {target} -xf",
            "slurmkit stage-in (one .tar)": f"tar -b 2048 -xf {single} -C {target}",
            "plain tar -x of one archive": f"tar -xf {single} -C {target}",
        }
        times = {name: [] for name in methods}
        for _ in range(args.runs):
            for name, command in methods.items():
                times[name].append(cold(command, target))
        limit = statistics.median(times["read the pack once (limit)"])
        copy = statistics.median(times["cp -r"])
        print(f"{args.files} files of {args.size // 1024} KB, {args.runs} cold runs each, {args.shards} shards "
              f"(packed once in {pack_s:.1f} s), target {target}")
        for name, values in times.items():
            median = statistics.median(values)
            print(f"  {name:30} median {median:6.2f} s   {median / limit:5.2f}x the limit   cp -r / this: {copy / median:5.2f}x"
                  f"   runs: {' '.join(f'{v:.2f}' for v in values)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
