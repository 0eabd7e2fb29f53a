"""Counts in the script body come from SLURM's variables, not from literals that repeat the
#SBATCH header, so that a hand edit of one directive keeps the script consistent.
The header keeps the values slurmkit computed.

The variables and their defaults were checked in the batch step of Debian's Slurm 22.05 (the
local cluster): SLURM_CPUS_PER_TASK and SLURM_NTASKS_PER_NODE are set only when their directive
is given, SLURM_NTASKS only with --ntasks or --ntasks-per-node, SLURM_NNODES always. The same
names are documented for the Alliance's Slurm 23.x/24.x (sbatch's OUTPUT ENVIRONMENT VARIABLES).
tests/integration/test_hand_edit_on_cluster.py runs edited scripts on the cluster.
"""

import re
import subprocess
from pathlib import Path

import pytest

from slurmkit.core.launchers import from_slurm
from slurmkit.core.plan import FromSlurm

from .test_resolve import directives, job

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
SCRIPTS = sorted(GOLDEN.glob("*/*.sbatch"))

#: A count the header holds, written as a number in the body: each is what class 7 forbids.
LITERAL_COUNTS = {
    "thread variable": re.compile(r"^export (OMP_NUM_THREADS|MKL_NUM_THREADS|TF_NUM_INTRAOP_THREADS|MV2_THREADS_PER_PROCESS)=\d"),
    # (the GPU sampler's srun --overlap step takes one core by design: no count of the job's)
    "srun --cpus-per-task": re.compile(r"\bsrun\b(?!.*--overlap).*--cpus-per-task=\d"),
    "srun --nodes/--ntasks": re.compile(r"\bsrun\b.*--(nodes|ntasks)=\d"),
    "mpirun -np": re.compile(r"\bmpirun\b.*\s-np \d"),
    "mpirun PE / -ppn": re.compile(r"\bmpirun\b.*(PE=\d|-ppn \d)"),
    "torchrun --nproc-per-node": re.compile(r"--nproc-per-node=\d"),
    "LOCAL_WORLD_SIZE": re.compile(r"LOCAL_WORLD_SIZE=\d"),
    "tasks per node in a loop": re.compile(r"_sk_i < \d"),
}


def _body(text: str):
    return [line for line in text.splitlines() if not line.lstrip().startswith("#")]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_count_the_header_holds_is_repeated_as_a_literal_in_the_body(script):
    text = script.read_text()
    # GNU Parallel on one node shares the header's --cpus-per-task out to its tasks: each task's
    # threads are its own cores (the spec's cpus_per_task), a count the header does not hold
    shared = re.search(r'parallel --jobs "\$(SLURM_CPUS_PER_TASK|\(\(SLURM_CPUS_PER_TASK / \d+\)\))"', text)
    counts = {what: p for what, p in LITERAL_COUNTS.items() if not (shared and what == "thread variable")}
    found = [(what, line) for line in _body(text) for what, pattern in counts.items() if pattern.search(line)]
    assert not found, f"{script}: {found}"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_srun_payload_passes_cpus_per_task_from_slurm(script):
    """Slurm 22.05+ srun does not inherit the job's --cpus-per-task: each payload srun says it.
    Kind accelerate's one task per node holds all the node's processes: the node's share, read back."""
    per_node = ' --cpus-per-task="$((${SLURM_CPUS_PER_TASK:-1} * ${SLURM_NTASKS_PER_NODE:-1}))" '
    for line in _body(script.read_text()):
        if line.startswith("srun ") and line.endswith(" &"):
            wanted = per_node if script.stem == "accelerate" else ' --cpus-per-task="${SLURM_CPUS_PER_TASK:-1}" '
            assert wanted in line, line


def test_the_header_keeps_the_computed_counts_and_the_body_reads_them_back():
    resolution = job("narval", kind="threaded", resources={"cpus_per_task": 8})
    assert directives(resolution)["--cpus-per-task"] == "8"
    assert dict(resolution.plan.environment)["OMP_NUM_THREADS"] == FromSlurm('"${SLURM_CPUS_PER_TASK:-1}"')


def test_from_slurm_quotes_the_literal_part_and_leaves_a_word_without_counts_alone():
    assert from_slurm("--cpus-per-task") == "--cpus-per-task"
    assert str(from_slurm("slot:PE={cpus_per_task}")) == 'slot:PE="${SLURM_CPUS_PER_TASK:-1}"'
    assert str(from_slurm("{ntasks}")) == '"${SLURM_NTASKS:-$SLURM_NNODES}"'
    # a site's flag with shell characters stays literal around the count
    assert str(from_slurm("a b$(x)={tasks_per_node}")) == "'a b$(x)='\"${SLURM_NTASKS_PER_NODE:-1}\""


def _exports(script_text: str) -> str:
    return "\n".join(line for line in script_text.splitlines() if line.startswith("export ") and not line.startswith("export -f"))


def _threads_under(environment: dict, script_text: str) -> str:
    """OMP_NUM_THREADS after the script's export lines, run under `set -u` with ``environment``."""
    program = "set -euo pipefail\n" + _exports(script_text) + '\necho "$OMP_NUM_THREADS"\n'
    return subprocess.run(["bash", "-c", program], env={"PATH": "/usr/bin:/bin", **environment},
                          capture_output=True, text=True, check=True).stdout.strip()


def test_the_thread_count_follows_slurm_and_survives_set_u_when_the_directive_is_gone():
    text = (GOLDEN / "narval" / "threaded.sbatch").read_text()
    assert "#SBATCH --cpus-per-task=8" in text
    assert _threads_under({"SLURM_CPUS_PER_TASK": "3"}, text) == "3"   # a hand edit to 3
    assert _threads_under({}, text) == "1"                              # the line deleted: SLURM's default
