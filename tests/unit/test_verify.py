"""Import and port verify themselves (slurmkit/port/verify.py): the old script and the new one run
side by side under bash with recording stand-ins, and every difference is found. Each silent
class of difference is shown with a mapping broken on purpose (the spec import would write if
that one rule were gone), beside the faithful mapping, which verifies equal; what slurmkit
declared is shown as declared; what cannot be traced is a to do and is never run; a script that
never ends is stopped. Needs bash only: no cluster."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.core.todos import pending_import_notes
from slurmkit.port import verify
from slurmkit.port.porting import Imported, Note

HEADER = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\n"
PROFILE = "narval"   # in service, with a module system: its rendered scripts load StdEnv/2023


def spec(launch, kind="serial", resources=None, **sections):
    return {"name": "job", "account": "def-x", "kind": kind, "resources": {"time": "1h", **(resources or {})},
            "launch": launch, **sections}


def verified(script, mapping, notes=()):
    return verify.verify_import(HEADER + script, Imported(mapping, tuple(notes)), PROFILE)


def found(script, mapping, notes=()):
    """(what, subject) of each difference verification found and nothing declared."""
    verification = verified(script, mapping, notes)
    assert not verification.not_run, verification.not_run
    return {(d.what, d.subject) for d in verification.findings}


# ------------------------------------------------------------ each silent class, broken on purpose

def test_a_launch_that_loses_its_srun_runs_the_program_once_and_is_found():
    script = "#SBATCH --ntasks=8\nsrun ./app\n"
    faithful = spec({"launcher": "srun", "command": "./app"}, "mpi", {"tasks_per_node": 8})
    assert found(script, faithful) == set()
    srun_decision_removed = spec({"command": "./app"}, "threaded", {"cpus_per_task": 8})
    assert ("count", "app") in found(script, srun_decision_removed)


def test_a_bare_program_wrapped_in_srun_on_two_nodes_is_found():
    script = "#SBATCH --nodes=2 --ntasks-per-node=8\npython prog.py\n"
    wrapped = spec({"launcher": "srun", "command": "python prog.py"}, "mpi", {"nodes": 2, "tasks_per_node": 8})
    difference = next(d for d in verified(script, wrapped).findings if d.what == "count")
    assert (difference.subject, difference.old, difference.new) == ("python", "1", "16")


def test_a_program_that_starts_its_own_processes_on_two_nodes_runs_once_as_import_maps_it():
    """charmrun (and a Ray driver) started by the batch shell runs once: import's kind mpi with
    launcher direct keeps that and verifies equal; under srun it would run once per task."""
    from slurmkit.port.porting import import_script

    script = "#SBATCH --nodes=2 --ntasks-per-node=4\ncharmrun ++p $SLURM_NTASKS ./namd3 in.namd\n"
    imported = import_script(HEADER + script, name="job", profile=PROFILE)
    assert imported.spec["launch"] == {"command": "charmrun ++p $SLURM_NTASKS ./namd3 in.namd", "launcher": "direct"}
    assert imported.spec["resources"]["nodes"] == 2 and imported.spec["resources"]["tasks_per_node"] == 4
    assert found(script, imported.spec) == set()
    wrapped = dict(imported.spec, launch={"command": "charmrun ++p $SLURM_NTASKS ./namd3 in.namd", "launcher": "srun"})
    assert ("count", "charmrun") in found(script, wrapped)


def test_a_launch_block_that_starts_its_own_job_steps_on_two_nodes_runs_once_as_import_maps_it():
    from slurmkit.port.porting import import_script

    script = "#SBATCH --nodes=2 --ntasks-per-node=4\nfor n in 1 2; do\n  mpirun ./ior -b $n\ndone\n"
    imported = import_script(HEADER + script, name="job", profile=PROFILE)
    assert imported.spec["launch"]["launcher"] == "direct"
    assert found(script, imported.spec) == set()


def test_the_array_index_shift_is_found_in_the_words_and_in_the_variable_the_program_reads():
    script = "#SBATCH --array=1-4\npython prog.py --seed $SLURM_ARRAY_TASK_ID\n"
    renumbered = {"array": {"parameters": {"task_id": ["1", "2", "3", "4"]}}}
    with_task_id = spec({"command": "python prog.py --seed $task_id"}, "array", **renumbered)
    # Its words are the same, but a program that reads SLURM_ARRAY_TASK_ID itself now gets 0, not 1.
    assert found(script, with_task_id) == {("env", "SLURM_ARRAY_TASK_ID")}
    task_id_rule_removed = spec({"command": "python prog.py --seed $SLURM_ARRAY_TASK_ID"}, "array", **renumbered)
    assert ("argv", "python") in found(script, task_id_rule_removed)


def test_an_array_parameter_named_like_the_scripts_own_variable_is_found():
    script = ("#SBATCH --array=0-3\nfor i in 0 1 2 3; do\n  let task_id=$i\n"
              "  if [ \"$task_id\" -eq \"$SLURM_ARRAY_TASK_ID\" ]; then python prog.py --case $i; fi\ndone\n")
    body = script.split("\n", 1)[1].strip()
    faithful = spec({"shell": body}, "array", array={"parameters": {"array_task_id": ["0", "1", "2", "3"]}},
                    environment={"errexit": False})   # `let task_id=0` is status 1: the old script had no set -e
    assert found(script, faithful) == set()
    renamed = spec({"shell": body.replace("$SLURM_ARRAY_TASK_ID", "$task_id")}, "array",
                   array={"parameters": {"task_id": ["0", "1", "2", "3"]}})
    # the test compares task_id with itself: every case starts in every task
    assert ("start", "python") in found(script, renamed)


def test_one_process_with_a_rendezvous_variable_made_kind_ddp_is_found():
    script = "#SBATCH --gres=gpu:4\nexport MASTER_ADDR=127.0.0.1\npython train.py\n"
    faithful = spec({"command": "python train.py"}, "gpu", {"gpus": "4"}, environment={"variables": {"MASTER_ADDR": "127.0.0.1"}})
    assert found(script, faithful) == set()
    as_ddp = spec({"command": "python train.py", "launcher": "srun"}, "ddp", {"gpus": "4"})
    assert ("count", "python") in found(script, as_ddp)


def test_positional_parameters_made_literal_are_found():
    script = 'python prog.py "$1" "${10}"\n'
    literal = spec({"command": "python prog.py $$1 $${10}"})
    difference = next(d for d in verified(script, literal).findings if d.what == "argv")
    assert "arg1 arg10" in difference.old and "'$1'" in difference.new


def test_positional_parameters_in_a_shell_line_and_in_setup_verify_equal():
    """launch.shell runs under bash -c, environment.setup under eval: both read the script's own arguments."""
    script = 'IN=$1\nexport COUNT=$#\npython prog.py "$IN" ${10} "$@"\n'
    faithful = spec({"shell": 'python prog.py "$IN" ${10} "$@"'}, environment={"setup": ["IN=$1", "export COUNT=$#"],
                                                                            "allexport": False})
    assert found(script, faithful) == set()


