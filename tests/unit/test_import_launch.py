"""slurmkit import: how the launch line and the task counts of a script become the spec's
kind, counts and command (the decisions, one script each)."""

import pytest

from slurmkit import Job
from slurmkit.port.porting import import_script
from slurmkit.spec.spec import spec_from_mapping

HEAD = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\n"


def imported(body: str, profile: str = "narval"):
    result = import_script(HEAD + body, name="job", profile=profile)
    spec_from_mapping(result.spec)
    return result


def notes(result, outcome: str):
    return [n.reason for n in result.notes if n.outcome == outcome]


def _left(result):
    """What import left to do but the question where the program's python comes from (a script
    that runs a python it never loads: tested on its own here)."""
    return tuple(n for n in result.unmapped if n.text != "environment.venv")


@pytest.mark.parametrize("word", ["$SLURM_TASKS_PER_NODE", "${SLURM_TASKS_PER_NODE}", "$SLURM_NTASKS", "${SLURM_NPROCS}"])
def test_a_task_count_becomes_the_threaded_process_cores(word):
    result = imported(f"#SBATCH --ntasks=8\npython prog.py -n {word}\n")
    assert result.spec["kind"] == "threaded"
    assert result.spec["launch"]["command"] == "python prog.py -n $SLURM_CPUS_PER_TASK"
    assert any(word.strip("${}") in reason for reason in notes(result, "mapped"))


@pytest.mark.parametrize("launch, cores", [("./driver.sh in_$SLURM_ARRAY_TASK_ID", 48), ("srun ./app", None),
                                            ("mpirun ./app", None)])
def test_an_array_tasks_started_without_srun_are_the_cores_of_its_one_process(launch, cores):
    """kind array runs one process a task, as the script did: 48 tasks per node it did not start
    with srun were that process's cores (a warning "only help with srun" was false)."""
    result = imported(f"#SBATCH --array=1-4 --nodes=1 --ntasks-per-node=48\n{launch}\n")
    assert result.spec["kind"] == "array"
    assert result.spec["resources"].get("cpus_per_task") == cores
    assert ("tasks_per_node" in result.spec["resources"]) == (cores is None)
    if cores:
        assert not any("only help" in str(w) for w in Job(**result.spec).resolve().warnings)


def test_steps_the_set_up_starts_in_the_background_keep_the_tasks_they_were_sized_for():
    """``srun -n1 -c2 ... &`` four times, then one merge: as one threaded process of 8 cores each
    2-core step got OMP_NUM_THREADS=8 (four times too many threads); the job's shape is kept."""
    result = imported("#SBATCH --ntasks=4 --cpus-per-task=2\nfor i in 1 2 3 4; do\n  srun -n1 -c2 --exclusive Rscript part.R $i &\n"
                      "done\nwait\nRscript merge.R\n")
    res = result.spec["resources"]
    assert (res["tasks_per_node"], res["cpus_per_task"]) == (4, 2)
    assert result.spec["launch"] == {"command": "Rscript merge.R", "launcher": "direct"}


def test_ntasks_per_node_is_renamed_only_where_slurm_set_it():
    # --ntasks alone: SLURM left SLURM_NTASKS_PER_NODE unset, and the name is not read as $SLURM_NTASKS
    alone = imported("#SBATCH --ntasks=8\npython prog.py -n $SLURM_NTASKS_PER_NODE\n")
    assert alone.spec["launch"]["command"] == "python prog.py -n $SLURM_NTASKS_PER_NODE"
    asked = imported("#SBATCH --nodes=1 --ntasks-per-node=8\npython prog.py -n $SLURM_NTASKS_PER_NODE\n")
    assert asked.spec["launch"]["command"] == "python prog.py -n $SLURM_CPUS_PER_TASK"


def test_ntasks_without_nodes_on_one_node_says_so():
    result = imported("#SBATCH --ntasks=8\nsrun ./app\n")
    assert result.spec["resources"]["tasks_per_node"] == 8 and "nodes" not in result.spec["resources"]
    assert any("keeps all of them on one node" in reason for reason in notes(result, "mapped"))


@pytest.mark.parametrize("tasks, cpus, nodes, per_node", [(200, 1, 4, 50), (128, 1, 2, 64), (64, 2, 2, 32), (96, 2, 3, 32)])
def test_ntasks_wider_than_a_node_go_to_the_fewest_nodes_that_share_them_evenly(tasks, cpus, nodes, per_node):
    result = imported(f"#SBATCH --ntasks={tasks} --cpus-per-task={cpus}\nsrun ./app\n")
    assert (result.spec["resources"]["nodes"], result.spec["resources"]["tasks_per_node"]) == (nodes, per_node)
    assert any("a node of narval has 64 cores" in reason for reason in notes(result, "mapped"))


def test_ntasks_that_no_even_share_fits_is_a_to_do():
    result = imported("#SBATCH --ntasks=65\nsrun ./app\n")
    assert any("do not divide evenly" in reason for reason in notes(result, "to do"))


@pytest.mark.parametrize("script, goes_on", [
    ("mkdir out\n./app\n", True),
    ("set -x\nmkdir out\n./app\n", True),
    ("set -e\nmkdir out\n./app\n", False),
    ("set -euo pipefail\nmkdir out\n./app\n", False),
    ("set -o errexit\nmkdir out\n./app\n", False),
    ("./app\n", False),                       # no setup line: nothing to go on past
])
def test_setup_goes_on_past_a_failure_where_the_script_had_no_set_e(script, goes_on):
    result = imported(script)
    assert ((result.spec.get("environment") or {}).get("errexit") is False) == goes_on
    assert any("went on past a command that failed" in reason for reason in notes(result, "mapped")) == goes_on


