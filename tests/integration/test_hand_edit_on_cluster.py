"""A rendered script whose #SBATCH line is edited by hand stays consistent: the body reads its
counts from SLURM's variables at run time, so the job sees the edited count.

Proved on Debian's Slurm 22.05 (the local cluster), where srun no longer inherits
--cpus-per-task and SLURM_CPUS_PER_TASK / SLURM_NTASKS_PER_NODE are set only when their
directive is given; the variables read are the same on the Alliance's Slurm 23.x/24.x.
Each script is rendered by slurmkit, edited with sed as a user would, and submitted with sbatch.
"""

import re
import subprocess

from slurmkit.api.job import Job

from .slurm import sbatch, wait_for_job


def _render(tmp_path, **fields):
    fields.setdefault("profile", "local")
    fields.setdefault("account", "def-test")
    script = tmp_path / "job.sbatch"
    script.write_text(Job(**fields).render())
    return script


def _edit(script, pattern: str, replacement: str) -> None:
    """What a user does: sed on one #SBATCH line of the rendered text."""
    before = script.read_text()
    subprocess.run(["sed", "-i", f"s/^#SBATCH {pattern}$/#SBATCH {replacement}/", str(script)], check=True)
    assert script.read_text() != before, f"no #SBATCH {pattern} line to edit"


def _run(script, name: str) -> str:
    submission = sbatch(script)
    assert submission.returncode == 0, submission.stderr
    row = wait_for_job(submission.job_id)
    out = (script.parent / f"{name}-{submission.job_id}.out").read_text()
    assert row["State"] == "COMPLETED", out
    return out


def test_a_hand_edited_cpus_per_task_changes_the_threads_of_a_threaded_job(cluster, tmp_path):
    script = _render(tmp_path, name="threads", kind="threaded", resources={"time": "5m", "cpus_per_task": 1},
                     launch={"command": ["bash", "-c", "echo threads=$$OMP_NUM_THREADS mkl=$$MKL_NUM_THREADS"]})
    _edit(script, "--cpus-per-task=1", "--cpus-per-task=2")
    assert "threads=2 mkl=2" in _run(script, "threads")


def test_a_threaded_job_whose_cpus_per_task_line_is_deleted_runs_one_thread_under_set_u(cluster, tmp_path):
    script = _render(tmp_path, name="nocpus", kind="threaded", resources={"time": "5m", "cpus_per_task": 2},
                     launch={"command": ["bash", "-c", "echo threads=$$OMP_NUM_THREADS"]})
    subprocess.run(["sed", "-i", "/^#SBATCH --cpus-per-task=/d", str(script)], check=True)
    assert "threads=1" in _run(script, "nocpus")


def test_a_hand_edited_ntasks_per_node_changes_the_ranks_mpirun_starts(cluster, tmp_path):
    script = _render(tmp_path, name="ranks", kind="mpi", resources={"time": "5m", "nodes": 2, "tasks_per_node": 1},
                     environment={"modules": ["openmpi/4.1.5"]},
                     launch={"launcher": "mpirun",
                             "command": ["bash", "-c", "echo rank=$${OMPI_COMM_WORLD_RANK} of $${OMPI_COMM_WORLD_SIZE} on $$(hostname)"]})
    _edit(script, "--ntasks-per-node=1", "--ntasks-per-node=2")
    ranks = re.findall(r"rank=(\d) of (\d) on (node\d)", _run(script, "ranks"))
    assert sorted(rank for rank, _, _ in ranks) == ["0", "1", "2", "3"]
    assert {size for _, size, _ in ranks} == {"4"}
    assert sorted(node for _, _, node in ranks) == ["node1", "node1", "node2", "node2"]


def test_a_hand_edited_ntasks_per_node_changes_local_world_size_of_a_ddp_job(cluster, tmp_path):
    script = _render(tmp_path, name="ddp", kind="ddp", resources={"time": "5m", "nodes": 2, "tasks_per_node": 1},
                     launch={"command": ["bash", "-c",
                                         "echo rank=$${RANK} local=$${LOCAL_RANK} of $${LOCAL_WORLD_SIZE} world=$${WORLD_SIZE}"]})
    _edit(script, "--ntasks-per-node=1", "--ntasks-per-node=2")
    ranks = re.findall(r"rank=(\d) local=(\d) of (\d) world=(\d)", _run(script, "ddp"))
    assert sorted(rank for rank, _, _, _ in ranks) == ["0", "1", "2", "3"]
    assert {(size, world) for _, _, size, world in ranks} == {("2", "4")}


def test_raising_an_mpi_jobs_ntasks_spreads_its_ranks_over_nodes_each_with_the_inputs(cluster, tmp_path):
    """Ranks by count (Advanced_MPI_scheduling): a user who raises --ntasks past one node's cores
    (2 here) gets ranks on both nodes, and each reads the inputs staged on its own node."""
    from slurmkit.resolve.staging import pack

    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "t0").write_text("tab\n")
    pack(tmp_path / "tables", tmp_path / "tables.sqfs", compression="none")
    (tmp_path / "mesh").mkdir()
    (tmp_path / "mesh" / "m0").write_text("mesh\n")
    script = _render(tmp_path, name="spread", kind="mpi", resources={"time": "5m", "tasks_per_node": 2, "mem_per_cpu": "100M"},
                     stage={"inputs": [{"from": "mesh", "to": "mesh"}, {"from": "tables.sqfs", "to": "tables"}]},
                     launch={"command": ["bash", "-c", "echo rank=$$SLURM_PROCID on $$(hostname) "
                                                       "$$(cat $$SLURM_TMPDIR/mesh/m0 $$SLURM_TMPDIR/tables/t0)"]})
    assert "#SBATCH --ntasks=2\n" in script.read_text()
    _edit(script, "--ntasks=2", "--ntasks=4")
    ranks = re.findall(r"rank=(\d) on (node\d) mesh tab", _run(script, "spread"))
    assert sorted(r for r, _ in ranks) == ["0", "1", "2", "3"]
    assert {n for _, n in ranks} == {"node1", "node2"}
