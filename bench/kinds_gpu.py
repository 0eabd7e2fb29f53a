"""Multi-GPU scaling of the `lightning` and `accelerate` scripts slurmkit renders, beside a bare
`torchrun --standalone` of the same synthetic ResNet-50 (batch 128 per GPU, bf16, channels-last).

Two steps, because the GPU machine has no slurmkit dependencies and no SLURM:

    python bench/kinds_gpu.py render           # here: bench/gpubox/out/{lightning,accelerate}-{1,2}gpu.sbatch
    python bench/kinds_gpu.py run --out DIR    # on the 2-GPU machine (device tool, nvidia-h100-x2,
                                               # carrying the ignored bench/gpubox/out)
    python bench/kinds_gpu.py run --smoke      # anywhere: CPU, a tiny model, gloo; checks the plumbing

`run` runs each rendered script with bash under `taskset` for the CPUs SLURM would give the job
(16 per GPU), with SLURM's variables set as the batch step has them and bench/shim first on
PATH: its `srun` starts --ntasks copies (else $SLURM_NTASKS) with SLURM_PROCID/SLURM_LOCALID/
SLURM_NODEID set and passes signals on, its `scontrol show hostnames` says localhost. Payloads:
bench/resnet_lightning.py, bench/resnet_accelerate.py, bench/resnet_bare.py (bench/resnet_synthetic.py).
Runs alternate between launchers and repeat; it prints the median images/s on 1 and 2 GPUs and
the 2/1 ratio of each, and writes DIR/kinds_gpu.json. NVLink multicast stays off (NCCL_NVLS_ENABLE=0).

Recorded 2026-11-26 on 2 x H200 (torch 2.11, Lightning 2.6.6, Accelerate 1.15.0), medians of 2:
bench/results/kinds-gpu-h200x2-60steps.json: bare 4135 -> 7470 img/s (1.806x), lightning 4299 ->
6214 (1.445x), accelerate 4250 -> 8231 (1.937x). Lightning's two processes ran below bare's two.
Three causes, all in the bench, none in the kind's script (2026-11-27, bench/results/
kinds-gpu-2gpu-direct.json: label +direct launches the same payload with torchrun and no
slurmkit script, and scaled as the kind's script did, 5866 vs 5826 img/s on 2 H100):
1. the srun shim bound no CPUs per task, as SLURM's srun does (it binds now);
2. Lightning copied the loader's unused index to the GPU each step (the payload stops that);
3. DDP's forward copies every CPU tensor among its inputs to the GPU, from pageable memory: the
   loader now yields a plain int. Then, in one run on 2 H200: bare 3588 -> 6831 img/s (1.904x),
   lightning 4337 -> 6796 (1.567x; 3788 on one GPU with DDP, label lightning+ddp@1).
At two GPUs both kinds run at bare's pace (accelerate 6869 vs bare 6811 on 2 H100). Their 2/1
ratios stay lower because their one GPU runs faster than bare's, which torchrun wraps in DDP
(Lightning's one GPU runs without DDP, strategy "auto"; so does Accelerate's one process).
Machines lent as the same kind differ by up to 30% at 2 GPUs: compare within one run only.

Labels: a launcher (bare, lightning, accelerate), variants after "+" (VARIANTS: copy, pin, ddp,
nobind, direct) and GPU counts after "@" (@2, @1/2; none: 1 and 2). +direct: the framework's own
launcher (torchrun for Lightning, `accelerate launch`), no slurmkit script, no SLURM variables.
"""

import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

from gpubench import GPUBOX, ROOT, batch_step_environment, gpubox_job, steps

OUT = GPUBOX / "out"
CORES_PER_GPU = 16
KINDS = {"lightning": "bench/resnet_lightning.py", "accelerate": "bench/resnet_accelerate.py"}


def render() -> None:
    """The jobs as a user would write them for the gpubox profile, on 1 and 2 GPUs."""
    Job = gpubox_job()
    OUT.mkdir(exist_ok=True)
    for kind, payload in KINDS.items():
        for gpus in (1, 2):
            launch = {"command": ["python3", payload], "batch_size": 128}
            if kind == "accelerate":
                launch["mixed_precision"] = "bf16"
            job = Job(name="resnet50", profile="gpubox", kind=kind, resources={"gpus": f"h100:{gpus}", "time": "1h", "mem": "64G"},
                      launch=launch)
            path = OUT / f"{kind}-{gpus}gpu.sbatch"
            path.write_text(job.render(warn=False))
            print(path.relative_to(ROOT))


