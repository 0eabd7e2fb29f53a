"""bench/gpu_sampler.py's plumbing, without a GPU (its --smoke mode: stand-ins for nvidia-smi,
torchrun and the payload), so that its `run` works the first time on the device machine."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_bench_renders_its_cases_and_its_smoke_run_checks_the_sampler_files(tmp_path):
    bench = ROOT / "bench" / "gpu_sampler.py"
    subprocess.run([sys.executable, str(bench), "render"], check=True, capture_output=True)
    cases = json.loads((ROOT / "bench" / "gpubox" / "out" / "sampler" / "cases.json").read_text())
    assert cases["busy"]["tasks_per_node"] == 2 and cases["one-of-two"]["gpus"] == 2 and cases["idle"]["interval_s"] == 1
    off = (ROOT / "bench" / "gpubox" / "out" / "sampler" / "busy-off.sbatch").read_text()
    on = (ROOT / "bench" / "gpubox" / "out" / "sampler" / "busy-on.sbatch").read_text()
    assert "\nslurmkit_sample_gpus off " in off and "\nslurmkit_sample_gpus off " not in on   # on: slurmkit_run's default
    done = subprocess.run([sys.executable, str(bench), "run", "--smoke", "--reps", "1", "--cases", "idle,one-of-two",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((tmp_path / "gpu_sampler.json").read_text())
    assert result["summary"]["one-of-two"]["overhead_pct"] == 0 and result["summary"]["idle"]["files_ok"]
    idle = next(r for r in result["runs"] if r["case"] == "idle")
    assert idle["files"]["lines_seen_while_running"] > 0           # lines reach the file while the job runs
    assert list((tmp_path / "runs" / "idle-on-0").glob("4242.gpu.*.job.csv"))