def test_a_shebang_with_e_stops_at_a_failure_too():
    result = import_script("#!/bin/bash -e\n#SBATCH --time=1:00:00\nmkdir out\n./app\n", profile="narval")
    assert "errexit" not in result.spec.get("environment", {})


@pytest.mark.parametrize("script, unset", [
    ("python run.py --data $MYDATA/x ${OUT}\n", ["MYDATA", "OUT"]),
    ("set -u\npython run.py --data $MYDATA\n", []),
    ("#SBATCH --nodes=1\nset -o nounset\npython run.py --data $MYDATA\n", []),
    ("MYDATA=/d\npython run.py --data $MYDATA\n", []),
    ("for MYDATA in a; do :; done\npython run.py --data $MYDATA\n", []),
    ("python run.py $SLURM_JOB_ID $HOME $SCRATCH $EBROOTGCC $SLURM_TMPDIR\n", []),
])
def test_a_launch_line_reading_a_variable_nothing_sets_reads_it_empty_as_before(script, unset):
    result = imported(script)
    environment = result.spec.get("environment") or {}
    assert (environment.get("nounset") is False) == bool(unset)
    if unset:
        assert any(f"sets no {', '.join(unset)}:" in reason for reason in notes(result, "mapped"))


@pytest.mark.parametrize("script, stops", [
    ("set -euo pipefail\nOUT=$HOME/out/$RUN\nmkdir -p $OUT\npython run.py\n", True),
    ("#SBATCH --nodes=1\nset -o nounset\ncd $WORK\npython run.py\n", True),
    ("source ~/.bashrc\nset -u\ncd $WORK\npython run.py\n", False),   # the first set-up line ran without it
    ("set -euo pipefail\npython run.py\n", False),                      # no set-up lines: the default says it
    ("cd $WORK\npython run.py\n", False),
])
def test_set_u_before_the_set_up_lines_stops_them_at_an_unset_variable_too(script, stops):
    """A script under ``set -u`` never ran ``mkdir -p $OUT`` with OUT unset; setup lines read an
    unset variable as empty by default, so the spec says nounset: true."""
    result = imported(script)
    assert ((result.spec.get("environment") or {}).get("nounset") is True) == stops
    assert any("nounset: true" in n.text for n in result.notes) == stops


TORCHRUN_NODES = "#SBATCH --nodes=2 --gpus-per-node=4 --ntasks-per-node=1 --cpus-per-task=32\n"


@pytest.mark.parametrize("starter", ["srun torchrun", "srun python -m torch.distributed.run", "srun -N 2 --ntasks-per-node=1 torchrun"])
def test_torchrun_over_nodes_becomes_kind_ddp_with_the_program_alone(starter):
    result = imported(TORCHRUN_NODES + f"{starter} --nnodes=2 --nproc_per_node=4 --rdzv_backend=c10d "
                                       "--rdzv_endpoint=$MASTER_ADDR:29500 train.py --epochs 3\n")
    spec = result.spec
    assert spec["kind"] == "ddp" and spec["launch"]["launcher"] == "srun"
    assert spec["launch"]["command"] == "python train.py --epochs 3"
    assert spec["resources"]["cpus_per_task"] == 8 and "tasks_per_node" not in spec["resources"]   # one task per GPU
    assert _left(result) == ()
    assert any("--rdzv_backend c10d" in n.text for n in result.notes if n.outcome == "dropped")


def test_torchruns_unlike_the_gpus_are_a_to_do():
    result = imported("#SBATCH --nodes=2 --gpus-per-node=4 --ntasks-per-node=4\nsrun torchrun --nnodes=2 --nproc_per_node=4 train.py\n")
    assert result.spec["kind"] == "ddp"
    assert any("started 4 torchrun(s) a node" in reason for reason in notes(result, "to do"))


@pytest.mark.parametrize("tail", ["| tee train.log", "2>&1 | tee train.log", "|& tee -a train.log"])
def test_a_tee_after_srun_under_a_distributed_kind_is_dropped(tail):
    result = imported(f"#SBATCH --nodes=1 --gres=gpu:2 --ntasks-per-node=2\nsrun python lightning_train.py {tail}\n")
    assert result.spec["kind"] == "lightning"
    assert result.spec["launch"] == {"launcher": "srun", "command": "python lightning_train.py"}
    assert _left(result) == ()
    assert [n.text for n in result.notes if n.outcome == "dropped" and n.text.startswith("tee")] == [tail[tail.index("tee"):]]


def test_a_dropped_tee_points_at_the_log_the_script_names():
    result = imported("#SBATCH --nodes=1 --gres=gpu:2 --ntasks-per-node=2\n#SBATCH --output=logs/run-%j.out\n"
                      "srun python lightning_train.py | tee train.log\n")
    assert result.spec["logs"] == {"output": "logs/run-%j.out"}
    [reason] = [n.reason for n in result.notes if n.outcome == "dropped" and n.text.startswith("tee")]
    assert "the job's log (logs/run-%j.out)" in reason


def test_one_command_under_lightning_is_execd_so_that_check_accepts_it():
    """srun sends USR1 to every process of a task: exec'd, the program is the only one."""
    result = imported("#SBATCH --nodes=1 --gres=gpu:2 --ntasks-per-node=2\nsrun python lightning_train.py > train.log\n")
    assert result.spec["launch"]["shell"] == "exec python lightning_train.py > train.log"
    assert not any("check refuses a shell line" in reason for reason in notes(result, "to do"))


def test_a_shell_line_of_several_commands_under_lightning_is_a_to_do_check_agrees_with():
    result = imported("#SBATCH --nodes=1 --gres=gpu:2 --ntasks-per-node=2\nsrun python lightning_train.py && echo done\n")
    assert "shell" in result.spec["launch"] and not result.spec["launch"]["shell"].startswith("exec")
    assert any("check refuses a shell line" in reason for reason in notes(result, "to do"))