def _launch(label: str, gpus: int, smoke: bool, direct: bool = False) -> list:
    """The command for a label: bare torchrun, the kind's rendered script, or (``direct``) the same
    framework payload under its own launcher with no slurmkit script: what is left between the
    kind and its direct launch is the script's doing (binding, environment)."""
    extra = ["--smoke"] if smoke else []
    if label == "bare":
        return [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={gpus}", "bench/resnet_bare.py", *extra]
    if direct and label == "lightning":
        return [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={gpus}", KINDS[label], *extra]
    if direct:
        multi = ["--multi_gpu"] if gpus > 1 else []
        return ["accelerate", "launch", *multi, f"--num_processes={gpus}", "--num_machines=1", "--mixed_precision=bf16",
                "--dynamo_backend=no", KINDS[label], *extra]
    script = OUT / f"{label}-{gpus}gpu.sbatch"
    if smoke:   # the payload's own words, plus --smoke: the script runs as rendered otherwise
        text = script.read_text().replace(KINDS[label] + " &", KINDS[label] + " --smoke &")
        script = OUT / f"smoke-{label}-{gpus}gpu.sbatch"
        script.write_text(text)
    cpus = f"0-{min(CORES_PER_GPU * gpus, os.cpu_count()) - 1}"
    return ["taskset", "-c", cpus, "bash", str(script)]


def _batch_step_environment(gpus: int, smoke: bool) -> dict:
    """What SLURM gives the batch step of a one-node job of ``gpus`` tasks, and the shims first on PATH."""
    env = batch_step_environment(gpus, CORES_PER_GPU)
    if smoke:
        env.update(ACCELERATE_USE_CPU="true", CUDA_VISIBLE_DEVICES="")
    return env


#: a label's variant flags (``lightning+copy+pin``) and the environment each sets
VARIANTS = {"copy": "BENCH_COPY", "pin": "BENCH_PIN", "ddp": "BENCH_DDP", "nobind": "BENCH_SHIM_NO_BIND", "direct": "BENCH_DIRECT"}


def parse_label(text: str) -> tuple:
    """``lightning+copy@2`` -> ("lightning+copy", "lightning", {"BENCH_COPY": "1"}, (2,)); no ``@N``: 1 and 2 GPUs."""
    label, _, gpus = text.partition("@")
    launcher, *flags = label.split("+")
    unknown = [f for f in flags if f not in VARIANTS] + ([launcher] if launcher not in ("bare", *KINDS) else [])
    if unknown:
        raise SystemExit(f"unknown in label {text!r}: {', '.join(unknown)} "
                         f"(launchers: bare, {', '.join(KINDS)}; variants: {', '.join(VARIANTS)})")
    return label, launcher, {VARIANTS[f]: "1" for f in flags}, tuple(int(g) for g in gpus.split("/")) if gpus else (1, 2)


def _one(text: str, gpus: int, smoke: bool, steps: int = 60) -> dict:
    label, launcher, variant, _ = parse_label(text)
    env = dict(_batch_step_environment(gpus, smoke), BENCH_STEPS=str(steps), **variant)
    direct = "BENCH_DIRECT" in variant
    if direct:      # no SLURM around a direct launch: Lightning would take SLURM's variables before torchrun's
        env = {name: value for name, value in env.items() if not name.startswith("SLURM_")}
    done = subprocess.run(_launch(launcher, gpus, smoke, direct), cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    match = re.search(r"^BENCH (\{.*\})$", done.stdout, re.M)
    if done.returncode != 0 or not match:
        raise SystemExit(f"{label} on {gpus} GPU(s) failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}")
    result = json.loads(match.group(1))
    result["launcher"] = label
    print(json.dumps(result), flush=True)
    return result


def run(out: Path, reps: int, labels: list, smoke: bool, steps: int = 60) -> None:
    parsed = [parse_label(text) for text in labels]
    missing = sorted({launcher for _, launcher, _, _ in parsed if launcher != "bare" and not (OUT / f"{launcher}-1gpu.sbatch").exists()})
    if missing:
        raise SystemExit(f"no rendered scripts for {', '.join(missing)} in {OUT}: run `python bench/kinds_gpu.py render` first")
    results = [_one(text, gpus, smoke, steps) for _ in range(reps) for text, (_, _, _, counts) in zip(labels, parsed) for gpus in counts]
    summary = {}
    for label, _, _, counts in parsed:
        median = {g: statistics.median(r["images_per_s"] for r in results if r["launcher"] == label and r["gpus"] == g) for g in counts}
        summary[label] = {f"images_per_s_{g}gpu": median[g] for g in counts}
        if len(median) == 2:
            summary[label]["ratio"] = round(median[2] / median[1], 3)
    print("\nlauncher               1 GPU img/s   2 GPUs img/s   ratio   (medians of", reps,
          "runs each, device:", results[0]["device"] + ")")
    for label, s in summary.items():
        one, two, ratio = s.get("images_per_s_1gpu"), s.get("images_per_s_2gpu"), s.get("ratio")
        print(f"{label:22} {one or 0:12.1f} {two or 0:14.1f} " + (f"{ratio:7.3f}x" if ratio else "      -"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "kinds_gpu.json").write_text(json.dumps({"smoke": smoke, "summary": summary, "runs": results}, indent=1))


def main() -> None:
    def options(go):
        go.add_argument("--labels", default="bare,lightning,accelerate",
                        help="launchers, each maybe with variants and GPU counts: lightning+copy+pin@2, bare@1/2 (see VARIANTS)")
        go.add_argument("--smoke", action="store_true", help="CPU, a tiny model, 3 steps, 1 rep: the plumbing, not a measure")
        go.add_argument("--steps", type=int, default=60, help="timed steps after the 30 of warm-up, for every launcher")

    args = steps(__doc__, options)
    if args.step == "render":
        render()
    else:
        run(args.out, 1 if args.smoke else args.reps, args.labels.split(","), args.smoke, args.steps)


if __name__ == "__main__":
    main()