def test_a_staged_input_named_by_a_variable_set_later_stops_the_new_script_and_is_found():
    script = "NAME=run1\ntar -xf $HOME/data/$NAME.tar -C $SLURM_TMPDIR\npython prog.py $SLURM_TMPDIR/$NAME\n"
    staged_first = spec({"command": "python prog.py $SLURM_TMPDIR/$NAME"}, environment={"setup": ["NAME=run1"]},
                        stage={"inputs": ["$HOME/data/$NAME.tar"]})
    verification = verified(script, staged_first)
    assert {("exit", ""), ("start", "python"), ("input", "$HOME/data/run1.tar")} <= {(d.what, d.subject) for d in verification.findings}
    assert "NAME: unbound variable" in next(d.text for d in verification.findings if d.what == "exit")


def test_a_copy_back_trap_dropped_with_nothing_in_its_place_is_found():
    script = "save() { src=$SLURM_TMPDIR/out; cp -r $src $HOME/results/; }\ntrap save EXIT\npython prog.py\n"
    dropped = [Note(4, "trap save EXIT", "dropped", "slurmkit saves stage.outputs on every exit")]
    outputs = {"outputs": [{"from": "out", "to": "$HOME/results/out"}]}
    assert found(script, spec({"command": "python prog.py"}, stage=outputs), dropped) == set()
    nothing_in_its_place = spec({"command": "python prog.py"})
    assert ("saved", "$HOME/results/out/made-by-trace") in found(script, nothing_in_its_place, dropped)


def test_pip_options_dropped_or_installs_reordered_are_found():
    script = ("module load python/3.10\nvirtualenv --no-download $SLURM_TMPDIR/env\nsource $SLURM_TMPDIR/env/bin/activate\n"
              "pip install --no-index numpy\npip install --no-index --no-deps mytool\npip install --no-index -r req.txt\n"
              "python run.py\n")
    mapped = [Note(4, "pip install --no-index numpy", "mapped")]
    faithful = spec({"command": "python run.py"}, environment={
        "modules": ["python/3.10"], "venv": {"packages": ["numpy"]},
        "setup": ["pip install --no-index --no-deps mytool", "pip install --no-index -r req.txt"]})
    assert found(script, faithful, mapped) == set()
    flags_dropped = spec({"command": "python run.py"}, environment={
        "modules": ["python/3.10"], "venv": {"packages": ["numpy", "mytool"], "requirements": "req.txt"}})
    difference = next(d for d in verified(script, flags_dropped, mapped).findings if d.what == "package")
    assert (difference.subject, difference.old, difference.new) == ("order", "numpy; --no-deps mytool; -r req.txt",
                                                                    "-r req.txt; numpy; mytool")


def test_a_pipe_after_srun_moved_inside_every_task_is_found():
    script = "#SBATCH --ntasks=4\nsrun ./app | tee out.log\n"
    per_task = spec({"launcher": "srun", "shell": "./app | tee out.log"}, "mpi", {"tasks_per_node": 4})
    difference = next(d for d in verified(script, per_task).findings if d.what == "count")
    assert (difference.subject, difference.old, difference.new) == ("tee", "1", "4")


def test_tasks_per_node_not_rewritten_when_tasks_become_threads_is_found():
    script = "#SBATCH --ntasks=4\nmake -j $SLURM_TASKS_PER_NODE\n"
    assert found(script, spec({"command": "make -j $SLURM_CPUS_PER_TASK"}, "threaded", {"cpus_per_task": 4})) == set()
    not_rewritten = spec({"command": "make -j $SLURM_TASKS_PER_NODE"}, "threaded", {"cpus_per_task": 4})
    assert ("argv", "make") in found(script, not_rewritten)


def test_a_brace_range_quoted_into_one_word_is_found():
    script = "python prog.py {1..4}\n"
    assert found(script, spec({"shell": "python prog.py {1..4}"})) == set()
    assert ("argv", "python") in found(script, spec({"command": "python prog.py '{1..4}'"}))


def test_a_setup_line_that_fails_or_an_unset_variable_stops_only_the_new_script_and_is_found():
    script = "mkdir data/out\npython prog.py --in $MYDATA/x\n"
    as_bash_ran_them = spec({"command": "python prog.py --in $MYDATA/x"},
                            environment={"setup": ["mkdir data/out"], "errexit": False, "nounset": False})
    assert found(script, as_bash_ran_them) == set()
    errexit_rule_removed = spec({"command": "python prog.py --in $MYDATA/x"},
                                environment={"setup": ["mkdir data/out"], "nounset": False})
    assert {("exit", ""), ("start", "python")} <= found(script, errexit_rule_removed)
    nounset_rule_removed = spec({"command": "python prog.py --in $MYDATA/x"},
                                environment={"setup": ["mkdir data/out"], "errexit": False})
    assert {("exit", ""), ("start", "python")} <= found(script, nounset_rule_removed)


def test_a_set_up_line_that_set_u_stopped_is_found_where_the_new_script_goes_on():
    script = "set -u\nmkdir -p $OUT/data\npython prog.py\n"
    assert found(script, spec({"command": "python prog.py"}, environment={"setup": ["mkdir -p $OUT/data"], "nounset": True})) == set()
    rule_removed = spec({"command": "python prog.py"}, environment={"setup": ["mkdir -p $OUT/data"]})
    assert {("exit", ""), ("start", "python")} <= found(script, rule_removed)