def test_the_trace_reads_python_m_torch_distributed_run_as_torchrun():
    from slurmkit.port.tracerecord import as_torchrun

    assert as_torchrun(["python3", "-m", "torch.distributed.run", "--nproc_per_node=2", "t.py"]) == \
        ["torchrun", "--nproc_per_node=2", "t.py"]
    assert as_torchrun(["python", "-m", "pip", "install", "x"]) == ["python", "-m", "pip", "install", "x"]


def test_parallel_words_become_a_task_file_and_kind_many_tasks():
    result = imported("#SBATCH --cpus-per-task=4\nparallel -j 4 ./process {} ::: a b c\n")
    spec = result.spec
    assert spec["kind"] == "many-tasks" and spec["tasks"] == {"arguments": "job.tasks"}
    assert spec["launch"] == {"command": "./process '{}'"}
    assert (spec["resources"]["tasks_per_node"], spec["resources"]["cpus_per_task"]) == (4, 1)
    assert result.files == (("job.tasks", "a\nb\nc\n"),)


def test_parallel_words_without_a_command_are_the_commands():
    result = imported('parallel -j 2 ::: "./a x" "./b y"\n')
    assert result.spec["tasks"] == {"commands": "job.tasks"} and "launch" not in result.spec
    assert result.spec["resources"]["tasks_per_node"] == 2
    assert result.files == (("job.tasks", "./a x\n./b y\n"),)


@pytest.mark.parametrize("words", ["data/*.csv", "$INPUTS", "$(ls data)", "run{1..3}"])
def test_parallel_words_bash_computes_stay_a_shell_line_and_say_why(words):
    result = imported(f"parallel ./p {{}} ::: {words}\n")
    launch = result.spec["launch"]
    assert result.spec["kind"] != "many-tasks" and words in launch.get("shell", launch.get("command")) and result.files == ()
    assert any("bash computes GNU Parallel's arguments" in reason for reason in notes(result, "mapped"))


