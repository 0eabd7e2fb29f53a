"""TensorFlow on GPUs loads cuda and points XLA at it, on the real local
cluster (Slurm 22.05): its Lmod stand-in's cuda/12.2 module sets CUDA_HOME as the Alliance's
does, so each worker must start with XLA_FLAGS naming that folder, which exists on the node."""

import re

from slurmkit.api.job import Job

from .slurm import sbatch, wait_for_job

REPORT = ["bash", "-c", 'echo "xla procid=$${SLURM_PROCID} flags=$${XLA_FLAGS} home=$${CUDA_HOME}"; test -d "$${CUDA_HOME}"']


def test_each_tensorflow_worker_starts_with_xla_pointed_at_the_loaded_cuda(cluster, tmp_path):
    script = tmp_path / "tf.sbatch"
    script.write_text(Job(name="tf", kind="tf-multiworker", profile="local", account="def-test",
                          resources={"time": "10m", "nodes": 2, "gpus": "p100:2", "mem": "500M"},
                          launch={"command": REPORT}).render())
    submission = sbatch(script)
    assert submission.returncode == 0, submission.stderr
    row = wait_for_job(submission.job_id, timeout=300)
    out = (tmp_path / f"tf-{submission.job_id}.out").read_text()
    assert row["State"] == "COMPLETED", out
    workers = re.findall(r"xla procid=(\d) flags=(\S*) home=(\S*)", out)
    assert sorted(p for p, _, _ in workers) == ["0", "1", "2", "3"], out
    for _, flags, home in workers:
        assert home.endswith("/cuda/12.2") and flags == f"--xla_gpu_cuda_data_dir={home}", out
