"""The GPU sampler's cost on training speed, and real nvidia-smi samples for `slurmkit report`.

Two steps, because the GPU machine has no slurmkit dependencies and no SLURM:

    python bench/gpu_sampler.py render          # here: bench/gpubox/out/sampler/*.sbatch + cases.json
    python bench/gpu_sampler.py run --out DIR   # on the 2-GPU machine (device tool, nvidia-h100-x2,
                                                # carrying the ignored bench/gpubox/out)
    python bench/gpu_sampler.py run --smoke --out DIR   # anywhere: stand-ins for nvidia-smi, torchrun, the GPU

`render` writes the scripts a user of the gpubox profile would get, with the sampler on and
with `monitor: {gpu: false}`, for three cases:

- busy: kind multigpu, 2 GPUs, ResNet-50 DDP on both (bench/resnet_ddp.py, batch 128 per GPU);
- one-of-two: kind gpu asking 2 GPUs, running the 1-GPU payload (one process): GPU 1 idles;
- idle: kind gpu, 1 GPU, a ResNet-18 at batch 16 that sleeps 0.2 s after each step.

The time limit is 5 minutes, so the sampler runs at its floor of one sample a second: the
most it can cost. `run` runs each script's body with bash under `taskset` (the CPUs SLURM
would give it) and the variables SLURM would set, the sampler on and off alternating (which
goes first alternates too), `--reps` times; it reports the median images/s of each and the
overhead (off - on) / off in %, checks what the sampler left (its .state line "stopped ...",
the exit file, CSV lines in the contract's layout, lines that reached the file while the job
still ran: nvidia-smi writes line by line), and writes DIR/gpu_sampler.json. The sampler's
files stay in DIR/runs/<case>-on-<rep>/ (4242.gpu.<host>.csv, .state, 4242.exit) for the
report's parser. The device machine has no cgroup: nvidia-smi there lists both GPUs even for
the 1-GPU idle job, so beside its CSV the bench writes 4242.gpu.<host>.job.csv with only the
job's GPU (what nvidia-smi shows inside a SLURM job on the Alliance, where the cgroup hides the others).

Recorded 2026-11-26 on 2 x H200 (torch 2.11, driver 580), 3 runs each, sampler every 1 s:
bench/results/gpu-sampler-h200x2.json: busy (multigpu, 2 GPUs) 4515.2 img/s with the sampler,
4507.0 without (-0.18%); one-of-two 2305.9 and 2307.9 (0.09%); every run's files met the
contract, lines reached the CSV while the job ran. The files of one run of each case are
tests/unit/fixtures/gpu_samples_h200 (test_gpu_use_h200.py reads them as the report does).
"""

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from gpubench import GPUBOX, ROOT, gpubox_job, steps

OUT = GPUBOX / "out" / "sampler"
SMOKE = ROOT / "bench" / "smoke"
STAND_INS = ROOT / "tests" / "stand_ins"
JOB_ID = "4242"
FIELDS = 8   # timestamp, index, uuid, name, utilization.gpu, memory.used, memory.total, power.draw
RESNET = ["python3", "bench/resnet_ddp.py", "--steps", "200"]
CASES = {   # name -> kind, GPUs, command, batch size (multigpu), measure the overhead, the job's GPUs
    "busy": ("multigpu", 2, RESNET + ["--label", "busy"], 128, True, None),
    "one-of-two": ("gpu", 2, RESNET + ["--label", "one-of-two"], None, True, None),
    "idle": ("gpu", 1, ["python3", "bench/resnet_ddp.py", "--model", "resnet18", "--batch", "16", "--warmup", "5",
                        "--steps", "100", "--sleep", "0.2", "--label", "idle"], None, False, "0"),
}


