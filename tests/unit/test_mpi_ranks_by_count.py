"""MPI ranks by count (Advanced_MPI_scheduling: "the simplest way ... is with --ntasks", memory
with --mem-per-cpu): a one-node MPI job on a site that shares nodes is asked as --ntasks, so
SLURM may place its ranks on one node or several, and its inputs are staged on every node."""

import re

from slurmkit import Job
from slurmkit.render.render import comment

PAGE = "https://docs.alliancecan.ca/wiki/Advanced_MPI_scheduling/en"


def script(profile="fir", resources=None, **fields):
    fields.setdefault("launch", "./simulate --tables $SLURM_TMPDIR/tables")
    fields.setdefault("stage", {"inputs": [{"from": "tables.sqfs", "to": "tables"}]})
    res = {"time": "3h", "tasks_per_node": 8, "mem_per_cpu": "2G", **(resources or {})}
    return Job(name="m", profile=profile, account="def-x", kind="mpi", resources=res, **fields).render(warn=False)


def directives(text):
    return re.findall(r"^#SBATCH (--[a-z-]+)", text, flags=re.M)


def test_one_nodes_worth_of_ranks_is_asked_by_count_with_memory_per_rank():
    text = script()
    assert "#SBATCH --ntasks=8\n#SBATCH --cpus-per-task=1\n#SBATCH --mem-per-cpu=2G\n" in text
    assert "--nodes" not in directives(text) and "--ntasks-per-node" not in directives(text)
    note = comment(f"Ranks by count, memory per rank: SLURM places them on one node or several, and each stages the inputs below ({PAGE}).")
    assert note + "\n#SBATCH --ntasks=8\n" in text


def test_its_inputs_are_staged_on_every_node_and_an_image_is_extracted_there():
    text = script(stage={"inputs": ["mesh.tar", {"from": "tables.sqfs", "to": "tables"}]})
    assert 'slurmkit_on_each_node slurmkit_stage_in extract "${SLURM_SUBMIT_DIR}/mesh.tar" "${SLURM_TMPDIR}"' in text
    # a mount made in a step ends with it: each node extracts (SOURCE TARGET: the runtime does the rest)
    assert 'slurmkit_on_each_node slurmkit_stage_in extract-image "${SLURM_SUBMIT_DIR}/tables.sqfs" "${SLURM_TMPDIR}/tables"\n' in text


def test_memory_per_node_keeps_one_node_and_says_why():
    text = script(resources={"mem_per_cpu": None, "mem": "16G"})
    assert "#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=8\n" in text
    assert "One node, as --mem is memory per node; for ranks that SLURM may place on several nodes, ask mem_per_cpu instead" in \
        " ".join(line[2:] for line in text.splitlines() if line.startswith("# "))
    assert "slurmkit_stage_in mount-image" in text and "slurmkit_on_each_node" not in text


def test_own_lines_that_use_the_nodes_disk_keep_one_node_and_say_why():
    """A setup line's ``cp in.dat $SLURM_TMPDIR`` puts the file on the first node only; ranks on
    another would not find it, so the ranks stay on one node."""
    for fields in ({"environment": {"setup": ["cp $HOME/in.dat $SLURM_TMPDIR/", "cd $SLURM_TMPDIR"]}},
                   {"launch": {"shell": "cd ${TMPDIR}\nsrun ./simulate in.dat"}}):
        text = script(**fields)
        assert "#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=8\n" in text
        assert "#SBATCH --ntasks=8" not in text
        assert "One node: the job's own lines use $SLURM_TMPDIR, each node's own disk" in \
            " ".join(line[2:] for line in text.splitlines() if line.startswith("# "))
    assert "#SBATCH --ntasks=8\n" in script(environment={"setup": ["mkdir -p $HOME/out"]})


def test_several_nodes_whole_node_sites_and_direct_launches_keep_their_shape():
    for text in (script(resources={"nodes": 2}), script(profile="trillium", resources={"mem_per_cpu": None, "tasks_per_node": 192})):
        assert "#SBATCH --ntasks=" not in text and "#SBATCH --ntasks-per-node=" in text
    direct = Job(name="m", profile="fir", account="def-x", kind="mpi", resources={"time": "1h", "tasks_per_node": 4},
                 launch={"command": "charmrun ./namd2", "launcher": "direct"}).render(warn=False)
    assert "#SBATCH --ntasks-per-node=4" in direct


def test_a_mounted_image_registers_its_own_unmount():
    text = Job(name="s", profile="fir", account="def-x", resources={"time": "1h"}, launch="ls $SLURM_TMPDIR/tables",
               stage={"inputs": [{"from": "tables.sqfs", "to": "tables"}]}).render(warn=False)
    assert 'slurmkit_stage_in mount-image "${SLURM_SUBMIT_DIR}/tables.sqfs" "${SLURM_TMPDIR}/tables"\n' in text
    assert "slurmkit_unmount_on_exit" not in text and ".slurmkit/image-" not in text