def test_import_writes_the_task_file_beside_the_spec_and_refuses_one_in_the_way(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from slurmkit.cli.main import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sh").write_text(HEAD + "#SBATCH --cpus-per-task=2\nparallel -j 2 ./run {} ::: x y\n")
    (tmp_path / "out").mkdir()
    args = ["import", "p.sh", "--profile", "narval", "--no-verify", "-o", "out/p.yaml"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "p.tasks").read_text() == "x\ny\n"
    assert "arguments: p.tasks" in (tmp_path / "out" / "p.yaml").read_text()
    again = CliRunner().invoke(main, args)
    assert again.exit_code != 0 and "p.tasks already exists" in again.output and "Traceback" not in again.output


@pytest.mark.parametrize("lines, noted", [
    ("python -m pyserini.encode\n", True),
    ("module load python/3.11\npython train.py\n", False),
    ("source ~/env/bin/activate\npython train.py\n", False),
    ("module load miniconda3\nsource activate env\npython train.py\n", False),
    ("./train\n", False),
    ("CUDA_VISIBLE_DEVICES=0 python train.py | tee log\n", True),
    ("time python3 train.py\n", True),
])
def test_a_python_the_script_never_loads_came_from_the_submitting_shell(lines, noted):
    """slurmkit loads the site's python for a Python program, ahead of the PATH sbatch passed from
    the submitting shell: where the script loads no python and enters no environment, that PATH's
    python (an activated venv) was the one that ran: a to-do, as only the user knows where the
    program's packages are, and `check` keeps saying so until they answer."""
    result = imported("#SBATCH --gres=gpu:1\n" + lines)
    said = [n.reason for n in result.notes if n.outcome == "to do" and n.text == "environment.venv"]
    assert bool(said) == noted
    assert not said or "the PATH of the shell it was submitted from" in said[0]


@pytest.mark.parametrize("launch", ["namd2 +p8 md.namd > md.out", "srun namd2 +p8 md.namd"])
@pytest.mark.parametrize("tail", ["cd ..\n", "cd ../\necho done\n", "cd ..\nexit 0\n"])
def test_a_trailing_cd_after_the_program_is_dropped(launch, tail):
    """`cd ..` as the script's last step changes nothing the job does: no to-do, no shell block."""
    result = imported(f"#SBATCH -c 8\ncd run1\n{launch}\n{tail}")
    assert not notes(result, "to do") and "cd" not in result.spec["launch"].get("shell", "")
    assert any(n.text.startswith("cd ..") for n in result.notes if n.outcome == "dropped")


def test_a_cd_after_the_program_that_a_later_line_needs_is_not_dropped():
    result = imported("#SBATCH -c 8\ncd run1\nsrun namd2 +p8 md.namd\ncd ..\ntar czf r.tgz run1\n")
    assert not any(n.text.startswith("cd ..") for n in result.notes if n.outcome == "dropped")


def _late_loads(body):
    return [n.text for n in imported(body).notes if n.outcome == "to do" and "came after" in n.reason]


@pytest.mark.parametrize("late", ["cuda/11.4 cudnn", "cudnn/8.2", "nccl"])
def test_cuda_loaded_after_a_python_step_asks_nothing(late):
    """cuda or cudnn loaded before `python setup.py install` changes nothing pip or python did there."""
    body = f"module load python/3.10\npython setup.py install\nmodule load {late}\npython train.py\n"
    assert _late_loads(body) == []


@pytest.mark.parametrize("late, before", [("gcc/9.3.0", "python setup.py install"), ("openmpi/4.0.3", "python setup.py build_ext"),
                                          ("cuda/11.4", "make")])
def test_a_load_that_changes_an_earlier_build_is_still_a_to_do(late, before):
    body = f"module load python/3.10\n{before}\nmodule load {late}\npython train.py\n"
    assert _late_loads(body) == [f"module load {late}"]


@pytest.mark.parametrize("before, late", [("exec > >(tee -a job.log) 2>&1", False), ("exec &> >(tee run.log)", False),
                                          ("exec > >(python filter.py) 2>&1", True), ("exec ./other", True)])
def test_a_load_after_exec_redirecting_the_output_to_tee_asks_nothing(before, late):
    """``exec > >(tee log)`` only copies the job's output: no module changes tee."""
    body = f"{before}\nmodule load gcc/9.3.0\npython train.py\n"
    assert _late_loads(body) == (["module load gcc/9.3.0"] if late else [])


@pytest.mark.parametrize("first, login", [("#!/bin/bash -l", True), ("#!/bin/bash --login", True), ("#!/bin/bash -le", True),
                                          ("#!/bin/bash", False), ("#!/bin/sh -l", False)])
def test_a_login_shell_script_stays_one(first, login):
    """#!/bin/bash -l read ~/.bash_profile before the script (a conda or module set-up): the job's does too."""
    result = import_script(f"{first}\n#SBATCH --account=def-x --time=1:00:00\n./app\n", name="job", profile="narval")
    spec_from_mapping(result.spec)
    assert (result.spec.get("environment") or {}).get("login_shell", False) is login
    assert any("login_shell" in n.reason for n in result.notes) is login


@pytest.mark.parametrize("launch, errexit", [("./a; ./b", False), ("for i in 1 2; do ./a $i; done", False),
                                             ("./a > log 2>&1", True), ("./a | tee log", True), ("./a && ./b", True)])
def test_a_launch_line_of_several_commands_without_set_e_goes_on_past_a_failure_as_before(launch, errexit):
    """The launch line runs under the job's set -e (bash -e -c): a script without it went on past a
    failing command between the statements of its last line; the spec keeps that (errexit: false)."""
    result = imported(f"echo start\n{{ {launch}; }} 2> err.log\n" if "{" in launch else f"{launch}\n")
    shell = result.spec["launch"].get("shell") or result.spec["launch"].get("command")
    assert shell, result.spec
    assert (result.spec.get("environment") or {}).get("errexit", True) is errexit, result.spec


def test_a_rule_of_text_is_not_taken_for_the_program():
    """``==========`` after the program: a command not found, never the job's program."""
    result = imported("python3 run.py\n==========\n")
    assert "python3 run.py" in (result.spec["launch"].get("shell") or result.spec["launch"].get("command"))


@pytest.mark.parametrize("block", ["for f in in/*.dat; do\n  ./app \"$f\"\ndone\n", "for f in in/*.dat; do ./app \"$f\"; done\n"])
def test_a_line_writing_a_file_after_the_program_runs_after_it_in_the_launch(block):
    """``echo $SLURM_JOB_ID >> done.txt`` after the program is a marker a later run reads, not a
    report: after a block of one line or several, it joins the launch's shell block, in order."""
    result = imported(block + 'echo $SLURM_JOB_ID >> "$HOME/completed"\n')
    assert result.spec["launch"]["shell"].endswith('\necho $SLURM_JOB_ID >> "$HOME/completed"'), result.spec
    assert not notes(result, "to do") and not notes(result, "dropped")


@pytest.mark.parametrize("line", ['echo "done > all"', "echo done >&2", "date > /dev/null"])
def test_a_line_that_only_prints_after_the_program_is_dropped(line):
    result = imported(f"./app\n{line}\n")
    assert result.spec["launch"] == {"command": "./app"}
    assert any("only to report" in reason for reason in notes(result, "dropped"))


def test_parallel_with_a_variable_before_its_command_is_the_launch():
    """``parallel ... CUDA_VISIBLE_DEVICES='{=...=}' python ...``: GNU Parallel runs its command in
    a shell, so the quoted assignment is that command's variable, and the line is the job's program."""
    result = imported("srun parallel -j4 CUDA_VISIBLE_DEVICES='{=1 $_=$arg[1]%4 =}' python -u b.py {} ::: $(seq 0 3)\n")
    assert "python -u b.py" in result.spec["launch"].get("shell", "")
    assert not any("no command to run" in reason for reason in notes(result, "to do"))


def test_an_exit_with_the_programs_saved_status_after_it_stays_in_the_launch():
    """``prog; status=$?; ...; exit $status``: dropping the exit would end the job with the last
    line's 0, a failed program reported as done."""
    result = imported("python3 run.py\nstatus=$?\necho done >> summary.txt\nexit $status\n")
    assert result.spec["launch"]["shell"].endswith("\nexit $status"), result.spec["launch"]
    plain = imported("python3 run.py\nexit\n")
    assert plain.spec["launch"] == {"command": "python3 run.py"}


@pytest.mark.parametrize("tail", ["&& touch DONE.flag", "; touch DONE.flag"])
def test_a_chain_after_srun_of_several_tasks_runs_once_or_is_a_to_do(tail):
    """``srun ./app && touch DONE``: the script touched it once, after every task. The batch
    shell runs the line as written (launcher direct) where srun or mpirun needs no option of
    slurmkit's; where mpirun must bind several cores a rank, each rank would touch it: a to-do."""
    once = imported(f"#SBATCH --ntasks=16\nsrun ./heat2d {tail}\n")
    assert once.spec["kind"] == "mpi" and once.spec["launch"] == {"launcher": "direct", "shell": f"srun ./heat2d {tail}"}
    assert not notes(once, "to do"), once.notes
    result = imported(f"#SBATCH --ntasks=16 --cpus-per-task=4\nmodule load intelmpi\nmpirun ./heat2d {tail}\n")
    assert any("once, after all of mpirun's tasks ended" in reason for reason in notes(result, "to do")), result.notes
    bound = imported(f"#SBATCH --ntasks=16 --cpus-per-task=4\nmpirun ./heat2d {tail}\n")   # Open MPI: told its binding
    assert bound.spec["launch"]["shell"].startswith("mpirun --bind-to core") and not notes(bound, "to do")


@pytest.mark.parametrize("line, todo", [("python -m torch.distributed.launch --nproc_per_node=4 train.py", True),
                                        ("python -m torch.distributed.launch --use_env --nproc_per_node=4 train.py", False),
                                        ("torchrun --nproc_per_node=4 train.py", False)])
def test_torch_distributed_launch_passed_a_local_rank_argument_that_torchrun_does_not(line, todo):
    result = imported(f"#SBATCH --nodes=1 --gres=gpu:4 --cpus-per-task=16\n{line}\n", profile="beluga")
    assert any("--local-rank=N" in reason for reason in notes(result, "to do")) is todo


def test_the_program_srun_starts_is_the_job_before_serial_post_processing():
    """OpenFOAM: decomposePar; srun simpleFoam -parallel; reconstructPar: the job's 32 tasks are
    the solver's, not a single reconstructPar's (which would leave the solver in setup, on 1 task)."""
    result = imported("#SBATCH --ntasks=32\nmodule load openfoam\ndecomposePar -force\nsrun simpleFoam -parallel\n"
                      "reconstructPar -latestTime\n")
    assert result.spec["kind"] == "mpi" and result.spec["resources"]["tasks_per_node"] == 32
    assert result.spec["launch"] == {"launcher": "direct", "shell": "srun simpleFoam -parallel\nreconstructPar -latestTime"}
    assert not notes(result, "to do"), result.notes   # reconstructPar runs once, after the solver's tasks, as in the script


def test_workers_srun_starts_in_the_background_leave_the_driver_the_program():
    result = imported("srun -N1 -n1 ray start --head --block &\nsleep 10\npython drive.py\n")
    assert result.spec["launch"].get("command") == "python drive.py", result.spec["launch"]


@pytest.mark.parametrize("loop", ['while read -r f; do\n    gzip -9 "$f"\ndone < list.txt\n', 'for f in *.fa; do gzip -9 "$f"; done\n'])
def test_a_loop_of_commands_that_elsewhere_set_up_is_the_jobs_work(loop):
    """No program anywhere: the loop that compresses the files is the job, not `true` with the loop in setup."""
    result = imported("module load StdEnv\n" + loop + "echo finished\n")
    assert "gzip -9" in result.spec["launch"].get("shell", ""), result.spec
    assert not any("no command to run" in reason for reason in notes(result, "to do"))


def test_a_parallel_template_of_one_quoted_word_becomes_the_tasks_command():
    result = imported('#SBATCH -c 8\nparallel -j 8 "samtools sort -o sorted/{/.}.bam {}" :::: bams.txt\n')
    assert result.spec["kind"] == "many-tasks" and result.spec["launch"]["command"].startswith("samtools sort -o ")


@pytest.mark.parametrize("directive, outcome", [("-D ./", "dropped"), ("--chdir=.", "dropped"), ("-D /scratch/run", "mapped"),
                                                ("--chdir=$SCRATCH/run", "to do")])
def test_chdir_in_its_short_form_is_read_as_the_long_one(directive, outcome):
    result = imported(f"#SBATCH {directive}\n./app\n")
    said = [n for n in result.notes if directive in n.text]
    assert said and said[0].outcome == outcome and "is not an option" not in said[0].reason, said


def test_orca_started_alone_keeps_its_tasks_for_its_own_mpirun():
    """The ORCA page runs $EBROOTORCA/orca with --ntasks=8 and no srun: ORCA starts its own mpirun
    over the tasks; one task of 8 cores (kind threaded) would give it one slot."""
    result = imported("#SBATCH --ntasks=8\nmodule load orca/5.0.1\n$EBROOTORCA/orca job.inp > job.out\n")
    assert result.spec["kind"] == "mpi" and result.spec["resources"]["tasks_per_node"] == 8
    assert result.spec["launch"]["launcher"] == "direct"
    assert any("starts its own MPI processes" in reason for reason in notes(result, "mapped"))


def test_a_job_that_resubmits_itself_passes_its_own_name_to_the_launch_line():
    """``sbatch "$0"``: a line run by ``bash -c`` has $0 ``bash``; the script's own $0 (the copy
    SLURM runs, now the rendered one) must reach it, and the job is not told to import another."""
    result = imported('python train.py --resume ckpt/\nif [ ! -f ckpt/FINISHED ]; then\n    sbatch "$0"\nfi\n')
    assert not [n for n in notes(result, "to do") if "submits a job" in n], result.notes
    script = Job(**{**result.spec, "profile": "fir", "account": "def-x"}).render()
    assert script.rstrip().endswith('fi" "$0" "$@"'), script[-300:]


def test_srun_multi_prog_keeps_its_file_of_programs():
    """``srun --multi-prog tasks.conf``: without the option srun would run the file itself."""
    result = imported("#SBATCH --ntasks=4\nsrun --multi-prog tasks.conf\n")
    assert result.spec["kind"] == "mpi" and result.spec["resources"]["tasks_per_node"] == 4
    assert result.spec["launch"] == {"launcher": "direct", "shell": "srun --multi-prog tasks.conf"}
    assert not notes(result, "to do"), result.notes


def test_a_job_that_submits_the_next_stage_is_told_to_port_that_script_too():
    """``sbatch --dependency=afterok:$SLURM_JOB_ID stage2.sh`` in a job: the script it submits is
    stage2.sh (not the option), and this one is a job too, so not "import that, not this one"."""
    result = imported("python stage1.py\nsbatch --dependency=afterok:$SLURM_JOB_ID stage2.sh\n")
    [todo] = [n for n in notes(result, "to do") if "submits" in n]
    assert "this job also submits stage2.sh: import and port that script too" in todo and "not this one" not in todo
    wrapper = import_script("#!/bin/bash\nsbatch -d afterok:1 --parsable stage2.sh\n", name="w", profile="narval")
    assert any("import the job script it submits (stage2.sh), not this one" in n.reason for n in wrapper.unmapped)


def test_job_steps_the_launch_starts_itself_keep_the_jobs_tasks():
    """``srun -n1 -c4 ./sim A &`` twice and a wait, on --ntasks=2 -c 4: the steps are placed on
    the job's tasks, which the job keeps (launcher direct), not one task of 8 cores."""
    result = imported("#SBATCH --ntasks=2 --cpus-per-task=4\nsrun -n1 -c4 --exclusive ./sim A > A.log &\n"
                      "srun -n1 -c4 --exclusive ./sim B > B.log &\nwait\n")
    assert result.spec["kind"] == "mpi" and result.spec["launch"]["launcher"] == "direct"
    assert (result.spec["resources"]["tasks_per_node"], result.spec["resources"]["cpus_per_task"]) == (2, 4)
    assert not notes(result, "to do"), result.notes


def test_a_serial_step_after_a_hybrid_srun_keeps_the_tasks_cores():
    """srun of 8-core tasks, then ./post once: the batch shell runs both, and srun is told the
    cores again (since Slurm 22.05 it does not read the job's --cpus-per-task)."""
    result = imported("#SBATCH --nodes=2 --ntasks-per-node=4 --cpus-per-task=8\nsrun ./hybrid in.dat > run.log\n./post run.log\n")
    assert result.spec["launch"] == {"launcher": "direct",
                                     "shell": 'srun --cpus-per-task="$SLURM_CPUS_PER_TASK" ./hybrid in.dat > run.log\n./post run.log'}
    assert (result.spec["kind"], result.spec["resources"]["cpus_per_task"]) == ("mpi", 8)


@pytest.mark.parametrize("export, variables, todo", [
    ("--export=ALL,MODEL_CFG=run.cfg,SEED=3", {"MODEL_CFG": "run.cfg", "SEED": "3"}, False),
    ("--export=NONE", None, True), ("--export=ALL", None, False)])
def test_srun_export_of_variables_becomes_environment_variables(export, variables, todo):
    """``srun --export=ALL,VAR=x``: VAR reached every task; dropped with the option, it was unset there."""
    result = imported(f"#SBATCH --ntasks=4\nsrun {export} ./model\n")
    assert result.spec.get("environment", {}).get("variables") == variables
    assert any("part of the job's environment" in n for n in notes(result, "to do")) is todo


def test_a_program_that_reads_the_task_count_itself_keeps_the_tasks():
    """``multiprocessing.Pool(int(os.environ["SLURM_NTASKS"]))`` in a here-document: as one
    process of kind threaded it would read 1; the job keeps its 40 tasks (launcher direct)."""
    result = imported("#SBATCH --nodes=1 --ntasks-per-node=40\npython - <<'PY'\nimport os, multiprocessing as m\n"
                      "m.Pool(int(os.environ[\"SLURM_NTASKS\"]))\nPY\n")
    assert (result.spec["kind"], result.spec["launch"]["launcher"], result.spec["resources"]["tasks_per_node"]) == ("mpi", "direct", 40)
    shell = imported("#SBATCH --nodes=1 --ntasks-per-node=40\npython prog.py -n $SLURM_NTASKS\n")
    assert shell.spec["kind"] == "threaded"   # the shell's $SLURM_NTASKS is rewritten to the cores


def test_one_tee_for_all_the_tasks_stays_one_in_the_batch_shell():
    """``srun ./app 2>&1 | tee app.log`` on 8 one-core tasks: the batch shell runs the line as
    written, so app.log is still written, once; under mpirun of several cores a rank the tee
    is dropped (the job's log has every task's output), as before."""
    once = imported("#SBATCH --ntasks=8\nsrun ./app 2>&1 | tee app.log\n")
    assert once.spec["launch"] == {"launcher": "direct", "shell": "srun ./app 2>&1 | tee app.log"}
    bound = imported("#SBATCH --ntasks=8 --cpus-per-task=2\nmodule load intelmpi\nmpirun ./app 2>&1 | tee app.log\n")
    assert bound.spec["launch"] == {"launcher": "mpirun", "command": "./app"}
    told = imported("#SBATCH --ntasks=8 --cpus-per-task=2\nmpirun ./app 2>&1 | tee app.log\n")   # Open MPI's binding given
    assert told.spec["launch"]["shell"].endswith(" ./app 2>&1 | tee app.log")


def test_an_sbatch_inside_a_command_substitution_is_a_submission_too():
    """``job=$(sbatch --array=0-$((N - 1)) process.sh)``: the job it submits is named, as a
    plain ``sbatch process.sh`` line's is."""
    result = imported("N=$(python count.py)\njob=$(sbatch --array=0-$((N - 1)) process.sh)\necho \"submitted $job\"\n")
    assert any("(process.sh)" in n for n in notes(result, "to do")), result.notes


@pytest.mark.parametrize("clean", ["rm $SLURM_TMPDIR/part.txt", 'for (( c=0; c<5; c++ ))\ndo\n  rm "$SLURM_TMPDIR/part_$c.txt"\ndone'])
def test_removing_scratch_files_after_the_program_is_dropped_and_verifies_equal(clean):
    """A clean-up of $SLURM_TMPDIR after the program, a line or a loop: the job's end removes it
    anyway; the trace's rm of what the stand-in programs never wrote does not fail the old script."""
    from slurmkit.port.verify import verified_import

    script = HEAD + f"module load python/3.12\npython gen.py --out $SLURM_TMPDIR\npython combine.py $SLURM_TMPDIR results.csv\n{clean}\n"
    result, verification = verified_import(script, import_script(script, name="job", profile="narval"), "narval")
    assert not notes(result, "to do"), result.notes
    assert verification.todos() == ()


@pytest.mark.parametrize("line, field", [("tar -cf /nearline/def-x/me/run42.tar run42 && rm -rf run42", "shell"),
                                         ("zcat reads.tsv.gz | sort -k1,1 | gzip > sorted.tsv.gz", "shell"),
                                         ("rsync -a results/ /project/def-x/me/results/", "command")])
def test_a_job_of_only_standard_tools_launches_its_last_line_of_them(line, field):
    """A data mover or a sort pipeline is the job's work: in setup under ``set +e`` with a
    launch of ``true``, a tar that failed would end the job COMPLETED with status 0."""
    result = imported("#SBATCH --mem=2G\nmodule load StdEnv/2023\nmkdir -p results\n" + line + "\necho finished\n")
    assert result.spec["launch"] == {field: line}, result.spec
    assert not any("no command to run" in reason for reason in notes(result, "to do"))
    assert any("its last line of standard tools is its work" in reason for reason in notes(result, "note"))


def test_a_stage_in_or_a_copy_back_alone_is_no_jobs_work():
    """The tools that move files into and out of $SLURM_TMPDIR serve a program; with none, the job
    still has nothing to run, and says so."""
    result = imported("cp $HOME/data.tar $SLURM_TMPDIR/\ncp -r $SLURM_TMPDIR/out $HOME/results/\n")
    assert result.spec["launch"] == {"command": "true"}
    assert any("no command to run" in reason for reason in notes(result, "to do"))


@pytest.mark.parametrize("body", ["python -m torch.distributed.launch --nproc_per_node=1 train.py --batch_size 2\npython evaluate.py\n",
                                  "python -m torch.distributed.launch --nproc_per_node=2 train.py\n"])
def test_torch_distributed_launch_kept_as_written_says_its_argument_changed_spelling(body):
    """Kept as written (a run before the program; a count of its own on 4 GPUs), the launcher
    still passes the local rank as an argument, --local_rank under PyTorch 1.x and --local-rank
    from 2.0, which a rebuilt venv gets: a parser that names one spelling stops every process."""
    result = imported("#SBATCH --gres=gpu:4 --cpus-per-task=16\nmodule load python/3.6.3\n" + body, profile="cedar")
    assert "torch.distributed.launch" in result.spec["launch"]["shell"], result.spec["launch"]
    todos = [n for n in result.notes if n.outcome == "to do" and "--local-rank" in n.reason]
    assert len(todos) == 1 and "kept as written" in todos[0].reason and todos[0].line == 5
    with_env = imported("#SBATCH --gres=gpu:4 --cpus-per-task=16\n" + body.replace("launch ", "launch --use_env ", 1), profile="cedar")
    assert not any("--local-rank" in reason for reason in notes(with_env, "to do"))


def test_cpus_per_gpu_becomes_the_cores_of_a_task():
    """Left out, the job would get the site's cores per GPU (12 on Fir) where it asked 6."""
    one = imported("#SBATCH --gpus-per-node=a100:1 --cpus-per-gpu=6 --mem-per-gpu=20G\npython train.py\n")
    assert one.spec["resources"]["cpus_per_task"] == 6 and not _left(one), one.notes
    two_each = imported("#SBATCH --gpus-per-node=a100:4 --ntasks-per-node=2 --cpus-per-gpu=6\nsrun python train.py\n")
    assert two_each.spec["resources"]["cpus_per_task"] == 12
    both = imported("#SBATCH --gpus-per-node=a100:1 --cpus-per-gpu=6 --cpus-per-task=4\npython train.py\n")
    assert both.spec["resources"]["cpus_per_task"] == 4
    assert any("--cpus-per-gpu=6" in reason for reason in notes(both, "to do"))


@pytest.mark.parametrize("line", ["deepspeed --num_gpus=4 train.py --deepspeed ds.json",
                                  "torchrun --standalone --nproc_per_node=2 train.py"])
def test_a_command_that_starts_its_own_processes_is_not_told_it_uses_one_gpu(line):
    """deepspeed starts one process a GPU itself: kind gpu's "runs one process, which uses one
    of the 4 GPUs; use kind multigpu" would have each of 4 tasks start 4 (16 ranks on 4 GPUs)."""
    job = Job(name="d", profile="narval", account="def-x", kind="gpu", resources={"time": "1h", "gpus": "a100:4"}, launch=line)
    assert not [f for f in job.resolve().warnings if "runs one process" in f.message]
    alone = Job(name="d", profile="narval", account="def-x", kind="gpu", resources={"time": "1h", "gpus": "a100:4"},
                launch="python train.py")
    assert [f for f in alone.resolve().warnings if "runs one process" in f.message]


@pytest.mark.parametrize("made", ['declare -a CMDS\nCMDS[0]="./step one"\nCMDS[1]="./step two"\n',
                                  'CMDS=()\nfor n in one two; do CMDS+=("./step $n"); done\n',
                                  'mapfile -t CMDS < steps.txt\n', 'read -ra CMDS <<< "$STEPS"\n',
                                  'while read -r line; do CMDS[$i]=$line; i=$((i+1)); done < steps.txt\n'])
def test_an_array_made_element_by_element_runs_at_the_head_of_the_launch(made):
    """bash exports no array: made in setup and read by launch.shell's own bash, the loop would
    run nothing and end 0. Every way of making or filling one moves with it, in order."""
    result = imported(made + 'for c in "${CMDS[@]}"; do $c; done\n')
    shell = result.spec["launch"]["shell"]
    assert shell.startswith(made.rstrip("\n").split("\n")[0]) and shell.endswith('for c in "${CMDS[@]}" ; do $c; done'), shell
    assert not any("CMDS" in line for line in result.spec.get("environment", {}).get("setup", [])), result.spec


@pytest.mark.parametrize("line, tasks", [("srun -n 1 -N 1 ./driver", "--nodes=2 --ntasks-per-node=1"),
                                         ("srun -n 4 ./app", "--ntasks=8"), ("srun --nodes=1 ./app", "--nodes=2 --ntasks-per-node=4")])
def test_a_step_of_fewer_tasks_or_nodes_than_the_job_is_kept_as_written(line, tasks):
    """slurmkit's srun starts one a task of the job: a step sized by the script (a Spark driver
    beside its worker step) would start as many drivers as the job has tasks."""
    result = imported(f"#SBATCH {tasks}\n{line}\nkill $wpid\n")
    assert result.spec["launch"] == {"launcher": "direct", "shell": f"{line}\nkill $wpid"}, result.spec["launch"]
    assert not notes(result, "to do"), result.notes
    whole = imported("#SBATCH --ntasks=8\nsrun -n 8 ./app\n")
    assert whole.spec["launch"] == {"launcher": "srun", "command": "./app"}


@pytest.mark.parametrize("wait", ["wait", "wait $wpid"])
def test_a_background_step_the_script_waits_for_after_the_program_joins_the_launch(wait):
    """``worker & wpid=$!; driver; wait $wpid``: left in setup, the worker is the batch shell's
    child, which the launch's own bash cannot wait for ("not a child of this shell"), and the
    job would end before it: the launch runs from the background start to the wait."""
    result = imported(f"#SBATCH --ntasks=2\nmodule load StdEnv/2023\nsrun -n 1 ./worker &\nwpid=$!\nsrun -n 1 ./driver\n{wait}\n")
    assert result.spec["launch"]["shell"] == f"srun -n 1 ./worker &\nwpid=$!\nsrun -n 1 ./driver\n{wait}", result.spec["launch"]
    assert not notes(result, "to do") and not notes(result, "dropped"), result.notes


@pytest.mark.parametrize("setup, line", [("slurm_hl2hl.py --format STAR-CCM+ > $SLURM_TMPDIR/machinefile\n",
                                          "starccm+ -batch -np 96 -machinefile $SLURM_TMPDIR/machinefile sim.sim"),
                                         ("scontrol show hostnames > hosts.txt\n", "fluent 3ddp -g -t96 -cnf=hosts.txt -i run.jou"),
                                         ("", "./code --hostfile=$HOME/hosts -np 96")])
def test_a_program_given_the_jobs_hosts_starts_its_own_processes_there(setup, line):
    """STAR-CCM+ given a machinefile (Fluent a -cnf=, a code a --hostfile) starts its processes
    on every host in it: no "the other nodes stand idle; set launcher srun (96 copies)" to-do."""
    result = imported("#SBATCH --nodes=2 --ntasks-per-node=48 --mem=0\n" + setup + line + "\n")
    assert result.spec["launch"]["launcher"] == "direct" and not notes(result, "to do"), result.notes
    assert any("the job's hosts" in reason for reason in notes(result, "mapped"))


def test_the_time_keyword_before_the_program_stays_bashs_keyword():
    """``time python run.py``: as the first word of slurmkit's command, time would be
    /usr/bin/time (quoted, no keyword), which a node may lack: the job would end 127."""
    result = imported("time python run.py --n 1\n")
    assert result.spec["launch"] == {"shell": "time python run.py --n 1"}, result.spec["launch"]
    assert any("bash's time keyword" in reason for reason in notes(result, "mapped"))


@pytest.mark.parametrize("cd, tasks", [("cd ~/scratch/videos\n", "$HOME/scratch/videos/list.txt"), ("cd work\n", "work/list.txt"),
                                       ("", "list.txt")])
def test_gnu_parallels_task_file_is_read_from_the_folder_a_cd_chose(cd, tasks):
    """``cd ~/scratch/videos; parallel ... :::: list.txt`` read the list there; the spec's task
    file is relative to the spec's folder, so it names the folder the cd chose."""
    result = imported("#SBATCH -c 4\n" + cd + "parallel -j 4 ./extract.sh {} :::: list.txt\n")
    assert result.spec["kind"] == "many-tasks" and result.spec["tasks"] == {"arguments": tasks}, result.spec
    unknown = imported("#SBATCH -c 4\ncd $(cat where.txt)\nparallel -j 4 ./extract.sh {} :::: list.txt\n")
    assert "tasks" not in unknown.spec and "parallel -j 4" in str(unknown.spec["launch"]), unknown.spec


def test_a_bad_substitution_that_ended_the_old_job_is_a_to_do_at_its_line():
    """``${$SLURM_ARRAY_TASK_ID}``: bash stopped the old job there; the new one would go on."""
    result = imported("#SBATCH --array=1-2\n./prep\n./run --out ${SLURM_TMPDIR}/${$SLURM_ARRAY_TASK_ID}\n# ${$X} in a comment\n")
    todos = [n for n in result.notes if n.outcome == "to do" and "bad substitution" in n.reason]
    assert [(n.line, n.text) for n in todos] == [(5, "${$SLURM_ARRAY_TASK_ID}")]
    assert "write ${SLURM_ARRAY_TASK_ID}" in todos[0].reason
