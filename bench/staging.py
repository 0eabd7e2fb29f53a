"""Staging 20,000 files of 40 KB into $SLURM_TMPDIR with a cold page cache.

Each method runs with a cold page cache (`sync`, then `echo 3 > /proc/sys/vm/drop_caches`;
root only) and is timed until the files are usable under $SLURM_TMPDIR/data; then, apart,
reading every file once from there (the first pass of a training loop). Medians of several
runs in one go, the methods interleaved:

- read the pack once (`cat > /dev/null`): the limit;
- `cp -r` of the dataset folder, and a plain `tar -x` of one archive;
- slurmkit's stage-in of a `.tar`, of a `.pack` of shards and of a `.sqfs` image: the
  `_sk_stage_in` function of a script that slurmkit renders for this machine's cores, run with
  bash exactly as the job runs it; and the `.pack` with all shards at once, which the resolver
  chooses on a RAM disk only (on a disk it extracts them one after the other).

Every run stages into a folder of its own, and the folders go only at the end. ext4 does not
reuse an inode freed in the last minutes (``recently_deleted`` in its inode allocator), so
deleting 20,000 files just before a run makes that run's file creates scan past them:
measured here, one `tar -x` took 2.2 s into a fresh folder and 3.4 s after an `rm -rf` of the
previous run, and two extractors at once lost to one. That is the deleting, not the method.

The files are random bytes: they do not compress, so no method gains by compression here.

Usage (as root): python bench/staging.py [--files 20000] [--size 40960] [--runs 5] [--json OUT]
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from slurmkit.api.job import Job
from slurmkit.resolve.staging import pack

READ_ALL = """
import os, sys
total = 0
for root, dirs, files in os.walk(sys.argv[1]):
    dirs.sort()
    for name in sorted(files):
        with open(os.path.join(root, name), "rb") as handle:
            total += len(handle.read())