def render() -> None:
    """Each case's script with the sampler on and off, and cases.json: what `run` needs to run
    them as SLURM would (tasks per node, cores per task, the job's GPUs), so that it needs no slurmkit."""
    Job = gpubox_job()
    OUT.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for case, (kind, gpus, command, batch, overhead, visible) in CASES.items():
        for sampler in ("on", "off") if overhead else ("on",):
            launch = {"command": command, **({"batch_size": batch} if batch else {})}
            job = Job(name=f"sampler-{case}", profile="gpubox", kind=kind, resources={"gpus": f"h100:{gpus}", "time": "5m", "mem": "64G"},
                      launch=launch, monitor={"gpu": sampler == "on"})
            plan = job.resolve().plan
            if sampler == "on":
                interval = plan.gpu_sampler.interval_s
            path = OUT / f"{case}-{sampler}.sbatch"
            path.write_text(job.render(warn=False, standalone=True))   # it runs where slurmkit is not installed
            print(path.relative_to(ROOT))
        directives = dict(plan.directives)
        tasks, cpus = int(directives["--ntasks-per-node"]), int(directives["--cpus-per-task"])
        manifest[case] = {"gpus": gpus, "tasks_per_node": tasks, "cpus_per_task": cpus, "cores": tasks * cpus,
                          "overhead": overhead, "visible": visible, "interval_s": interval}
    (OUT / "cases.json").write_text(json.dumps(manifest, indent=1))
    print((OUT / "cases.json").relative_to(ROOT))


def _lines(folder: Path) -> int:
    return sum(len(p.read_text().splitlines()) for p in folder.glob(f"{JOB_ID}.gpu.*.csv"))