def test_a_python_module_loaded_after_the_virtualenv_is_found(monkeypatch):
    """A set-up line's python module came before the script's own virtualenv; slurmkit makes the
    virtualenv first and enters it again after the set-up lines. Without that, Lmod's python runs."""
    import re

    from slurmkit.resolve import resolve

    script = ("if [ -n \"$OLD\" ]; then module load python/3.8; else module load python/3.10; fi\n"
              "virtualenv --no-download $SLURM_TMPDIR/env\nsource $SLURM_TMPDIR/env/bin/activate\npython train.py\n")
    mapping = spec({"command": "python train.py"}, environment={
        "setup": ['if [ -n "$OLD" ]; then module load python/3.8; else module load python/3.10; fi'], "venv": {},
        "errexit": False, "nounset": False})
    assert found(script, mapping) == set()
    monkeypatch.setattr(resolve, "_MODULE_COMMAND", re.compile(r"(?!)"))   # the rule that enters it again, removed
    assert ("env", "(python first on PATH)") in found(script, mapping)


def test_a_branch_on_cc_cluster_goes_as_on_each_cluster_and_a_lost_one_is_found():
    """$CC_CLUSTER is set on every Alliance cluster: each trace runs with its cluster's, so a
    case or if that knows only the old cluster (its * branch exits) is found after a port."""
    from slurmkit.port.porting import import_script
    from slurmkit.port.retarget import port_spec
    from slurmkit.sites.profiles import load_profile
    from slurmkit.spec.spec import spec_from_mapping

    script = (HEADER + "case $CC_CLUSTER in\n  narval) module load StdEnv/2023 gcc/12.3 ;;\n"
              "  *) echo unknown cluster; exit 1 ;;\nesac\npython run.py\n")
    imported = import_script(script, name="job", profile="narval")
    assert verify.verify_import(script, imported, "narval").findings == ()
    ported = port_spec(imported.spec, spec_from_mapping(imported.spec), load_profile("narval"), load_profile("rorqual"))
    found = {(d.what, d.subject) for d in verify.verify_port(imported.spec, ported, "narval").findings}
    assert {("exit", ""), ("start", "python")} <= found


def test_tasks_per_gpu_give_the_trace_its_task_count():
    shape = dict(verify.shape_of("#SBATCH --nodes=2 --gpus-per-node=4 --ntasks-per-gpu=1\n").variables)
    assert shape["SLURM_NTASKS"] == "8" and shape["SLURM_NTASKS_PER_NODE"] == "4"


def test_port_finds_an_old_stdenv_that_a_kept_line_loads_after_the_new_one():
    from slurmkit.port.retarget import port_spec
    from slurmkit.sites.profiles import load_profile
    from slurmkit.spec.spec import spec_from_mapping

    data = {"name": "job", "profile": "graham", "account": "def-x", "resources": {"time": "1h"},
            "environment": {"modules": ["StdEnv/2020", "gcc/9.3.0"], "setup": ["module use $HOME/mods", "module load StdEnv/2020"]},
            "launch": {"command": "./app"}}
    ported = port_spec(data, spec_from_mapping(data), load_profile("graham"), load_profile("nibi"))
    verification = verify.verify_port(data, ported, "graham")
    assert [d.text for d in verification.findings] == [
        "port loads StdEnv/2023, but app runs with StdEnv: StdEnv/2020 (a line of the job loads it after)"]
    # the port's own module change is shown as declared
    assert any(d.what == "modules" and d.subject == "gcc" and "environment.modules" in d.declared for d in verification.declared)


# ------------------------------------------------------------------------ declared, and equal

def test_a_faithful_import_verifies_equal_with_what_slurmkit_does_itself_declared():
    script = ("#SBATCH --cpus-per-task=4\nmodule load StdEnv/2023 python/3.11\nexport OMP_NUM_THREADS=4\n"
              "cp $HOME/data/input.dat $SLURM_TMPDIR/\ncd $SLURM_TMPDIR\npython prog.py --in input.dat --threads $SLURM_CPUS_PER_TASK\n"
              "date\n")
    notes = [Note(5, "export OMP_NUM_THREADS=4", "dropped", "slurmkit sets OMP_NUM_THREADS from cpus_per_task"),
             Note(9, "date", "dropped", "it ran after the program only to report")]
    faithful = spec({"command": "python prog.py --in input.dat --threads $SLURM_CPUS_PER_TASK"}, "threaded", {"cpus_per_task": 4},
                    environment={"modules": ["StdEnv/2023", "python/3.11"], "setup": ["cd $SLURM_TMPDIR"]},
                    stage={"inputs": ["$HOME/data/input.dat"]})
    verification = verified(script, faithful, notes)
    assert verification.findings == () and verification.todos() == ()
    assert {(d.what, d.subject) for d in verification.declared} == {("env", "MKL_NUM_THREADS"), ("start", "date")}


def test_inputs_staged_before_a_line_that_ran_first_in_the_old_script_are_declared_and_lost_ones_found():
    """slurmkit stages stage.inputs before the job's lines: an earlier line sees them there (declared);
    a line that then removes them leaves the program without them (found)."""
    script = ("hostname\nmkdir -p $SLURM_TMPDIR/data\ntar -xf $HOME/data/set.tar -C $SLURM_TMPDIR/data\n"
              "cd $SLURM_TMPDIR\npython prog.py data\n")
    staged = {"inputs": [{"from": "$HOME/data/set.tar", "to": "data"}]}
    faithful = spec({"command": "python prog.py data"}, environment={"setup": ["hostname", "cd $SLURM_TMPDIR"]}, stage=staged)
    verification = verified(script, faithful)
    assert verification.findings == ()
    assert ("staged", "data/from-set.tar") in {(d.what, d.subject) for d in verification.declared}
    wiped = spec({"command": "python prog.py data"}, environment={"setup": ["hostname", "rm -rf $SLURM_TMPDIR/data", "cd $SLURM_TMPDIR"]},
                 stage=staged)
    assert ("staged", "data/from-set.tar") in found(script, wiped)


