"""A threaded job whose lines run several programs at once: OpenMP pinning (OMP_PLACES,
OMP_PROC_BIND) would put every program's threads on the same cores, so the script leaves it
unset and says why; a threaded job that runs one program keeps it."""

import pytest

from slurmkit import Job
from slurmkit.core.shellwords import concurrent_starts
from slurmkit.port.porting import import_script

HEADER = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\n#SBATCH --cpus-per-task=8\n#SBATCH --mem=16G\n"


def _rendered(body: str) -> str:
    imported = import_script(HEADER + body, name="sweep", profile="fir")
    assert imported.spec["kind"] == "threaded"
    return Job(**imported.spec).render(warn=False)


@pytest.mark.parametrize("body", [
    "for n in 1 2 3 4; do\n  ./model -n $n > run$n.log &\ndone\nwait\n",
    "./model -n 1 > a.log &\n./model -n 2 > b.log &\nwait\n",
    "ls cases/*.in | xargs -P 4 -n 1 ./model\n",
    "find cases -name '*.in' | xargs --max-procs=4 -I{} ./model {}\n",
    "for d in a b; do ./prep $d; done | parallel ./model\n",
    "parallel -j 4 \"./model {} > {}.log\" :::: cases.txt\n./summary\n",   # in the setup, before the launch
])
def test_several_programs_at_once_leave_threads_unpinned_and_say_so(body):
    script = _rendered(body)
    assert "OMP_PLACES=" not in script.replace("OMP_PLACES and", "") and "export OMP_PROC_BIND" not in script
    assert "# The job runs several programs at once (" in script
    assert "each program would pin its threads to the same cores" in script
    assert 'export OMP_NUM_THREADS="${SLURM_CPUS_PER_TASK:-1}"' in script


@pytest.mark.parametrize("body", [
    "./model -n 1 > run.log 2>&1\n",
    "ls cases/*.in | xargs -n 1 ./model\n",
    "./model -n 1 |& tee run.log\n",
    "./prepare && ./model -n 1\n",
])
def test_one_program_at_a_time_keeps_its_threads_pinned(body):
    script = _rendered(body)
    assert "export OMP_PLACES=cores\nexport OMP_PROC_BIND=close\n" in script
    assert "several programs at once" not in script


@pytest.mark.parametrize("text, how", [
    ("for f in *; do ./a $f & done; wait", "a command run in the background with &"),
    ("xargs -P4 ./a < list", "xargs -P"),
    ("xargs -P 0 ./a < list", "xargs -P"),
    ("xargs -P 1 ./a < list", ""),
    ("parallel -j 1 ./a ::: x y", ""),
    ("parallel --jobs $N ./a ::: x y", "GNU Parallel"),
    ("echo 'a & b' && ./a > log 2>&1", ""),
    ("./a &> log", ""),
])
def test_what_counts_as_several_programs_at_once(text, how):
    assert concurrent_starts(text) == how


@pytest.mark.parametrize("command, pinned", [(["echo", "a & b"], True), (["xargs", "-P", "4", "./model"], False)])
def test_a_launch_commands_words_are_read_as_words(command, pinned):
    """An & inside one word of launch.command is text, not a background job."""
    job = Job(name="t", profile="fir", account="def-x", kind="threaded", resources={"cpus_per_task": 4, "time": "1h"},
              launch={"command": command})
    assert ("export OMP_PROC_BIND=close" in job.render(warn=False)) is pinned
