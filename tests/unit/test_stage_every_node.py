"""Staging for jobs on several nodes, whatever their kind: inputs and a job-local virtualenv on
every node's $SLURM_TMPDIR, one srun task per node with the node's cores, counts read from
SLURM at run time; and the outputs' folders made before the payload.

The per-node steps themselves run on the local cluster (tests/integration/test_staging_on_cluster.py)."""

import shutil
import subprocess

import pytest

from slurmkit import Job

NODE_CORES = '"$((${SLURM_CPUS_PER_TASK:-1} * ${SLURM_NTASKS_PER_NODE:-1}))"'
PER_NODE = 'slurmkit_on_each_node'   # (srun, one task on each node, with the node's cores: tests/runtime)


def script(profile="fir", kind="serial", resources=None, **fields):
    fields.setdefault("launch", "python t.py --data $SLURM_TMPDIR/data")
    return Job(name="s", profile=profile, account="def-x", kind=kind, resources={"time": "3h", **(resources or {})},
               **fields).render(warn=False)


DISTRIBUTED = [
    ("mpi", {"nodes": 2, "tasks_per_node": 4}, {}),
    ("ddp", {"nodes": 2, "gpus": "h100:4"}, {}),
    ("tf-multiworker", {"nodes": 2, "gpus": "h100:4"}, {}),
    ("horovod", {"nodes": 2, "gpus": "h100:4"}, {}),
    ("threaded", {"nodes": 2, "cpus_per_task": 8}, {}),
]


@pytest.mark.parametrize("kind, resources, extra", DISTRIBUTED)
def test_every_multi_node_kind_stages_its_inputs_once_on_each_node_with_the_nodes_cores(kind, resources, extra):
    text = script(kind=kind, resources=resources, stage={"inputs": [{"from": "data.tar", "to": "data"}]}, **extra)
    assert f"{PER_NODE} slurmkit_stage_in extract " in text


@pytest.mark.parametrize("kind, resources, extra", DISTRIBUTED[:4])
def test_a_job_local_venv_is_made_on_each_node_with_the_nodes_cores(kind, resources, extra):
    text = script(kind=kind, resources=resources, environment={"venv": {"packages": ["numpy"]}}, **extra)
    # (slurmkit_venv_on_each_node: slurmkit_on_each_node with the node's cores, tests/runtime)
    assert '\nslurmkit_venv_on_each_node "${SLURM_TMPDIR}/env" --no-index numpy\n' in text


def test_a_lasting_venv_under_slurm_tmpdir_is_per_node_too():
    text = script(kind="mpi", resources={"nodes": 2}, environment={"venv": {"path": "$SLURM_TMPDIR/myenv"}})
    assert f"{PER_NODE} _sk_make_venv\n" in text
    lasting = script(kind="mpi", resources={"nodes": 2}, environment={"venv": {"path": "/project/def-x/envs/torch"}})
    assert "_sk_make_venv" not in lasting


def test_one_node_stages_in_the_batch_step():
    text = script(stage={"inputs": [{"from": "data.tar", "to": "data"}]})
    assert "\nslurmkit_stage_in extract " in text and "slurmkit_on_each_node" not in text


def test_extraction_parallelism_is_read_from_slurm_at_run_time_on_a_ram_disk():
    text = script(profile="trillium", kind="threaded", stage={"inputs": ["d.pack", {"from": "i.sqfs", "to": "images"}]})
    assert f'slurmkit_stage_in extract-shards "${{SLURM_SUBMIT_DIR}}/d.pack" "${{SLURM_TMPDIR}}" {NODE_CORES}\n' in text
    # an image takes SOURCE TARGET: the runtime counts the cores of the step it runs in
    assert 'slurmkit_stage_in mount-image "${SLURM_SUBMIT_DIR}/i.sqfs" "${SLURM_TMPDIR}/images"\n' in text
    on_disk = script(profile="nibi", kind="threaded", resources={"cpus_per_task": 8}, stage={"inputs": ["d.pack"]})
    # one extractor at a time on a disk (bench/staging.py)
    assert 'slurmkit_stage_in extract-shards "${SLURM_SUBMIT_DIR}/d.pack" "${SLURM_TMPDIR}" 1\n' in on_disk


@pytest.mark.parametrize("env, cores", [({"SLURM_CPUS_PER_TASK": "12", "SLURM_NTASKS_PER_NODE": "4"}, "48"),
                                        ({"SLURM_CPUS_PER_TASK": "6"}, "6"), ({}, "1")])
def test_the_node_cores_word_gives_the_cores_under_set_u(env, cores):
    """In the batch step, cpus per task x tasks per node; inside the per-node step (srun
    --ntasks-per-node=1 --cpus-per-task=N sets them to N and 1, Slurm 22.05), N; without the
    directives, 1."""
    out = subprocess.run([shutil.which("bash"), "-c", f"set -u; echo {NODE_CORES}"], env=env, capture_output=True, text=True)
    assert (out.returncode, out.stdout.strip()) == (0, cores)


def test_output_folders_are_made_before_the_payload():
    # (each output its own destination: two on one `to` would overwrite each other, which a spec refuses)
    text = script(stage={"outputs": [{"from": "runs", "to": "results/runs"}, {"from": "metrics.csv", "to": "results/metrics.csv"},
                                     {"from": "logs/train.log", "to": "results/train.log"}]})
    made = '\nmkdir -p -- "${SLURM_TMPDIR}/runs" "${SLURM_TMPDIR}/logs"  # the outputs\' folders, for the program to write into\n'
    assert made in text
    assert text.index(made) < text.index("slurmkit_run ")
    # $SLURM_TMPDIR is there
    assert "folders, for the program" not in script(stage={"outputs": [{"from": "metrics.csv", "to": "results"}]})


def test_the_disk_staged_onto_is_the_one_the_jobs_nodes_have():
    """Rorqual's GPU nodes have 3.84T NVMe where its default CPU nodes have a 480G SATA SSD (its
    profile's node table); a job that may land on either kind is told the site's default."""
    staged = {"stage": {"inputs": [{"from": "data.tar", "to": "data"}]}}
    assert "the node's local NVMe disk" in script("rorqual", kind="gpu", resources={"gpus": "h100:1"}, **staged)
    assert "the node's local SSD" in script("rorqual", **staged)
    assert "the node's RAM disk" in script("trillium", kind="gpu", resources={"gpus": "h100:1"}, **staged)