def _one(case: str, sampler: str, rep: int, spec: dict, out: Path, env: dict, smoke: bool) -> dict:
    """One run of a script's body; what it printed and what the sampler left."""
    folder = out / "runs" / f"{case}-{sampler}-{rep}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    cores = min(spec["cores"], os.cpu_count() or 1) if smoke else spec["cores"]
    # the GPUs SLURM would have given (slurmkit_run samples a job that has some), and the interval
    # it would read from squeue for the 5-minute limit: there is no squeue here
    run_env = dict(env, SLURMKIT_JOB_DIR=str(folder), SLURM_NTASKS_PER_NODE=str(spec["tasks_per_node"]),
                   SLURM_CPUS_PER_TASK=str(spec["cpus_per_task"]), SLURM_NTASKS=str(spec["tasks_per_node"]),
                   SLURM_GPUS_ON_NODE=str(spec["gpus"]), SLURMKIT_GPU_SAMPLE_INTERVAL=str(spec["interval_s"]))
    if spec["visible"] is not None:
        run_env["CUDA_VISIBLE_DEVICES"] = spec["visible"]
    started = time.monotonic()
    process = subprocess.Popen(["taskset", "-c", f"0-{cores - 1}", "bash", str(OUT / f"{case}-{sampler}.sbatch")],
                               cwd=ROOT, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = {"while_running": 0, "first_line_s": None}

    def watch() -> None:   # CSV lines that reached the file while the job still ran
        while process.poll() is None:
            count = _lines(folder)
            if count and seen["first_line_s"] is None:
                seen["first_line_s"] = round(time.monotonic() - started, 1)
            seen["while_running"] = max(seen["while_running"], count)
            time.sleep(0.5)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    stdout, stderr = process.communicate(timeout=600)
    watcher.join()
    match = re.search(r"^BENCH (\{.*\})$", stdout, re.M)
    if process.returncode != 0 or not match:
        raise SystemExit(f"{case} (sampler {sampler}) failed ({process.returncode}):\n{stdout[-3000:]}\n{stderr[-3000:]}")
    result = dict(json.loads(match.group(1)), case=case, sampler=sampler, rep=rep, wall_s=round(time.monotonic() - started, 1))
    if sampler == "on":
        result["files"] = _check_files(folder, spec, seen)
    print(json.dumps(result), flush=True)
    return result


def _check_files(folder: Path, spec: dict, seen: dict) -> dict:
    """What the sampler left, against the contract: a .state line, whole CSV lines of 8 fields,
    the GPUs it saw; and, for the idle case, the job's GPU alone (what the cgroup shows in a job)."""
    states = {p.name: p.read_text() for p in folder.glob(f"{JOB_ID}.gpu.*.state")}
    exit_file = folder / f"{JOB_ID}.exit"
    checks = {"states": states, "exit": exit_file.read_text().strip() if exit_file.exists() else None,
              "lines_seen_while_running": seen["while_running"], "first_line_s": seen["first_line_s"]}
    for csv in folder.glob(f"{JOB_ID}.gpu.*.csv"):
        lines = csv.read_text().splitlines()
        rows = [line.split(", ") for line in lines]
        checks[csv.name] = {"lines": len(lines), "bad_lines": sum(len(r) != FIELDS for r in rows),
                            "gpus": sorted({r[1] for r in rows if len(r) == FIELDS}), "first": lines[0] if lines else None,
                            "last": lines[-1] if lines else None}
        if spec["visible"] is not None:
            keep = set(spec["visible"].split(","))
            csv.with_name(csv.name.replace(".csv", ".job.csv")).write_text(
                "".join(line + "\n" for line, r in zip(lines, rows) if len(r) == FIELDS and r[1] in keep))
    good = (all(s.startswith("stopped ") and s.endswith(f"interval={spec['interval_s']}\n") for s in states.values()) and states
            and checks["exit"] == "0" and seen["while_running"] > 0
            and all(c["bad_lines"] == 0 and c["lines"] > 0 for k, c in checks.items() if k.endswith(".csv")))
    checks["ok"] = bool(good)
    return checks


def run(out: Path, reps: int, cases: list, smoke: bool) -> None:
    manifest = json.loads((OUT / "cases.json").read_text())
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1",
               PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}", SLURM_JOB_ID=JOB_ID, SLURM_TMPDIR="/tmp",
               SLURM_NNODES="1", SLURM_JOB_NUM_NODES="1")
    if smoke:   # no GPU, no torch: stand-ins first on PATH, the payload prints a made-up line
        env.update(PATH=f"{SMOKE}:{STAND_INS}:{env['PATH']}", SLURMKIT_BENCH_SMOKE="1")
    elif not shutil.which("nvidia-smi", path=env["PATH"]):
        raise SystemExit("no nvidia-smi on PATH: run this on the GPU machine, or with --smoke")
    results = []
    for rep in range(reps):
        for case in cases:
            spec = manifest[case]
            if not spec["overhead"]:
                if rep == 0:
                    results.append(_one(case, "on", rep, spec, out, env, smoke))
                continue
            order = ("on", "off") if rep % 2 == 0 else ("off", "on")
            results += [_one(case, sampler, rep, spec, out, env, smoke) for sampler in order]
    summary = {}
    for case in cases:
        runs = [r for r in results if r["case"] == case]
        on = [r["images_per_s"] for r in runs if r["sampler"] == "on"]
        off = [r["images_per_s"] for r in runs if r["sampler"] == "off"]
        entry = {"images_per_s_on": statistics.median(on), "files_ok": all(r["files"]["ok"] for r in runs if r["sampler"] == "on")}
        if off:
            entry["images_per_s_off"] = statistics.median(off)
            entry["overhead_pct"] = round(100 * (entry["images_per_s_off"] - entry["images_per_s_on"]) / entry["images_per_s_off"], 2)
            entry["runs_each"] = len(on)
        summary[case] = entry
    print(f"\ncase          sampler on img/s   off img/s   overhead   files  (medians; device: {results[0]['device']})")
    for case, s in summary.items():
        off = f"{s['images_per_s_off']:11.1f} {s['overhead_pct']:9.2f}%" if "overhead_pct" in s else f"{'-':>11} {'-':>10}"
        print(f"{case:12} {s['images_per_s_on']:18.1f} {off}   {'ok' if s['files_ok'] else 'BAD'}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_sampler.json").write_text(json.dumps({"smoke": smoke, "summary": summary, "runs": results}, indent=1))
    if not all(s["files_ok"] for s in summary.values()):
        raise SystemExit("the sampler's files are not what the contract says: see gpu_sampler.json")


def main() -> None:
    def options(go):
        go.add_argument("--cases", default=",".join(CASES), help="a comma-separated subset of: " + ", ".join(CASES))
        go.add_argument("--smoke", action="store_true", help="no GPU needed: nvidia-smi, torchrun and the payload are stand-ins")

    args = steps(__doc__, options)
    if args.step == "render":
        render()
    else:
        run(args.out.resolve(), args.reps, args.cases.split(","), args.smoke)


if __name__ == "__main__":
    main()
