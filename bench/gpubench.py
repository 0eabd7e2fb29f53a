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
SHIM = ROOT / "bench" / "shim"
#: where render writes slurmkit's runtime library, which the scripts look for under $XDG_DATA_HOME/slurmkit/runtime
DATA_HOME = GPUBOX / "out" / "data"


def gpubox_job():
    """slurmkit's Job, with the current folder at bench/gpubox, whose ./site_profiles holds the gpubox profile."""
    os.chdir(GPUBOX)
    sys.path.insert(0, str(ROOT))
    from slurmkit.api.job import Job
    from slurmkit.render.runtime import write_runtime

    folder = DATA_HOME / "slurmkit" / "runtime"
    folder.mkdir(parents=True, exist_ok=True)
    write_runtime(folder)
    return Job


def batch_step_environment(gpus: int, cores_per_gpu: int) -> dict:
    """What SLURM gives the batch step of a one-node job of ``gpus`` tasks (one per GPU), the
    shims first on PATH, slurmkit's runtime where the scripts look, NVLink multicast off."""
    return dict(os.environ, NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1",
                PATH=f"{SHIM}:{Path(sys.executable).parent}:{os.environ['PATH']}", PYTHONPATH=str(ROOT / "bench"),
                SLURM_JOB_ID="4242", SLURM_JOB_NAME="resnet50", SLURM_JOB_NODELIST="localhost", SLURM_NNODES="1",
                SLURM_NTASKS=str(gpus), SLURM_NTASKS_PER_NODE=str(gpus), SLURM_CPUS_PER_TASK=str(cores_per_gpu),
                SLURM_TMPDIR="/tmp", SLURM_SUBMIT_DIR=str(ROOT), XDG_DATA_HOME=str(DATA_HOME))


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