def test_a_shell_line_run_by_bash_with_joined_options_stops_where_set_e_stopped_the_old_script():
    """``bash -eo pipefail -c TEXT`` (how a rendered script runs launch.shell) is traced under -e:
    ``((n++))`` of 0 is status 1, and both scripts stop after the first step."""
    script = "set -e\nn=0\nfor s in a b c; do\n  ./step $s\n  ((n++))\ndone\n"
    kept = spec({"shell": "for s in a b c; do\n  ./step $s\n  ((n++))\ndone"}, environment={"setup": ["n=0"], "allexport": False})
    assert found(script, kept) == set()
    assert ("start", "step") in found(script.replace("set -e\n", ""), kept)   # without -e the old ran 3 steps


def test_a_comment_kept_in_a_setup_line_and_arithmetic_in_a_loop_are_no_redirections():
    """``X=1 ## <-- note`` runs in the new script as eval's text, comment and all, and ``i<=3``
    in a ``for ((...))``: neither reads a file called ``--`` or ``=3``."""
    loop = "for((i=1;i<=3;i++)); do\n  ./post $i\ndone"
    setup = ["NAME=run ## <-- set it here", "cd $SLURM_TMPDIR", "cp -r $SLURM_SUBMIT_DIR ."]
    script = "\n".join(setup) + f"\n./app\n{loop}\n"
    faithful = spec({"shell": f"./app\n{loop}"}, environment={"setup": setup, "allexport": False})
    assert found(script, faithful) == set()


def test_a_variable_the_programs_words_name_is_compared():
    script = "export MY_INPUT=data.csv\npython prog.py --input-from MY_INPUT\n"
    launch = {"command": "python prog.py --input-from MY_INPUT"}
    assert found(script, spec(launch, environment={"variables": {"MY_INPUT": "data.csv"}})) == set()
    difference = next(d for d in verified(script, spec(launch)).findings)
    assert (difference.what, difference.subject, difference.old, difference.new) == ("env", "MY_INPUT", "data.csv", "(unset)")


def test_a_setup_variable_the_old_script_did_not_export_reaches_no_program_of_the_new():
    """slurmkit's set -a would pass SEED to the program, which the old script never did: a
    finding, which environment.allexport: false (what import writes) removes."""
    script = "SEED=5\npython prog.py --seed-from SEED\n"
    launch = {"command": "python prog.py --seed-from SEED"}
    verification = verified(script, spec(launch, environment={"setup": ["SEED=5"]}))
    assert [(d.subject, d.old, d.new, d.declared) for d in verification.findings] == [("SEED", "(unset)", "5", "")]
    verification = verified(script, spec(launch, environment={"setup": ["SEED=5"], "allexport": False}))
    assert verification.findings == () and not [d for d in verification.declared if d.subject == "SEED"]
    shell = verified(script, spec({"shell": "python prog.py --seed-from SEED $SEED"},
                                  environment={"setup": ["SEED=5"], "allexport": False}))
    assert [(d.subject, d.declared) for d in shell.declared if d.subject == "SEED"] == [
        ("SEED", "launch.shell reads it in a bash of its own, so slurmkit exports it")]


# ------------------------------------------------------------------ what cannot be traced safely

def test_eval_of_computed_text_and_absolute_shells_are_to_dos_and_never_run():
    script = ('cmd="echo ran > $HOME/eval-ran"\neval "$cmd"\n"$BASH" -c "echo ran > $HOME/bash-ran"\n'
              "/usr/bin/env python3 other.py\neval 'python written.py'\n")
    trace = verify.trace(HEADER + script, verify.shape_of(HEADER + script))
    assert trace.untraceable == ("eval echo ran > $HOME/eval-ran: eval of text the script computed, not run",
                                 "/bin/bash -c echo ran > $HOME/bash-ran: a program named by its absolute path, not run",
                                 "/usr/bin/env python3 other.py: a program named by its absolute path, not run")
    assert trace.saved == () and [s.argv for s in trace.starts] == [("python", "written.py")]
    todos = verified(script, spec({"command": "python written.py"})).todos()
    assert "verify: not traced: eval echo ran > $HOME/eval-ran: eval of text the script computed, not run" in todos


def test_a_file_tool_and_cd_on_a_path_computed_from_the_users_login_variables_are_traced():
    """``ws=$TRAIN_HOME`` (set by the user's login shell, empty here): ``cp $ws/in.csv ...`` names
    /in.csv at run time. It acts under the trace folder's abs/, as a path written out does, and
    is compared, rather than left "not traced" for the user to puzzle over."""
    script = "ws=${TRAIN_HOME}\nmkdir -p $ws/runs\ncp $ws/schedules/a.csv $ws/runs/schedule.csv\ncd $ws/runs\npython a.py\n"
    trace = verify.trace(HEADER + script, verify.shape_of(HEADER + script))
    assert trace.untraceable == ()
    assert [f["argv"] for f in trace.files][-1] == ["cp", "/schedules/a.csv", "/runs/schedule.csv"]
    assert [(s.argv, s.folder) for s in trace.starts] == [(("python", "a.py"), "/runs")]


def test_a_step_neither_trace_runs_alike_is_a_note_and_one_only_one_trace_has_is_a_to_do():
    """The same untraced step in both scripts (a file sourced from the user's home) shows no
    difference and the user cannot act on "not traced": a note. One in only one script may be
    where the two differ: a to-do."""
    script = "source /home/me/env.conf\npython a.py\n"
    alike = verified(script, spec({"command": "python a.py"}, environment={"setup": ["source /home/me/env.conf"]}))
    assert alike.findings == () and alike.todos() == ()
    assert alike.notes() == ("verify: not traced: source /home/me/env.conf: a file not in the trace (outside it, or not "
                             f"made by the script), not run ({verify.UNTRACED_ALIKE})",)
    dropped = verified(script, spec({"command": "python a.py"}))
    assert dropped.notes() == () and [d.what for d in dropped.findings] == ["untraceable"]


