"""Every job kind, rendered by slurmkit for the `local` profile, runs on the real cluster.

These submit the rendered scripts with plain sbatch (slurmkit's own submission is a later
stage) and check what the jobs printed: bindings, module environment, the virtualenv.
"""

import re
import time
import zipfile

from slurmkit.api.job import Job

from .slurm import sacct_rows, sbatch, wait_for_job


def _submit(tmp_path, **fields):
    fields.setdefault("profile", "local")
    fields.setdefault("account", "def-test")
    script = tmp_path / "job.sbatch"
    script.write_text(Job(**fields).render())
    submission = sbatch(script)
    assert submission.returncode == 0, submission.stderr
    return submission.job_id


def _run(tmp_path, **fields):
    job_id = _submit(tmp_path, **fields)
    row = wait_for_job(job_id)
    out = (tmp_path / f"{fields['name']}-{job_id}.out").read_text()
    assert row["State"] == "COMPLETED", out
    return out


def test_serial_job_runs_its_command_with_arguments_intact(cluster, tmp_path):
    out = _run(tmp_path, name="serial", resources={"time": "10m"},
               launch={"command": ["python3", "-c", "import sys; print(sys.argv[1:])", "a b", "$(echo no)", "$$HOME", "$SLURM_JOB_NAME"]})
    assert "['a b', '$(echo no)', '$HOME', 'serial']" in out


def test_threaded_job_gets_its_threads_and_cores(cluster, tmp_path):
    # a compiled program (printenv), whose threads slurmkit pins; an interpreter or a shell it leaves unpinned
    out = _run(tmp_path, name="threaded", kind="threaded", resources={"time": "10m", "cpus_per_task": 2},
               launch={"command": ["printenv", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "SLURM_CPUS_PER_TASK", "OMP_PLACES", "OMP_PROC_BIND"]})
    assert "2\n2\n2\ncores\nclose\n" in out


def test_mpi_job_with_mpirun_binds_ranks_on_both_nodes(cluster, tmp_path):
    out = _run(tmp_path, name="mpirun", kind="mpi", resources={"time": "10m", "nodes": 2, "tasks_per_node": 2},
               environment={"modules": ["openmpi/4.1.5"]}, launch={"command": "hostname", "launcher": "mpirun"})
    bindings = re.findall(r"\[(node\d):\d+\] MCW rank (\d) bound to (socket \d\[core \d\[hwt \d\]\])", out)
    assert sorted(rank for _, rank, _ in bindings) == ["0", "1", "2", "3"]
    assert {node for node, _, _ in bindings} == {"node1", "node2"}
    assert all("core" in where for _, _, where in bindings)


def test_mpi_job_with_srun_runs_one_rank_per_task_across_nodes(cluster, tmp_path):
    # $$ keeps the $ for the task shell: $SLURM_PROCID would expand once, in the batch script.
    out = _run(tmp_path, name="srun", kind="mpi", resources={"time": "10m", "nodes": 2, "tasks_per_node": 2},
               launch={"command": ["bash", "-c", "echo rank=$$SLURM_PROCID of $$SLURM_NTASKS on $$(hostname)"]})
    ranks = re.findall(r"rank=(\d) of 4 on (node\d)", out)
    assert sorted(r for r, _ in ranks) == ["0", "1", "2", "3"]
    assert {n for _, n in ranks} == {"node1", "node2"}


def test_gpu_job_sees_the_gpu_it_asked_for(cluster, tmp_path):
    out = _run(tmp_path, name="gpu", kind="gpu", resources={"time": "10m", "gpus": "p100:1"},
               launch={"command": ["bash", "-c", "echo visible=$CUDA_VISIBLE_DEVICES"]})
    assert re.search(r"^GPUs: [01] on node\d$", out, re.M)
    assert re.search(r"^visible=[01]$", out, re.M)


def test_modules_load_and_the_virtualenv_is_created_and_used(cluster, tmp_path):
    wheel = tmp_path / "skdemo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("skdemo.py", "VALUE = 42\n")
        archive.writestr("skdemo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: skdemo\nVersion: 1.0\n")
        archive.writestr("skdemo-1.0.dist-info/WHEEL",
                         "Wheel-Version: 1.0\nGenerator: slurmkit-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr("skdemo-1.0.dist-info/RECORD", "")
    (tmp_path / "requirements.txt").write_text(f"{wheel}\n")
    code = ("import os, sys, skdemo; print('value', skdemo.VALUE); print('prefix', sys.prefix); "
            "print('python', os.environ['EBVERSIONPYTHON'])")
    out = _run(tmp_path, name="venv", resources={"time": "10m"},
               environment={"modules": ["python/3.11"], "venv": {"requirements": str(tmp_path / "requirements.txt")}},
               launch={"command": ["python", "-c", code]})
    assert "value 42" in out
    prefix = re.search(r"^prefix (.*)$", out, re.M).group(1)
    assert re.search(r"/localscratch/root\.\d+\.0/env$", prefix), prefix
    assert "python 3.11" in out


def test_array_job_gives_each_task_its_point_of_the_grid(cluster, tmp_path):
    job_id = _submit(tmp_path, name="sweep", kind="array", resources={"time": "10m"},
                     array={"parameters": {"lr": ["0.1", "0.01"], "seed": [1, 2]}, "throttle": 2},
                     launch={"command": ["bash", "-c", "echo task=$SLURM_ARRAY_TASK_ID lr=$lr seed=$seed"]})
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        rows = [r for r in sacct_rows(job_id) if re.fullmatch(rf"{job_id}_\d+", r["JobID"])]
        if len(rows) == 4 and all(r["State"] in ("COMPLETED", "FAILED", "CANCELLED") for r in rows):
            break
        time.sleep(0.5)
    assert sorted(r["State"] for r in rows) == ["COMPLETED"] * 4
    outputs = {int(p.name.split("_")[-1].split(".")[0]): p.read_text().strip() for p in tmp_path.glob(f"sweep-{job_id}_*.out")}
    assert outputs == {0: "task=0 lr=0.1 seed=1", 1: "task=1 lr=0.1 seed=2", 2: "task=2 lr=0.01 seed=1", 3: "task=3 lr=0.01 seed=2"}