print(total)
"""


def make_dataset(folder: Path, files: int, size: int) -> None:
    per_dir = 1000
    for index in range(files):
        sub = folder / f"d{index // per_dir:03d}"
        if index % per_dir == 0:
            sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{index:06d}.bin").write_bytes(os.urandom(size))


def rendered_stage_in(source: Path, cores: int) -> str:
    """The stage-in functions of the script slurmkit renders for this input on ``cores`` cores."""
    job = Job(name="stage", profile="fir", account="def-bench", kind="threaded",
              resources={"cpus_per_task": cores, "time": "1h", "mem": "4G"},
              launch="true", stage={"inputs": [{"from": str(source), "to": "data"}]})
    script = job.render(warn=False)
    functions = re.findall(r"^(_sk_(?:image|stage_in)\(\) \{.*?^\})$", script, flags=re.S | re.M)
    return "set -euo pipefail\n" + "\n".join(functions) + "\n_sk_stage_in\n"


def unmount_under(folder: Path) -> None:
    with open("/proc/mounts") as mounts:
        points = [line.split()[1] for line in mounts if line.split()[1].startswith(str(folder) + "/")]
    for point in points:
        subprocess.run(["fusermount3", "-u", point], check=True)


def cold_run(command: str, target: Path, read: bool):
    """Stage with ``command`` into the fresh ``target`` from a cold cache; (stage s, read s or None)."""
    target.mkdir(parents=True)
    subprocess.run("sync", check=True)
    Path("/proc/sys/vm/drop_caches").write_text("3\n")
    env = dict(os.environ, SLURM_TMPDIR=str(target))
    started = time.perf_counter()
    subprocess.run(["bash", "-c", command], check=True, env=env)
    staged = time.perf_counter() - started
    read_s = None
    if read:
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", READ_ALL, str(target / "data")], check=True,
                             capture_output=True, text=True).stdout
        read_s = time.perf_counter() - started
        if int(out) == 0:
            raise SystemExit(f"nothing read under {target / 'data'}")
    unmount_under(target)
    return staged, read_s


def methods_for(work: Path, cores: int):
    dataset, single, packed, image = (work / n for n in ("dataset", "dataset.tar", "dataset.pack", "dataset.sqfs"))
    methods = {
        "read the pack once (limit)": f"cat {packed}/shard-*.tar > /dev/null",
        "cp -r": f'mkdir "$SLURM_TMPDIR/data" && cp -r {dataset}/. "$SLURM_TMPDIR/data/"',
        "plain tar -x of one .tar": f'mkdir "$SLURM_TMPDIR/data" && tar -xf {single} -C "$SLURM_TMPDIR/data"',
        "slurmkit stage-in, .tar": rendered_stage_in(single, cores),
        "slurmkit stage-in, .pack": rendered_stage_in(packed, cores),
        f".pack, {cores} shards at once": f'mkdir "$SLURM_TMPDIR/data" && printf "%s\\0" {packed}/shard-*.tar | '
                                        f'xargs -0 -P {cores} -n 1 tar -b 2048 -C "$SLURM_TMPDIR/data" -xf',
    }
    if image.exists():
        methods["slurmkit stage-in, .sqfs"] = rendered_stage_in(image, cores)
    return methods


def report(args, times, reads, pack_s, methods):
    limit = statistics.median(times["read the pack once (limit)"])
    copy = statistics.median(times["cp -r"])
    print(f"{args.files} files of {args.size // 1024} KB, {args.runs} cold runs each, {args.cores} cores "
          f"(packed once: {', '.join(f'{k} {v:.1f} s' for k, v in pack_s.items())})")
    rows = {}
    for name, values in times.items():
        median = statistics.median(values)
        read = statistics.median(reads[name]) if reads.get(name) else None
        rows[name] = {"stage_s": values, "median_s": round(median, 3), "x_limit": round(median / limit, 2),
                      "cp_r_over_this": round(copy / median, 2), "read_all_s": reads.get(name),
                      "read_all_median_s": None if read is None else round(read, 3)}
        then = f"   then reading every file {read:5.2f} s" if read is not None else ""
        print(f"  {name:28} {median:6.2f} s  {median / limit:5.2f}x the limit  cp -r / this {copy / median:5.2f}x{then}"
              f"   runs: {' '.join(f'{v:.2f}' for v in values)}")
    if args.json:
        Path(args.json).write_text(json.dumps({"files": args.files, "size": args.size, "runs": args.runs,
                                               "cores": args.cores, "kernel": os.uname().release,
                                               "pack_s": pack_s, "methods": rows}, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--size", type=int, default=40 * 1024)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 2, help="the job's cores (shards, extractors)")
    parser.add_argument("--no-read", action="store_true", help="time the staging only")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="slurmkit-stage-bench-", dir=os.environ.get("TMPDIR", "/var/tmp")))
    try:
        make_dataset(work / "dataset", args.files, args.size)
        pack_s = {}
        for name, shards in (("dataset.pack", args.cores), ("dataset.tar", 1), ("dataset.sqfs", 1)):
            if name.endswith(".sqfs") and not (shutil.which("mksquashfs") and shutil.which("squashfuse_ll")):
                print("no mksquashfs or squashfuse_ll here: the .sqfs image is left out", file=sys.stderr)
                continue
            started = time.perf_counter()
            pack(work / "dataset", work / name, shards=shards, compression="none")
            pack_s[name] = round(time.perf_counter() - started, 1)
        methods = methods_for(work, args.cores)
        times = {name: [] for name in methods}
        reads = {name: [] for name in methods if not name.startswith("read")}
        for run in range(args.runs):
            for index, (name, command) in enumerate(methods.items()):
                staged, read_s = cold_run(command, work / "runs" / f"{run}-{index}", read=name in reads and not args.no_read)
                times[name].append(round(staged, 3))
                if read_s is not None:
                    reads[name].append(round(read_s, 3))
        report(args, times, reads, pack_s, methods)
    finally:
        unmount_under(work)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