def test_a_program_named_by_an_absolute_path_is_recorded_never_run_and_compared(tmp_path):
    """Every absolute path the script writes lies under the trace folder's abs/, where no real
    program is: the start is recorded as ./prog's is, and a file tool acts as its stand-in."""
    real = tmp_path / "ran"
    script = (f"/usr/bin/python3 other.py > {real}\n/project/def-x/bin/app --steps 5\n"
              "/bin/mkdir -p out\n/bin/cp in.dat out/\n")
    trace = verify.trace(HEADER + script, verify.shape_of(HEADER + script))
    assert trace.untraceable == () and not real.exists()
    assert [s.argv for s in trace.starts] == [("/usr/bin/python3", "other.py"), ("/project/def-x/bin/app", "--steps", "5")]
    assert found(script, spec({"command": "/project/def-x/bin/app --steps 5"},
                              environment={"setup": [f"/usr/bin/python3 other.py > {real}", "/bin/mkdir -p out",
                                                     "/bin/cp in.dat out/"]})) == set()
    different = verified(script, spec({"command": "/project/def-x/bin/app --steps 6"},
                                      environment={"setup": [f"/usr/bin/python3 other.py > {real}", "/bin/mkdir -p out",
                                                             "/bin/cp in.dat out/"]}))
    assert [d.text for d in different.findings] == [
        "app's words differ: old `/project/def-x/bin/app --steps 5`, new `/project/def-x/bin/app --steps 6`"]


