"""The memory slurmkit now asks where a spec says none (sizing.py), as the real local cluster
(Debian's Slurm 22.05, CR_Core_Memory, DefMemPerCPU=256, RealMemory=4000 per node) grants it.

A whole-node job renders ``--mem=0``: sbatch takes it and gives the job all of each node's
memory, where it had 256M per core before. A GPU job renders its bundle (the node's memory over
its GPUs). What SLURM allocated is read from sacct's AllocTRES, whose ``mem=`` is the job's
total over its nodes in Slurm 22.05 as in the 23.x/24.x the Alliance runs.
"""

import re
import subprocess

from slurmkit.api.job import Job

from .slurm import sbatch, wait_for_job

NODE_MEMORY_MIB = 4000   # RealMemory of each local node (tests/cluster/cluster.sh)


def _allocated(tmp_path, **fields) -> dict:
    """Render ``fields`` on the local profile, submit, wait; the #SBATCH lines and AllocTRES."""
    script = tmp_path / "job.sbatch"
    script.write_text(Job(profile="local", account="def-test", launch={"command": ["true"]}, **fields).render())
    directives = dict(re.findall(r"^#SBATCH (--[a-z-]+)=(\S*)$", script.read_text(), re.M))
    submission = sbatch(script)
    assert submission.returncode == 0, submission.stderr
    row = wait_for_job(submission.job_id)
    assert row["State"] == "COMPLETED", row
    tres = subprocess.run(["sacct", "-n", "-P", "-X", "-o", "AllocTRES", "-j", submission.job_id],
                          capture_output=True, text=True, timeout=60, check=True).stdout.strip()
    return {"directives": directives, "tres": dict(part.split("=", 1) for part in tres.split(",") if "=" in part)}


def test_a_whole_node_job_gets_all_of_each_nodes_memory_with_mem_0(cluster, tmp_path):
    job = _allocated(tmp_path, name="wholenode", kind="mpi", resources={"time": "5m", "nodes": 2, "tasks_per_node": 2})
    assert job["directives"]["--mem"] == "0"
    assert job["tres"]["mem"] == f"{2 * NODE_MEMORY_MIB}M"      # not 4 cores x 256M


def test_a_gpu_job_that_says_no_memory_gets_its_gpus_share_of_the_node(cluster, tmp_path):
    job = _allocated(tmp_path, name="gpubundle", kind="gpu", resources={"time": "5m", "gpus": "p100:1"})
    assert (job["directives"]["--cpus-per-task"], job["directives"]["--mem"]) == ("1", "2000M")
    assert (job["tres"]["cpu"], job["tres"]["mem"], job["tres"]["gres/gpu"]) == ("1", f"{NODE_MEMORY_MIB // 2}M", "1")
