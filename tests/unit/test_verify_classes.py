"""Classes of difference that verification (slurmkit/port/verify.py) must see, each shown beside
the faithful mapping, which verifies equal: GNU Parallel's tasks against kind many-tasks, programs
left running in the background when the script ends, the folder a job starts in, and a glob
that a rendered script quotes. Needs bash only: no cluster."""

from slurmkit.port import verify
from slurmkit.port.porting import Imported

HEADER = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\n"
PROFILE = "narval"


def spec(launch, kind="serial", resources=None, **sections):
    return {"name": "job", "account": "def-x", "kind": kind, "resources": {"time": "1h", **(resources or {})},
            "launch": launch, **sections}


def found(script, mapping, files=()):
    """(what, subject) of each difference verification found and nothing declared."""
    verification = verify.verify_import(HEADER + script, Imported(mapping, (), tuple(files)), PROFILE)
    assert not verification.not_run, verification.not_run
    return {(d.what, d.subject) for d in verification.findings}


def traced(script):
    return verify.trace(HEADER + script, verify.shape_of(HEADER + script))


# ---------------------------------------------------------------------------------- GNU Parallel

def many_tasks(lines=None):
    """A many-tasks spec, and the task file import writes beside it (None: the user's own)."""
    mapping = spec({"command": "python prog.py '{}'"}, "many-tasks", {"tasks_per_node": 4}, tasks={"arguments": "job.tasks"})
    return mapping, (("job.tasks", lines),) if lines is not None else ()


def test_gnu_parallel_and_kind_many_tasks_compare_by_the_programs_their_tasks_start():
    script = "#SBATCH --ntasks=4\nparallel --jobs 4 python prog.py {} ::: a b c\n"
    assert found(script, *many_tasks("a\nb\nc\n")) == set()
    # a task lost on the way into the task file
    assert ("start", "python") in found(script, *many_tasks("a\nc\n"))


def test_gnu_parallel_reading_a_task_file_compares_equal_with_many_tasks_over_the_same_file():
    script = "#SBATCH --ntasks=4\nparallel -j4 python prog.py {1} :::: job.tasks\n"
    assert found(script, *many_tasks()) == set()   # the user's file: the same in both runs


def test_tasks_are_traced_after_a_file_is_sourced_under_set_a():
    """set -a exports every variable assigned, the trace's own among them (the import's set-up
    lines run so): a task of GNU Parallel must still be traced, not run for real."""
    script = "#SBATCH --ntasks=4\nset -a\nsource settings.sh\nset +a\nparallel ./task.sh {} ::: a b\n"
    assert [s.argv for s in traced(script).starts] == [("./task.sh", "a"), ("./task.sh", "b")]
    mapping = spec({"command": "./task.sh '{}'"}, "many-tasks", {"tasks_per_node": 4}, tasks={"arguments": "job.tasks"},
                   environment={"setup": ["source settings.sh"]})
    assert found("#SBATCH --ntasks=4\nsource settings.sh\nparallel ./task.sh {} ::: a b\n", mapping,
                 (("job.tasks", "a\nb\n"),)) == set()


def test_an_array_declared_in_eval_at_the_top_level_is_a_global_as_bash_makes_it():
    """slurmkit runs each set-up line as eval 'LINE'; the trace's eval is a function, where a
    declare would make a local: a function that reads the array later found it empty."""
    trace = traced("eval 'declare -a parts=(a b)'\nfill() { for p in \"${parts[@]}\"; do ./get \"$p\"; done; }\n"
                   "eval 'fill'\n")
    assert [s.argv for s in trace.starts] == [("./get", "a"), ("./get", "b")]


def test_the_parallel_stand_in_builds_each_task_as_gnu_parallel_does():
    trace = traced("printf 'a,b.txt\\n' > list.csv\n"
                   "parallel -j 8 --keep-order python p.py {1} {2} ::: x y ::: 1 2\n"
                   "parallel --colsep , ./run {2.} {1} {#} :::: list.csv\n"
                   "parallel 'cd {//} && ./fit {/.}' ::: d/case.nc\n"
                   "parallel ./tool ::: 'one two'\n"
                   "printf 'python q.py 1\\npython q.py 2\\n' | parallel --jobs 2\n"
                   "parallel -N 2 ./pairs ::: a b\n")
    assert [(s.argv, s.folder) for s in trace.starts] == [
        (("python", "p.py", "x", "1"), "$SLURM_SUBMIT_DIR"), (("python", "p.py", "x", "2"), "$SLURM_SUBMIT_DIR"),
        (("python", "p.py", "y", "1"), "$SLURM_SUBMIT_DIR"), (("python", "p.py", "y", "2"), "$SLURM_SUBMIT_DIR"),
        (("./run", "b", "a", "1"), "$SLURM_SUBMIT_DIR"), (("./fit", "case"), "$SLURM_SUBMIT_DIR/d"),
        (("./tool", "one two"), "$SLURM_SUBMIT_DIR"), (("python", "q.py", "1"), "$SLURM_SUBMIT_DIR"),
        (("python", "q.py", "2"), "$SLURM_SUBMIT_DIR"),
        (("parallel", "-N", "2", "./pairs", ":::", "a", "b"), "$SLURM_SUBMIT_DIR")]   # -N: tasks of 2 arguments, as it is