def test_nothing_is_written_outside_the_trace_folder(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept").write_text("the user's")
    script = (f"echo x > {outside}/redirected\ncp /etc/hostname {outside}/copied\ncd {outside} && touch touched\n"
              f'rm -rf {outside}\ncd "${{BASH%/*}}"\nmkdir -p "${{BASH%/*/*}}/made"\nln -s "${{BASH%/*}}" linked\n'
              'echo x > "${BASH%/*/*}/redirected"\n')
    trace = verify.trace(HEADER + script, verify.shape_of(HEADER + script))
    assert [p.name for p in outside.iterdir()] == ["kept"]
    # a path computed at run time (${BASH%/*}) is moved under the trace folder's abs/, as one written
    # out is: cd, mkdir and ln act there; a redirection bash opens itself is not run
    assert [t.split(" ")[0] for t in trace.untraceable] == ["echo"]
    assert not Path("/made").exists() and not Path("/usr/made").exists()
    assert all(t.endswith("not run") for t in trace.untraceable)


@pytest.mark.skipif(not verify.landlock_abi(), reason="the kernel has no Landlock")
def test_where_the_kernel_has_landlock_even_a_loops_redirect_by_a_computed_path_writes_nothing_outside(tmp_path):
    # A compound command's redirection is opened by bash before the stand-ins see a command.
    script = HEADER + f'OUT={str(tmp_path).lstrip("/")}\nfor i in 1; do echo x; done > "${{BASH%/*/*}}/$OUT/written"\n'
    trace = verify.trace(script, verify.shape_of(script))
    assert list(tmp_path.iterdir()) == [] and "Permission denied" in trace.output


def test_a_script_that_loops_forever_is_stopped_and_reported():
    script = HEADER + "while true; do sleep 60; done\n"
    looping = verify.trace(script, verify.shape_of(script), timeout_s=1)
    ending = verify.trace(HEADER + "true\n", verify.shape_of(HEADER))
    assert looping.status is None and ending.status == 0
    (difference,) = verify.compare(ending, looping)
    assert difference.what == "exit" and "the new script was stopped" in difference.text


def test_a_script_that_waits_on_nothing_is_stopped_and_one_that_progresses_slowly_is_not():
    """The limit counts the time with nothing recorded: a script that only spins on builtins is
    stopped after it, while one slower in all than the limit (a loaded machine) ends by itself."""
    idle = HEADER + "while :; do :; done\n"
    assert verify.trace(idle, verify.shape_of(idle), timeout_s=1).status is None
    slow = HEADER + ("for i in 1 2 3 4 5 6 7 8 9 10 11 12; do\n    end=$(( ${EPOCHREALTIME/./} + 500000 ))\n"
                     "    while (( ${EPOCHREALTIME/./} < end )); do :; done\n    hostname\ndone\n")
    progressing = verify.trace(slow, verify.shape_of(slow), timeout_s=4)
    assert progressing.status == 0, progressing.output


# ---------------------------------------------------------------------------- the job's shape

def test_the_shape_is_the_first_array_task_of_the_scripts_own_header():
    header = HEADER + "#SBATCH --array=3-9:2%2\n#SBATCH -N 2 --ntasks-per-node=4 -c 2\n#SBATCH --gres=gpu:v100:2\n"
    shape = dict(verify.shape_of(header).variables)
    assert (shape["SLURM_ARRAY_TASK_ID"], shape["SLURM_ARRAY_TASK_COUNT"], shape["SLURM_ARRAY_TASK_MAX"]) == ("3", "4", "9")
    assert (shape["SLURM_NNODES"], shape["SLURM_NTASKS"], shape["SLURM_TASKS_PER_NODE"]) == ("2", "8", "4(x2)")
    assert (shape["SLURM_JOB_NODELIST"], shape["SLURM_CPUS_PER_TASK"], shape["CUDA_VISIBLE_DEVICES"]) == ("node[1-2]", "2", "0,1")


@pytest.mark.parametrize("first, traced", [("#!/bin/bash", True), ("#!/usr/bin/env bash", True), ("#!/bin/sh", True), ("", True),
                                           ("#!/bin/tcsh", False), ("#!/usr/bin/env python3", False)])
def test_a_script_for_another_interpreter_is_not_traced(first, traced):
    why = verify.not_traceable(f"{first}\n#SBATCH --time=1:00:00\n")
    assert (why == "") == traced and (traced or "not bash" in why)


def test_absolute_paths_written_in_the_script_are_moved_into_the_trace_folder_and_nothing_else():
    written = """cp "$HOME"/x "/project/y" '/scratch/z' "${A}"/b $(pwd)/c a:/usr/bin http://h/p > /dev/null\n"""
    assert verify.mirrored(written, "/T") == ("""cp "$HOME"/x "/T/abs/project/y" '/T/abs/scratch/z' "${A}"/b $(pwd)/c a:/T/abs/usr/bin """
                                              "http://h/p > /dev/null\n")
    # shlex.quote's quoting of a quote, as slurmkit writes a setup line
    assert verify.mirrored("""eval 'D='"'"'/home/me'"'"''\n# /project/comment\n""", "/T") == (
        """eval 'D='"'"'/T/abs/home/me'"'"''\n# /project/comment\n""")


def test_a_script_that_reads_its_arguments_gets_as_many_in_both_runs():
    assert verify.arguments_of('python p.py "$1" ${10}\n') == tuple(f"arg{n}" for n in range(1, 11))
    assert verify.arguments_of('python p.py "$@"\n') == ("arg1",) and verify.arguments_of("echo $$\n") == ()


def test_programs_in_subshells_substitutions_and_pipes_are_traced_and_paths_never_run():
    script = HEADER + '( ./first )\nx=$(./second)\n./third | /usr/bin/id\nf() { ( "$SLURM_SUBMIT_DIR/fourth" ); }\nf &\nwait\n'
    trace = verify.trace(script, verify.shape_of(script))
    assert trace.status == 0 and sorted(s.argv[0] for s in trace.starts) == ["$SLURM_SUBMIT_DIR/fourth", "./first", "./second",
                                                                              "./third", "/usr/bin/id"]
    assert trace.untraceable == ()


def test_srun_records_its_program_with_the_task_count_and_runs_a_shell_once_as_task_zero():
    script = HEADER + ("#SBATCH --nodes=2 --ntasks-per-node=4\nsrun -n 3 ./a\nsrun ./b\nsrun -N2 --ntasks-per-node=1 bash -c './c'\n"
                       "mpirun -np 6 ./d\nsrun --ntasks-per-node=1 tar -xf $HOME/in.tar -C $SLURM_TMPDIR\n")
    trace = verify.trace(script, verify.shape_of(script))
    assert [(s.program, s.tasks, s.via) for s in trace.starts] == [("a", 3, "srun -n 3"), ("b", 8, "srun"), ("c", 2, "srun"),
                                                                  ("d", 6, "mpirun -np 6")]
    assert trace.inputs == ("$HOME/in.tar",)


# --------------------------------------------------------------------------------- the commands

def test_import_writes_what_verification_found_as_to_dos_that_check_reports(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("old.sh").write_text(HEADER + "python prog.py\n")
    finding = verify.Difference("argv", "python", "python's words differ: old `python prog.py`, new `python prog.py -v`")
    monkeypatch.setattr(verify, "compare", lambda old, new, declared=(): [finding])
    result = CliRunner().invoke(main, ["import", "old.sh", "--profile", PROFILE, "-o", "job.yaml"])
    assert result.exit_code == 0, result.output
    todo = f"script: verify: {finding.text}"
    assert todo in pending_import_notes(Path("job.yaml").read_text())
    checked = CliRunner().invoke(main, ["check", "job.yaml"])
    assert f"to do: {todo}" in checked.output and "no problems found" not in checked.output


def test_import_writes_a_step_neither_trace_ran_as_a_note_that_check_passes(tmp_path, monkeypatch):
    """``eval "$cmd"`` kept as written runs in both scripts, alike: no difference, so a note."""
    monkeypatch.chdir(tmp_path)
    Path("old.sh").write_text(HEADER + 'module load python/3.12\ncmd="python prog.py"\neval "$cmd"\npython prog.py\n')
    result = CliRunner().invoke(main, ["import", "old.sh", "--profile", PROFILE, "-o", "job.yaml"])
    assert result.exit_code == 0, result.output
    written = Path("job.yaml").read_text()
    assert "# note: script: verify: not traced: eval python prog.py: eval of text the script computed, not run" in written
    assert pending_import_notes(written) == ()
    assert "1 step(s) neither trace ran, each a note" in result.output
    assert "no problems found" in CliRunner().invoke(main, ["check", "job.yaml"]).output


def test_no_verify_skips_verification(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("old.sh").write_text(HEADER + 'module load python/3.12\ncmd="python prog.py"\neval "$cmd"\npython prog.py\n')
    result = CliRunner().invoke(main, ["import", "old.sh", "--profile", PROFILE, "-o", "job.yaml", "--no-verify"])
    assert result.exit_code == 0 and "verify" not in result.output and "verify" not in Path("job.yaml").read_text()


def test_port_writes_what_verification_found_into_the_ported_spec(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("job.yaml").write_text("name: job\nprofile: graham\naccount: def-x\nresources: {time: 1h}\n"
                                "environment: {modules: [StdEnv/2020], setup: [module use $HOME/mods, module load StdEnv/2020]}\n"
                                "launch: {command: ./app}\n")
    result = CliRunner().invoke(main, ["port", "job.yaml", "-o", "ported.yaml"])
    assert result.exit_code == 0, result.output
    assert "to do: verify: port loads StdEnv/2023, but app runs with StdEnv: StdEnv/2020" in result.output
    assert any(n.startswith("verify: port loads StdEnv/2023") for n in pending_import_notes(Path("ported.yaml").read_text()))


def test_a_spec_that_does_not_render_is_said_not_verified(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("old.sh").write_text(HEADER + "#SBATCH --gres=gpu:k80:1\npython prog.py\n")
    result = CliRunner().invoke(main, ["import", "old.sh", "--profile", PROFILE, "-o", "job.yaml"])
    assert result.exit_code == 0, result.output
    text = Path("job.yaml").read_text()
    assert "# note: script: verify: not verified: the spec does not render on narval: resources.gpus:" in text
    assert not [n for n in pending_import_notes(text) if "verify" in n]   # check reports the error that stops the render
    checked = CliRunner().invoke(main, ["check", "job.yaml"])
    assert checked.exit_code != 0 and "resources.gpus" in checked.output
    assert "agree" not in result.output


@pytest.mark.parametrize("copy", ["cp -r $SLURM_TMPDIR/out $HOME/results/", "rsync -a $SLURM_TMPDIR/out/ $HOME/results/out/"])
def test_a_copy_back_into_a_folder_named_with_a_slash_imports_to_what_the_trace_of_the_old_script_saves(copy):
    """cp puts out inside results/: the imported output must save the same files, so that the
    traces agree with nothing left to do."""
    from slurmkit.port.porting import import_script

    script = f"save() {{ {copy}; }}\ntrap save EXIT\npython prog.py --out $SLURM_TMPDIR/out\n"
    imported = import_script(HEADER + script, name="job", profile=PROFILE)
    verification = verify.verify_import(HEADER + script, imported, PROFILE)
    assert not verification.not_run and verification.findings == () and verification.todos() == ()


def test_a_script_with_dos_line_ends_is_traced_as_the_lf_script_that_ran():
    script = "cd run\r\npython prog.py\r\n"
    faithful = spec({"command": "python prog.py"}, environment={"setup": ["cd run"]})
    assert found(script, faithful) == set()


def test_a_relative_program_after_a_cd_into_a_folder_named_absolutely_is_the_users_and_traced():
    script = "cd /project/def-x/run\n./app input.dat\n"
    faithful = spec({"command": "./app input.dat"}, environment={"setup": ["cd /project/def-x/run"]})
    assert found(script, faithful) == set()
    moved = spec({"command": "./app other.dat"}, environment={"setup": ["cd /project/def-x/run"]})
    assert ("argv", "app") in found(script, moved)


def test_a_variable_the_script_exports_reaches_its_programs_whatever_its_name():
    """The stand-ins' own locals (name, text, words, target, ...) once shadowed a variable the
    script exported, and bash exports such a local: a program run through bash -c read the
    stand-in's `name` ("bash") for the script's."""
    names = ("name", "text", "words", "word", "target", "rest", "folder", "plan", "count", "options", "file", "how", "root")
    script = "".join(f"export {n}=v-{n}\n" for n in names) + 'bash -c "python p.py ' + " ".join(f"\\${n}" for n in names) + '"\n'
    trace = verify.trace(HEADER + script, verify.shape_of(HEADER + script))
    assert [s.argv for s in trace.starts] == [("python", "p.py", *(f"v-{n}" for n in names))]


def test_tar_extracting_what_a_pipe_of_stand_ins_gives_is_an_archive_of_the_users():
    """``cat parts?? | unpigz | tar -xC DIR``: the stand-ins write no archive, and the real tar
    failed on the empty pipe, which stopped the old script (set -e) and not the new: a false
    difference. tar now extracts one file, as it does from an archive it reads by name."""
    script = ("set -e\nmkdir -p $SLURM_TMPDIR/x\ncat a.tar.gz.part?? | unpigz -p 32 | tar -xvC $SLURM_TMPDIR/x\n"
              "python p.py $SLURM_TMPDIR/x\n")
    trace = verify.trace(HEADER + script, verify.shape_of(HEADER + script))
    assert trace.status == 0 and [s.argv[0] for s in trace.starts][-1] == "python"
    assert trace.starts[-1].tmpdir == ("x/",)


def test_a_long_command_line_is_shown_from_the_first_word_that_differs():
    """A cut at a fixed length hid the difference of two long lines (both shown alike)."""
    common = " ".join(f"--option-{i}=value" for i in range(12))
    different = verified(f"python train.py {common} --cuda\n", spec({"command": f"python train.py {common} --cuda '#' --debug"}))
    assert [d.text for d in different.findings] == [
        "python's words differ: old `python ... --cuda`, new `python ... --cuda '#' --debug`"]


def test_arguments_a_setup_line_sets_reach_the_launch_in_the_trace_as_in_the_job():
    """The rendered script runs setup lines with eval, which the trace holds as a function: a
    `set -- WORDS` there sets the script's own arguments all the same, as bash does in the job."""
    script = 'set -- small 10\necho "size $1"\n./app --size "$1" --steps "$2"\n'
    kept = spec({"shell": './app --size "$1" --steps "$2"'},
                environment={"setup": ["set -- small 10", 'echo "size $1"'], "errexit": False})
    assert found(script, kept) == set()
    dropped = spec({"shell": './app --size "$1" --steps "$2"'}, environment={"setup": ['echo "size $1"'], "errexit": False})
    assert ("argv", "app") in found(script, dropped)


def _start(program, modules):
    return verify.Start(program=program, argv=(program,), folder="", env=(), modules=modules, tasks=1, via="",
                        part="program", tmpdir=())


@pytest.mark.parametrize("program, said", [("--nthread", False), ("rmats.py", True)])
def test_a_module_change_unseen_by_an_option_word_is_said_of_no_program(program, said):
    """A line bash ran as a command of its own (`--nthread 4` after a broken continuation) is no
    program: "port loads star, but --nthread runs with star" names none."""
    from types import SimpleNamespace
    change = SimpleNamespace(field="environment.modules", new=("star/2.7.11b",))
    trace = verify.Trace(starts=(_start(program, ("star/2.7.9a",)),), files=(), untraceable=(), saved=(), inputs=(), status=0)
    assert bool(verify.unseen_changes([change], trace)) is said


def test_slurmkits_own_files_are_no_difference_between_the_scripts():
    """The runtime's task env, a copy kept beside its destination and the swap's old copy exist only
    in the new script's trace: they are slurmkit's, not the job's."""
    old = verify.Trace(starts=(), files=(), untraceable=(), saved=("out/a.txt",), inputs=(), status=0)
    new = old._replace(saved=("out/a.txt", "out/b.partial-1000", "res.slurmkit-old", "slurmkit-task-env.src", "out/c.txt"))
    assert [d.subject for d in verify._file_sets(old, new)] == ["out/c.txt"]
    # the checked save reads its own partial copy back before it swaps it in
    reads = old._replace(saved=(), inputs=("$HOME/logs/run.partial-1000", "in.dat"))
    assert [d.subject for d in verify._file_sets(old._replace(saved=()), reads)] == ["in.dat"]


def test_gpus_per_task_and_torchrun_one_process_per_gpu_are_traced_as_slurm_gives_them(monkeypatch):
    """``--gpus-per-task=4`` on one task: SLURM gives the node 4 GPUs (CUDA_VISIBLE_DEVICES=0,1,2,3),
    and ``torchrun --nproc_per_node=gpu`` starts one process per GPU it sees."""
    from slurmkit.port.tracerecord import task_count

    shape = dict(verify.shape_of("#!/bin/bash\n#SBATCH --ntasks-per-node=1 --gpus-per-task=4\n").variables)
    assert shape["CUDA_VISIBLE_DEVICES"] == "0,1,2,3"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
    assert task_count("torchrun", {"--nproc_per_node": "gpu"}) == 4


def test_a_variable_set_from_the_cpu_count_a_port_changed_is_declared():
    """``export JULIA_NUM_THREADS=$SLURM_CPUS_PER_TASK``: 40 on Niagara, 192 on Trillium, as the
    port's own change to cpus_per_task says; another value is still a finding."""
    from slurmkit.port.retarget import Change

    declared = verify.declared_by_port([Change("resources.cpus_per_task", 40, 192, "whole node")])
    moved = verify.Difference("env", "JULIA_NUM_THREADS", "JULIA_NUM_THREADS=40 in the old, 192 in the new", "40", "192")
    other = verify.Difference("env", "JULIA_NUM_THREADS", "JULIA_NUM_THREADS=40 in the old, 8 in the new", "40", "8")
    assert any(d.matches(moved) for d in declared) and not any(d.matches(other) for d in declared)


def test_a_count_a_port_changed_inside_an_option_word_is_declared():
    """``ray start --num-cpus=$SLURM_CPUS_PER_TASK``: the word reads 40 on Beluga, 64 on Rorqual,
    as the port's change to cpus_per_task says; 140 -> 164 is not that change."""
    from slurmkit.port.retarget import Change

    declared = verify.declared_by_port([Change("resources.cpus_per_task", 40, 64, "cores per GPU")])
    moved = verify.Difference("argv", "ray", "ray's words differ", "ray start --num-cpus=40 --block", "ray start --num-cpus=64 --block")
    other = verify.Difference("argv", "ray", "ray's words differ", "ray start --num-cpus=140", "ray start --num-cpus=164")
    assert verify._marked(moved, declared).declared and not verify._marked(other, declared).declared


def test_a_program_a_dropped_report_ran_in_backquotes_is_declared():
    """``echo "ended at `date`"`` dropped as a report: its date is declared as its $(date) is."""
    script = "python run.py\necho \"ended at `date`\"\n"
    notes = [Note(4, 'echo "ended at `date`"', "dropped", "it ran after the program only to report")]
    assert found(script, spec({"command": "python run.py"}), notes) == set()


def test_a_job_too_big_for_the_old_cluster_ports_without_a_to_do_it_cannot_do(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("old.sh").write_text("#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00 --cpus-per-task=64 --mem=248G\n"
                              "module load StdEnv/2020 julia/1.9.1\njulia --threads=64 run.jl\n")
    assert CliRunner().invoke(main, ["import", "old.sh", "--profile", "cedar", "-o", "job.yaml"]).exit_code == 0
    ported = CliRunner().invoke(main, ["port", "job.yaml", "--to", "fir", "-o", "fir.yaml"])
    assert ported.exit_code == 0, ported.output
    assert "not verified: the spec does not render on cedar" in Path("fir.yaml").read_text()
    assert not [n for n in pending_import_notes(Path("fir.yaml").read_text()) if "verify" in n]


def test_a_job_of_standard_tools_keeps_its_exit_status_and_true_in_its_place_is_found():
    """``tar`` that fails as the job's last line ended it with tar's status: a launch of ``true``
    with the tar in setup ends 0, which verification finds; import's own mapping keeps it."""
    from slurmkit.port.porting import import_script

    script = "tar -cf /nonexistent-folder/run42.tar run42\n"
    imported = import_script(HEADER + script, name="job", profile=PROFILE)
    verification = verify.verify_import(HEADER + script, imported, PROFILE)
    assert not verification.not_run and verification.findings == (), verification.findings
    in_setup = spec({"command": "true"}, environment={"setup": [script.strip()], "errexit": False})
    assert ("exit", "") in found(script, in_setup)


@pytest.mark.parametrize("script", ["python run.py --seed=$RANDOM\n", "SEED=$RANDOM\npython run.py --seed=$SEED --other=$RANDOM\n",
                                    "python run.py --seed=$SRANDOM\n"])
def test_a_seed_drawn_from_random_is_no_difference(script):
    """$RANDOM differs between any two runs: both traces draw it from one seed, so a faithful
    import is no to-do, while a seed the import changed still is."""
    from slurmkit.port.porting import import_script

    imported = import_script(HEADER + script, name="job", profile=PROFILE)
    verification = verify.verify_import(HEADER + script, imported, PROFILE)
    assert not verification.not_run and verification.findings == (), verification.findings
    fixed = dict(imported.spec, launch={"shell": script.replace("$RANDOM", "7").replace("$SRANDOM", "7").replace("\n", "; ")})
    assert ("argv", "python") in found(script, fixed)


@pytest.mark.parametrize("start", ["srun -n 1 ./worker &", "./worker &"])
def test_a_background_worker_the_job_kills_from_another_shell_is_ended_in_both(start):
    """``worker & wpid=$!; ./main; kill $wpid``: the launch's own bash kills it, not the shell
    that started it; the job ends it all the same. A launch without the kill leaves it running."""
    from slurmkit.port.porting import import_script

    script = f"{start}\nwpid=$!\n./main\nkill $wpid\n"
    imported = import_script(HEADER + script, name="job", profile=PROFILE)
    verification = verify.verify_import(HEADER + script, imported, PROFILE)
    assert not verification.not_run and verification.findings == (), verification.findings
    not_killed = spec({"command": "./main"}, environment={"setup": [start, "wpid=$!"], "errexit": False, "allexport": False})
    assert found(script, not_killed) == {("wait", "worker")}


def test_an_array_line_run_in_setup_and_again_in_the_launch_is_declared():
    """``names=($(cat names.txt))`` read by a setup line and by the launch runs in both (bash
    exports no array): cat starting twice is import's own doing, said in its note, no to-do."""
    from slurmkit.port.porting import import_script

    script = ('#SBATCH --array=0-9\nnames=($(cat names.txt))\n./prep "${names[$SLURM_ARRAY_TASK_ID]}" | sort > prep.txt\n'
              './main "${names[$SLURM_ARRAY_TASK_ID]}"\n')
    imported = import_script(HEADER + script, name="job", profile=PROFILE)
    assert imported.spec["launch"]["shell"].startswith("names=($(cat names.txt))"), imported.spec
    verification = verify.verify_import(HEADER + script, imported, PROFILE)
    assert not verification.not_run and verification.findings == (), verification.findings
    unsaid = Imported(imported.spec, tuple(n for n in imported.notes if "names=" not in n.text))
    assert ("start", "cat") in {(d.what, d.subject) for d in verify.verify_import(HEADER + script, unsaid, PROFILE).findings}
