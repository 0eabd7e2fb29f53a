"""The local SLURM cluster behaves like an Alliance cluster where slurmkit relies on it."""

import re
import subprocess

from .slurm import run_job, sbatch

ACCOUNT = ("--account", "def-test")


def test_completed_job_is_recorded_with_exit_code_zero(cluster, tmp_path):
    row, out, _ = run_job(tmp_path, "echo hello from $(hostname)\n", *ACCOUNT)
    assert row["State"] == "COMPLETED"
    assert row["ExitCode"] == "0:0"
    assert re.search(r"hello from node\d", out)


def test_failing_job_is_recorded_as_failed_with_its_exit_code(cluster, tmp_path):
    row, _, _ = run_job(tmp_path, "exit 3\n", *ACCOUNT)
    assert row["State"] == "FAILED"
    assert row["ExitCode"] == "3:0"


def test_unknown_account_is_rejected_by_the_scheduler(cluster, tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\ntrue\n")
    submission = sbatch(script, "--account", "def-nobody")
    assert submission.returncode != 0
    assert "Invalid account" in submission.stderr


def test_missing_account_is_rejected_with_a_clear_message(cluster, tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\ntrue\n")
    submission = sbatch(script)
    assert submission.returncode != 0
    assert "You must specify an account with --account" in submission.stderr


def test_slurm_tmpdir_is_node_local_on_both_nodes_and_removed_after(cluster, tmp_path):
    body = (
        'echo "batch=$SLURM_TMPDIR"\n'
        "srun --ntasks-per-node=1 bash -c "
        "'test -d \"$SLURM_TMPDIR\" && touch \"$SLURM_TMPDIR/from-$(hostname)\" && "
        'echo "$(hostname) sees $(ls "$SLURM_TMPDIR" | tr "\\n" " ")"\'\n'
    )
    row, out, job_id = run_job(tmp_path, body, *ACCOUNT, "--nodes=2", "--ntasks-per-node=1")
    assert row["State"] == "COMPLETED", out
    lines = {line.split(" sees ")[0]: line.split(" sees ")[1].split() for line in out.splitlines() if " sees " in line}
    # Each node sees only the file it wrote itself: the folder is local to the node.
    assert lines == {"node1": ["from-node1"], "node2": ["from-node2"]}
    assert f"root.{job_id}.0" in out
    for node in ("node1", "node2"):
        assert not (cluster.node_scratch(node) / f"root.{job_id}.0").exists()


def test_modules_load_in_a_plain_bash_batch_script(cluster, tmp_path):
    body = "module load StdEnv/2023 python/3.11\nmodule -t list 2>&1\necho EBVERSIONPYTHON=$EBVERSIONPYTHON\npython --version\n"
    row, out, _ = run_job(tmp_path, body, *ACCOUNT)
    assert row["State"] == "COMPLETED", out
    for module in ("StdEnv/2023", "python/3.11", "gcc/12.3", "openmpi/4.1.5"):
        assert module in out
    assert "EBVERSIONPYTHON=3.11" in out
    assert "Python 3.11" in out


def test_unknown_module_fails_the_job(cluster, tmp_path):
    row, out, _ = run_job(tmp_path, "set -e\nmodule load StdEnv/2023 nosuchthing/1.0\necho not reached\n", *ACCOUNT)
    assert row["State"] == "FAILED"
    assert "nosuchthing/1.0" in out and "not reached" not in out


def test_mpirun_launches_bound_ranks_on_both_nodes(cluster, tmp_path):
    body = "module load StdEnv/2023\nmpirun -np 4 --bind-to core --map-by slot:PE=1 --report-bindings hostname 2>&1\n"
    row, out, _ = run_job(tmp_path, body, *ACCOUNT, "--nodes=2", "--ntasks-per-node=2")
    assert row["State"] == "COMPLETED", out
    bindings = re.findall(r"\[(node\d):\d+\] MCW rank (\d) bound to", out)
    assert sorted(rank for _, rank in bindings) == ["0", "1", "2", "3"]
    assert {node for node, _ in bindings} == {"node1", "node2"}
    assert sorted(line for line in out.splitlines() if re.fullmatch(r"node\d", line)) == ["node1", "node1", "node2", "node2"]


MPI_HELLO = r"""
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank, size, sum, one = 1;
    char host[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    gethostname(host, sizeof host);
    printf("rank %d of %d on %s sum %d\n", rank, size, host, sum);
    MPI_Finalize();
    return 0;
}
"""


def test_srun_with_pmix_runs_an_mpi_program_across_both_nodes(cluster, tmp_path):
    (tmp_path / "hello.c").write_text(MPI_HELLO)
    subprocess.run(["mpicc", "-o", str(tmp_path / "hello"), str(tmp_path / "hello.c")], check=True)
    row, out, _ = run_job(tmp_path, f"srun --mpi=pmix {tmp_path / 'hello'}\n", *ACCOUNT, "--nodes=2", "--ntasks-per-node=2")
    assert row["State"] == "COMPLETED", out
    ranks = re.findall(r"rank (\d) of 4 on (node\d) sum 4", out)
    assert sorted(rank for rank, _ in ranks) == ["0", "1", "2", "3"]
    assert {node for _, node in ranks} == {"node1", "node2"}


def test_gpu_job_sees_cuda_visible_devices(cluster, tmp_path):
    body = 'echo "CVD=$CUDA_VISIBLE_DEVICES"\n'
    row, out, _ = run_job(tmp_path, body, *ACCOUNT, "--gres=gpu:p100:2")
    assert row["State"] == "COMPLETED"
    assert "CVD=0,1" in out
    row, out, _ = run_job(tmp_path, body, *ACCOUNT, "--gpus-per-node=p100:1")
    assert row["State"] == "COMPLETED"
    assert re.search(r"CVD=[01]\n", out)


def test_gpu_request_beyond_the_nodes_is_rejected(cluster, tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\ntrue\n")
    submission = sbatch(script, *ACCOUNT, "--gres=gpu:p100:3")
    assert submission.returncode != 0
    assert "Requested node configuration is not available" in submission.stderr


def test_nodes_have_no_cuda_until_the_module_is_loaded(cluster, tmp_path):
    """Like an Alliance CPU node (cpu_node.sh): no /usr/local/cuda and no nvcc on PATH, even
    where the machine running the cluster has a partial CUDA; `module load cuda` brings the
    module's CUDA_HOME. Proven where the nodes run in their own namespaces."""
    body = ('test ! -e /usr/local/cuda && echo "no /usr/local/cuda"\n'
            'command -v nvcc || echo "no nvcc"\n'
            'ls /usr/local/bin >/dev/null && echo "usr-local readable"\n'
            'module load StdEnv/2023 cuda/12.2 && echo "module CUDA_HOME=$CUDA_HOME"\n')
    row, out, _ = run_job(tmp_path, body, *ACCOUNT)
    assert row["State"] == "COMPLETED", out
    assert "no /usr/local/cuda" in out and "no nvcc" in out and "usr-local readable" in out, out
    assert re.search(r"module CUDA_HOME=\S+/cuda/12\.2", out), out