# --------------------------------------------------------------------------- background programs

def test_programs_left_in_the_background_when_the_script_ends_are_told_from_those_waited_for():
    trace = traced("python a.py &\nkept=$!\npython b.py &\nwait $kept\nbash -c 'python c.py & python d.py &' &\nwait $!\n"
                   "( python e.py )\npython f.py &\n")
    assert {s.argv[1]: s.ends for s in trace.starts} == {
        "a.py": verify.BACKGROUND_WAITED, "b.py": verify.BACKGROUND_LEFT, "c.py": verify.BACKGROUND_LEFT,
        "d.py": verify.BACKGROUND_LEFT, "e.py": "", "f.py": verify.BACKGROUND_LEFT}


def test_a_wait_lost_or_added_for_programs_in_the_background_is_found():
    waits = "python a.py &\npython b.py &\nwait\n"
    leaves = "python a.py &\npython b.py &\n"
    assert found(waits, spec({"shell": waits.strip()})) == set()
    assert found(leaves, spec({"shell": leaves.strip()})) == set()
    assert ("wait", "python") in found(waits, spec({"shell": leaves.strip()}))
    assert ("wait", "python") in found(leaves, spec({"shell": waits.strip()}))


def test_the_scripts_own_exit_trap_and_status_are_kept():
    trace = traced("set -e\ntrap 'echo status $?' EXIT\npython a.py &\nfalse\n")
    assert trace.status == 1 and trace.output.strip() == "status 1"
    assert [s.ends for s in trace.starts] == [verify.BACKGROUND_LEFT]


# ---------------------------------------------------------------------------- the starting folder

def test_a_job_starts_in_its_chdir_and_a_cd_to_the_submit_folder_goes_back():
    assert verify.shape_of(HEADER + "#SBATCH --chdir=/scratch/x/run\n").folder == "/scratch/x/run"
    assert verify.shape_of(HEADER + "#SBATCH -D sub\n").folder == "$SLURM_SUBMIT_DIR/sub"
    assert verify.shape_of(HEADER + "#SBATCH -D ./\n").folder == ""
    assert verify.shape_of(HEADER + "#SBATCH --chdir=$SCRATCH/run\n").folder == "/tmp"   # taken as written: slurmd goes to /tmp
    run = spec({"command": "python prog.py"})
    assert ("folder", "python") in found("#SBATCH --chdir=/scratch/x/run\npython prog.py\n", run)
    assert found("#SBATCH --chdir=/scratch/x/run\ncd $SLURM_SUBMIT_DIR\npython prog.py\n", run) == set()
    assert found("#SBATCH --chdir=/scratch/x/run\npython prog.py\n", spec({"command": "python prog.py"},
                                                                          environment={"setup": ["cd /scratch/x/run"]})) == set()


# ----------------------------------------------------------------------------------------- globs

def test_a_glob_the_old_script_expands_and_the_new_one_quotes_is_found():
    script = "cp data/*.json $SLURM_TMPDIR/\npython prog.py $SLURM_TMPDIR\n"
    run = {"command": "python prog.py $SLURM_TMPDIR"}
    assert found(script, spec(run, environment={"setup": ["cp data/*.json $SLURM_TMPDIR/"]})) == set()
    # stage.inputs renders its path as one quoted word: the glob never expands, and cp finds no such file
    quoted = found(script, spec(run, stage={"inputs": ["data/*.json"]}))
    assert {("exit", ""), ("input", "$SLURM_SUBMIT_DIR/data/made-by-trace.json")} <= quoted


def test_a_file_tools_glob_stands_for_a_file_of_the_users_and_a_quoted_one_for_none():
    trace = traced("cp data/*.json $SLURM_TMPDIR/\ncp \"$HOME/in/*.txt\" $SLURM_TMPDIR/\ntar -xf $HOME/a/*.tar -C $SLURM_TMPDIR\n"
                   "rsync -a --exclude 'b*' in/ $SLURM_TMPDIR/in/\npython prog.py\n")
    assert trace.inputs == ("$HOME/a/made-by-trace.tar", "$SLURM_SUBMIT_DIR/data/made-by-trace.json", "$SLURM_SUBMIT_DIR/in")
    assert trace.starts[0].tmpdir == ("from-made-by-trace.tar", "made-by-trace.json", "in/made-by-trace")
    assert "cannot stat '<trace>/home/in/*.txt'" in trace.output
