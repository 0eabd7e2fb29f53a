"""Multi-GPU scaling of the `multigpu` script slurmkit renders, beside a bare torchrun.

Two steps, because the GPU machine has no slurmkit dependencies and no SLURM:

    python bench/multigpu.py render          # here: bench/gpubox/out/*.sbatch for 1 and 2 GPUs
    python bench/multigpu.py run --out DIR   # on the 2-GPU machine (device tool, nvidia-h100-x2,
                                             # carrying the ignored bench/gpubox/out)

`run` trains synthetic ResNet-50 (bench/resnet_ddp.py: batch 128 per GPU, bf16 autocast) on
1 and 2 GPUs, launched (a) by `torchrun --standalone` with PyTorch's defaults and (b) by the
rendered script, run with bash under `taskset` for the CPUs SLURM would give the job (16 per
GPU) -- the body of the job, as SLURM would run it, with SLURM's batch-step variables and
bench/shim's srun (one task per GPU, each bound to its 16 CPUs, the task prolog run first). Runs alternate between launchers and
repeat; it prints the median images/s and the 2-GPU/1-GPU ratio of each, and writes JSON.
NVLink multicast stays off (NCCL_NVLS_ENABLE=0), as the machine requires.

Recorded: bench/results/multigpu-h200x2.json (2 x H200 over NVLink, torch 2.11, 2 runs each):
bare torchrun 2294 -> 4581 img/s (1.996x); slurmkit's script 2299 -> 4581 img/s (1.992x);
with DDP's bucket views and a static graph 2316 -> 4612 img/s (1.991x). Those scripts started
the ranks with torchrun. The srun launch (one task per GPU, task prolog), 2026-11-28, 2 runs
each: bench/results/multigpu-srun-h200x2.json: bare torchrun 2260 -> 4497 img/s (1.990x);
slurmkit's script 2265 -> 4505 img/s (1.989x).
"""

import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

from gpubench import GPUBOX, ROOT, batch_step_environment, gpubox_job, steps

OUT = GPUBOX / "out"
CORES_PER_GPU = 16
VARIANTS = {"defaults": "slurmkit", "tuned": "slurmkit-tuned"}   # --ddp value -> label


def render() -> None:
    """The job as a user would write it for the gpubox profile, for 1 and 2 GPUs."""
    Job = gpubox_job()
    OUT.mkdir(exist_ok=True)
    for ddp, label in VARIANTS.items():
        for gpus in (1, 2):
            job = Job(name="resnet50", profile="gpubox", kind="multigpu", resources={"gpus": f"h100:{gpus}", "time": "1h", "mem": "64G"},
                      launch={"command": ["python3", "bench/resnet_ddp.py", "--ddp", ddp, "--label", label], "batch_size": 128})
            path = OUT / f"{label}-{gpus}gpu.sbatch"
            path.write_text(job.render(warn=False))
            print(path.relative_to(ROOT))


def _launch(label: str, gpus: int) -> list:
    if label == "bare":
        return [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={gpus}",
                "bench/resnet_ddp.py", "--ddp", "defaults", "--label", "bare"]
    cpus = f"0-{CORES_PER_GPU * gpus - 1}"
    return ["taskset", "-c", cpus, "bash", str(OUT / f"{label}-{gpus}gpu.sbatch")]


def _one(label: str, gpus: int) -> dict:
    env = batch_step_environment(gpus, CORES_PER_GPU)
    if label == "bare":   # torchrun alone, no SLURM around it
        env = {name: value for name, value in env.items() if not name.startswith("SLURM_")}
    done = subprocess.run(_launch(label, gpus), cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    match = re.search(r"^BENCH (\{.*\})$", done.stdout, re.M)
    if done.returncode != 0 or not match:
        raise SystemExit(f"{label} on {gpus} GPU(s) failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    result = json.loads(match.group(1))
    result["launcher"] = label
    print(json.dumps(result), flush=True)
    return result


def run(out: Path, reps: int, labels: list) -> None:
    results = [_one(label, gpus) for _ in range(reps) for label in labels for gpus in (1, 2)]
    summary = {}
    for label in labels:
        median = {g: statistics.median(r["images_per_s"] for r in results if r["launcher"] == label and r["gpus"] == g) for g in (1, 2)}
        summary[label] = {"images_per_s_1gpu": median[1], "images_per_s_2gpu": median[2], "ratio": round(median[2] / median[1], 3)}
    print("\nlauncher          1 GPU img/s   2 GPUs img/s   ratio   (medians of", reps, "runs each, device:", results[0]["device"] + ")")
    for label, s in summary.items():
        print(f"{label:16} {s['images_per_s_1gpu']:12.1f} {s['images_per_s_2gpu']:14.1f} {s['ratio']:7.3f}x")
    out.mkdir(parents=True, exist_ok=True)
    (out / "multigpu.json").write_text(json.dumps({"summary": summary, "runs": results}, indent=1))


def main() -> None:
    args = steps(__doc__, lambda go: go.add_argument("--labels", default="bare,slurmkit,slurmkit-tuned"))
    if args.step == "render":
        render()
    else:
        run(args.out, args.reps, args.labels.split(","))


if __name__ == "__main__":
    main()
