"""Gather the sweep's result files and print the best point.

Why: the array's tasks each leave one line in results/<lr>-<wd>-<seed>.txt; this is the step
after the array (run it by hand, or as a job with `dependencies: {after: ok, jobs: [ARRAY_ID]}`).
It reports missing or unreadable points, the single best point, and the best (lr, wd) by the
mean over seeds, which is what to pick: one lucky seed is not a good setting.
"""

import argparse
import glob
import math
import os
from collections import defaultdict


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default="results")
    parser.add_argument("--expect", type=int, default=1000, help="points the sweep has")
    return parser.parse_args()


def read(path):
    """{'lr': ..., 'wd': ..., 'seed': ..., 'val_loss': float} from one result line."""
    with open(path) as handle:
        fields = dict(item.split("=", 1) for item in handle.read().split())
    fields["val_loss"] = float(fields["val_loss"])
    return fields


def main():
    args = parse_args()
    points, bad = [], []
    for path in sorted(glob.glob(os.path.join(args.folder, "*.txt"))):
        try:
            points.append(read(path))
        except (OSError, ValueError, KeyError):
            bad.append(path)
    print(f"{len(points)} of {args.expect} points in {args.folder}/" + (f"; {len(bad)} unreadable: {bad[:5]}" if bad else ""))
    if not points:
        raise SystemExit(1)
    best = min(points, key=lambda p: p["val_loss"])
    print(f"best point: lr={best['lr']} wd={best['wd']} seed={best['seed']} val_loss={best['val_loss']:.6g}")

    by_setting = defaultdict(list)
    for p in points:
        by_setting[(p["lr"], p["wd"])].append(p["val_loss"])
    mean = {k: sum(v) / len(v) for k, v in by_setting.items()}
    (lr, wd), loss = min(mean.items(), key=lambda item: item[1])
    print(f"best setting over seeds: lr={lr} wd={wd} mean val_loss={loss:.6g} ({len(by_setting[(lr, wd)])} seeds)")
    diverged = sum(not math.isfinite(p["val_loss"]) for p in points)
    if diverged:
        print(f"{diverged} points diverged (val_loss=inf)")
    # Points missing from the grid of the values seen (a value missing everywhere cannot show).
    seen = {(p["lr"], p["wd"], p["seed"]) for p in points}
    grid = [(lr, wd, seed) for lr in {p["lr"] for p in points} for wd in {p["wd"] for p in points}
            for seed in {p["seed"] for p in points}]
    missing = sorted(set(grid) - seen)
    if missing or len(points) < args.expect:
        names = ", ".join("-".join(point) for point in missing[:10])
        raise SystemExit(f"{max(len(missing), args.expect - len(points))} points missing ({names}): "
                         "rerun their tasks (sbatch --array=LIST)")


if __name__ == "__main__":
    main()
