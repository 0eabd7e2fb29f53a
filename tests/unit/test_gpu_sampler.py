"""The GPU sampler that ``slurmkit report`` reads: what resolve decides, what the script formats,
and the sampler function itself run in bash against stand-ins of nvidia-smi and rocm-smi (the
real nvidia-smi runs in bench/gpu_sampler.py on the device; the cluster tests are
tests/integration/test_gpu_sampler.py)."""

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from slurmkit import Job
from slurmkit.render.runtime import runtime
from slurmkit.resolve.gpusampler import interval_s

STAND_INS = Path(__file__).resolve().parents[1] / "stand_ins"
NVIDIA_LINE = re.compile(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{3}, \d+, [^,]+, [^,]+, ([^,]+), ([^,]+), ([^,]+), ([^,]+)$")


def _job(kind="gpu", profile="local", gpus="p100:1", time="3h", nodes=1, **fields):
    resources = {"time": time, "nodes": nodes, **({"gpus": gpus} if gpus else {})}
    return Job(name="s", kind=kind, profile=profile, account="def-test", resources=resources,
               launch={"command": ["python", "train.py"]}, **fields)


@pytest.mark.parametrize("limit_s, expected", [(60, 1), (299, 1), (600, 2), (3 * 3600, 36), (5 * 3600, 60),
                                               (7 * 86400, 60), (1, 1)])
def test_the_interval_is_about_300_samples_over_the_limit_between_1_and_60_s(limit_s, expected):
    assert interval_s(limit_s) == expected


def _runtime_interval(limit: str) -> int:
    """The interval the runtime's slurmkit_run picks for a job whose squeue says ``limit`` (%l)."""
    body = runtime().text + f'squeue() {{ echo {limit}; }}\nSLURM_JOB_ID=1\n_sk_gpu_interval_s\n'
    done = subprocess.run(["bash", "-c", body], capture_output=True, text=True, env={**os.environ, "PATH": os.environ["PATH"]})
    return int(done.stdout)


@pytest.mark.parametrize("time, limit", [("10m", "10:00"), ("3h", "3:00:00"), ("1m", "1:00"), ("2d", "2-00:00:00"),
                                         ("5h", "5:00:00"), ("299s", "4:59")])
def test_the_runtime_picks_the_interval_resolve_models_from_the_same_time_limit(time, limit):
    """The script carries no sampler line: slurmkit_run reads the limit from squeue (a chain's link,
    a limit changed with scontrol, all as SLURM has it) and applies gpusampler.py's rule."""
    assert _runtime_interval(limit) == _job(time=time).resolve().plan.gpu_sampler.interval_s


def test_a_job_with_gpus_is_sampled_by_default_and_monitor_gpu_false_turns_it_off():
    on = _job().render()
    assert "slurmkit_sample_gpus" not in on                       # on by default: slurmkit_run starts it
    # and the script says so where it runs
    assert "slurmkit submit samples its GPUs (off: monitor: {gpu: false})" in on
    assert "nvidia-smi --query-gpu=timestamp,index,uuid,name,utilization.gpu," in runtime().text
    off = _job(monitor={"gpu": False}).render()
    assert "\nslurmkit_sample_gpus off  # (monitor: {gpu: false}; slurmkit_run samples a job's GPUs otherwise)\n" in off
    assert "samples its GPUs" not in off
    assert "slurmkit_sample_gpus" not in _job(kind="serial", gpus=None).render()     # no GPUs: nothing to turn off
    assert _job(monitor={"gpu": True}).render() == on


def test_the_sampler_is_stopped_in_the_exit_trap_before_outputs_are_saved_and_the_exit_file_is_written():
    library = runtime().text
    trap = library[library.index("_sk_on_exit() {"):]
    assert trap.index("_sk_gpu_stop") < trap.index("_sk_copy_back") < trap.index('"$file.partial"')
    run = library[library.index("slurmkit_run() {"):]
    assert run.index("_sk_start_gpu_sampler") < run.index('"$@" <&0 &')   # started before the payload


def test_the_tool_is_the_one_the_node_has():
    """nvidia-smi; rocm-smi on AMD nodes (Nibi's MI300A), where nvidia-smi is not installed."""
    library = runtime().text
    assert "if ! command -v nvidia-smi > /dev/null && command -v rocm-smi > /dev/null; then SLURMKIT_GPU_TOOL=rocm-smi; fi" in library
    assert "rocm-smi" not in _job(profile="nibi", gpus="mi300a:4").render()


def test_a_multi_node_job_runs_one_sampler_per_node_in_an_overlapping_step():
    library = runtime().text
    assert 'if [ "${SLURM_NNODES:-1}" -gt 1 ]; then' in library
    assert re.search(r'srun --overlap --nodes="\$SLURM_NNODES" --ntasks="\$SLURM_NNODES" --ntasks-per-node=1 '
                     r'--cpus-per-task=1 --mem=0 \\\n\s+bash -c _sk_gpu_sample', library)


@pytest.mark.parametrize("fields", [dict(), dict(kind="ddp", gpus="p100:2", nodes=2),
                                    dict(kind="array", array={"parameters": {"x": [1, 2]}}), dict(profile="nibi", gpus="mi300a:4")])
def test_scripts_with_the_sampler_pass_bash_n_and_shellcheck(tmp_path, fields):
    path = tmp_path / "job.sbatch"
    path.write_text(_job(**fields).render())
    subprocess.run(["bash", "-n", str(path)], check=True)
    result = subprocess.run(["shellcheck", "--shell=bash", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def _sampler_function(script: str, tool: str = "nvidia-smi") -> str:
    """The runtime's sampler, with the tool slurmkit_run would pick on the node."""
    return runtime().text + f"export SLURMKIT_GPU_TOOL={tool}\n"


def _run_sampler(tmp_path, script, path_dirs, run_s=2.5, env=None, tool="nvidia-smi"):
    """_sk_gpu_sample as the script defines it, under set -euo pipefail as in the job; stopped with
    USR2 as _sk_gpu_stop stops it, from the shell that started it in the background, as the
    script does. Returns (csv lines, state)."""
    body = ("set -euo pipefail\n" + _sampler_function(script, tool) +
            f"_sk_gpu_sample &\n_sk_gpu=$!\nsleep {run_s}\nkill -USR2 \"$_sk_gpu\" 2> /dev/null || true\nwait \"$_sk_gpu\"\n")
    environment = {**os.environ, "PATH": os.pathsep.join(map(str, path_dirs)), "SLURMKIT_JOB_DIR": str(tmp_path),
                   "SLURM_JOB_ID": "77", "SLURMKIT_GPU_SAMPLE_INTERVAL": "1", **(env or {})}
    assert subprocess.run(["bash", "-c", body], env=environment, timeout=run_s + 10).returncode == 0
    host = subprocess.run(["hostname", "-s"], capture_output=True, text=True).stdout.strip()
    csv = tmp_path / f"77.gpu.{host}.csv"
    return (csv.read_text().splitlines() if csv.exists() else []), (tmp_path / f"77.gpu.{host}.state").read_text()


def _system_path():
    return [Path(shutil.which(tool)).parent for tool in ("bash", "date", "sleep", "hostname", "awk")]


def test_the_nvidia_sampler_writes_whole_lines_until_stopped_then_its_state(tmp_path):
    lines, state = _run_sampler(tmp_path, _job().render(), [STAND_INS, *_system_path()], env={"CUDA_VISIBLE_DEVICES": "0,1"})
    assert re.fullmatch(r"stopped \d+ interval=1\n", state)
    assert len(lines) >= 4 and all(NVIDIA_LINE.match(line) for line in lines), lines


def test_without_the_tool_the_sampler_says_unavailable(tmp_path):
    lines, state = _run_sampler(tmp_path, _job().render(), _system_path(), run_s=0.5)
    assert lines == [] and re.fullmatch(r"unavailable nvidia-smi is not on PATH on \S+\n", state)


ROCM_CSV = ("device,GPU use (%),Current Socket Graphics Package Power (W),VRAM Total Memory (B),VRAM Total Used Memory (B),"
            "Card Series,Card Model,Card Vendor,Card SKU\n"
            "card0,87,512.0,137438953472,68719476736,AMD Instinct MI300A,0x74a0,Advanced Micro Devices Inc. [AMD/ATI],MI300A\n"
            "card1,0,N/A,137438953472,1048576,AMD Instinct MI300A,0x74a0,Advanced Micro Devices Inc. [AMD/ATI],MI300A\n")


def test_the_amd_sampler_turns_rocm_smi_csv_into_nvidia_smi_s_layout(tmp_path):
    """rocm-smi's --csv (the layout of ROCm 6's rocm-smi: a header, then a line per card) becomes the
    contract's line per GPU; what it lacks (uuid, a power it does not report) is [N/A]."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "rocm-smi").write_text(f"#!/bin/bash\ncat <<'EOF'\n{ROCM_CSV}EOF\n")
    (tools / "rocm-smi").chmod(0o755)
    script = _job(profile="nibi", gpus="mi300a:4").render()
    lines, state = _run_sampler(tmp_path, script, [tools, *_system_path()], run_s=1.5, tool="rocm-smi")
    assert re.fullmatch(r"stopped \d+ interval=1\n", state)
    assert len(lines) >= 2 and all(NVIDIA_LINE.match(line) for line in lines), lines
    assert lines[0].split(", ")[1:] == ["0", "[N/A]", "AMD Instinct MI300A", "87", "65536", "131072", "512.0"]
    assert lines[1].split(", ")[1:] == ["1", "[N/A]", "AMD Instinct MI300A", "0", "1", "131072", "[N/A]"]


@pytest.mark.parametrize("path", ["stand-in", "none"])
def test_a_stop_that_comes_before_the_sampler_has_started_still_leaves_its_state_line(tmp_path, path):
    """A payload that ends at once: the exit trap's USR2 may reach the sampler while it is still
    looking for nvidia-smi; it is kept, and the sampler stops as soon as it can, with its line."""
    slow = tmp_path / "slow"       # a hostname that takes 1 s: the stop comes while the sampler asks it
    slow.mkdir()
    (slow / "hostname").write_text(f"#!/bin/bash\nsleep 1\nexec {shutil.which('hostname')} \"$@\"\n")
    (slow / "hostname").chmod(0o755)
    dirs = [slow] + ([STAND_INS] if path == "stand-in" else []) + _system_path()
    started = time.monotonic()
    lines, state = _run_sampler(tmp_path, _job().render(), dirs, run_s=0.2)
    assert time.monotonic() - started < 5 and lines == []
    assert re.fullmatch(r"(stopped \d+ interval=1|unavailable nvidia-smi is not on PATH on \S+)\n", state)
    assert state.startswith("stopped" if path == "stand-in" else "unavailable")


def test_a_request_for_any_gpu_model_on_a_site_with_amd_and_nvidia_nodes_uses_nvidia_smi():
    """Nibi's "gpus: 2" may land on an H100 or an MI300A node: nvidia-smi, the likelier; on an
    MI300A node the sampler then says unavailable and the job runs."""
    assert _job(profile="nibi", gpus="2").resolve().plan.gpu_sampler.tool == "nvidia-smi"


def test_slurmkit_import_still_finds_the_payload_of_a_script_with_the_amd_sampler():
    from slurmkit.port.porting import import_script

    def imported(monitor):
        return import_script(_job(profile="nibi", gpus="mi300a:4", monitor={"gpu": monitor}).render(), name="s", profile="nibi").spec

    on, off = imported(True), imported(False)
    assert (on["kind"], on["resources"], on["launch"]) == (off["kind"], off["resources"], off["launch"])
    assert "python train.py" in str(on["launch"])


def test_the_environment_scripts_of_a_gpu_job_start_no_sampler():
    """slurmkit env build (login node) and submit_function's setup lines (submitit's own script,
    without slurmkit's exit trap to stop it) leave the sampler out."""
    from slurmkit.render.render import render_env_build, render_setup

    plan = _job().resolve().plan
    assert plan.gpu_sampler is not None
    assert "\nslurmkit_sample_gpus " not in render_setup(plan) + render_env_build(plan)
