"""Read every file of a staged dataset from $SLURM_TMPDIR and report the read speed.

Why: this is the first thing a training job's data loader does, isolated. Run against the copy
that slurmkit extracted on the node's local disk, it shows what staging buys; the same
script pointed at the dataset on /project or /scratch shows what it costs not to stage.
It walks --root, reads every file whole, prints the file count, the bytes and files/s, and
writes summary.json into --out (in $SLURM_TMPDIR, which slurmkit copies back at the end).
Plain Python: nothing to install.
"""

import argparse
import json
import os
import socket
import time


def parse_args():
    tmp = os.environ.get("SLURM_TMPDIR", ".")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(tmp, "imagenet-mini"), help="the dataset folder")
    parser.add_argument("--out", default=os.path.join(tmp, "results"), help="where summary.json goes")
    return parser.parse_args()


def main():
    args = parse_args()
    if not os.path.isdir(args.root):
        raise SystemExit(f"{args.root}: no such folder (was the dataset staged?)")
    files = total_bytes = 0
    classes = set()
    start = time.perf_counter()
    for folder, dirs, names in os.walk(args.root):
        dirs.sort()
        for name in sorted(names):
            with open(os.path.join(folder, name), "rb") as handle:
                total_bytes += len(handle.read())
            files += 1
            classes.add(os.path.relpath(folder, args.root))
    seconds = max(time.perf_counter() - start, 1e-9)
    summary = {
        "root": args.root,
        "host": socket.gethostname(),
        "files": files,
        "classes": len(classes),
        "bytes": total_bytes,
        "seconds": round(seconds, 4),
        "files_per_s": round(files / seconds, 1),
        "mib_per_s": round(total_bytes / seconds / 2**20, 1),
    }
    print(f"{files} files, {total_bytes} bytes in {len(classes)} folders: "
          f"{summary['files_per_s']} files/s, {summary['mib_per_s']} MiB/s")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "summary.json"), "w") as handle:
        json.dump(summary, handle, indent=2)
        handle.write("\n")
    print(f"wrote {os.path.join(args.out, 'summary.json')}")


if __name__ == "__main__":
    main()
