"""What the GPU benches share (multigpu.py, kinds_gpu.py, gpu_sampler.py): the gpubox site
profile their jobs are rendered for, and their two steps, ``render`` here (with slurmkit) and
``run`` on the GPU machine (without it)."""

import argparse
import os
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
GPUBOX = ROOT / "bench" / "gpubox"


def gpubox_job():
    """slurmkit's Job, with the current folder at bench/gpubox, whose ./site_profiles holds the gpubox profile."""
    os.chdir(GPUBOX)
    sys.path.insert(0, str(ROOT))
    from slurmkit.api.job import Job

    return Job


def steps(doc: str, run_options: Callable[[argparse.ArgumentParser], None]) -> argparse.Namespace:
    """``render`` or ``run --out DIR --reps N`` and the bench's own run options."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    sub.add_parser("render")
    go = sub.add_parser("run")
    go.add_argument("--out", type=Path, default=Path("."))
    go.add_argument("--reps", type=int, default=3)
    run_options(go)
    return parser.parse_args()
