"""slurmkit import: sbatch scripts in every spelling into specs, and a note for every line."""

import pytest

from slurmkit import Job
from slurmkit.core.units import parse_duration, parse_size
from slurmkit.port.porting import Note, import_script
from slurmkit.spec.spec import spec_from_mapping

ALLIANCE_DDP = """#!/bin/bash
#SBATCH --nodes 1
#SBATCH --gres=gpu:2          # 2 GPUs per node
#SBATCH --tasks-per-node=2    # 1 process per GPU
#SBATCH --mem=8G
#SBATCH --time=0-03:00
#SBATCH --output=%N-%j.out
module load python
srun -N $SLURM_NNODES -n $SLURM_NNODES bash << EOF
virtualenv --no-download $SLURM_TMPDIR/env
source $SLURM_TMPDIR/env/bin/activate
pip install torch torchvision --no-index
EOF
export TORCH_NCCL_ASYNC_HANDLING=1
source $SLURM_TMPDIR/env/bin/activate
srun python pytorch-ddp-test.py --batch_size 256
"""


def _left(imported):
    """What import left to do but the question where the program's python comes from (a script
    that runs a python it never loads: tested in test_import_launch)."""
    return tuple(n for n in imported.unmapped if n.text != "environment.venv")


def test_the_alliance_ddp_recipe_imports_with_its_venv_and_launch():
    imported = import_script(ALLIANCE_DDP, name="ddp", profile="nibi")
    spec = imported.spec
    assert spec["resources"] == {"nodes": 1, "gpus": "2", "tasks_per_node": 2, "mem": "8G", "time": "0-03:00"}
    # The recipe's TORCH_NCCL_ASYNC_HANDLING is a typo PyTorch never reads: dropped, with a note.
    assert spec["environment"] == {"modules": ["python"], "venv": {"packages": ["torch", "torchvision"]}}
    assert spec["launch"] == {"command": "python pytorch-ddp-test.py --batch_size 256", "launcher": "srun"}
    assert spec["kind"] == "mpi" and imported.unmapped == ()
    assert [n.outcome for n in imported.notes if n.line == 7] == ["mapped"] and spec["logs"] == {"output": "%N-%j.out"}
    spec_from_mapping(spec)  # a valid spec


@pytest.mark.parametrize("directives, expected", [
    ("#SBATCH --mem=4G\n#SBATCH -t 3:00:00\n", {"mem": "4G", "time": "3:00:00"}),
    ("#SBATCH --mem 4G\n#SBATCH --time 90\n", {"mem": "4G", "time": "90"}),
    ("#SBATCH -N2 -n 8 -c 4\n", {"nodes": 2, "cpus_per_task": 4, "tasks_per_node": 4, "time": "1h"}),
    ("#SBATCH --gres=gpu:v100l:2\n", {"gpus": "v100l:2", "time": "1h"}),
    ("#SBATCH --gpus-per-node=h100:4\n", {"gpus": "h100:4", "time": "1h"}),
    ("#SBATCH -N 2 --gpus=a100:8\n", {"nodes": 2, "gpus": "a100:4", "time": "1h"}),
])
def test_directives_in_every_spelling(directives, expected):
    spec = import_script("#!/bin/bash\n" + directives + "python a.py\n").spec
    assert spec["resources"] == expected


def test_lines_without_a_spec_field_are_kept_as_written_in_setup_each_with_a_note():
    imported = import_script("#!/bin/bash\n#SBATCH -t 10\ncd /somewhere\nexport X=$(date)\necho first\npython a.py\n")
    assert imported.spec["environment"]["setup"] == ["cd /somewhere", "export X=$(date)", "echo first"]
    assert {n.line: n.outcome for n in imported.notes if n.line in (3, 4, 5)} == {3: "kept", 4: "kept", 5: "kept"}
    assert "computed by the shell" in [n.reason for n in imported.notes if n.line == 4][0]
    assert imported.spec["launch"] == {"command": "python a.py"} and _left(imported) == ()


def test_an_array_becomes_a_task_id_parameter_and_staging_is_recognised():
    script = ("#!/bin/bash\n#SBATCH --array=1-5:2%2 -t 1:00:00\ntar -xf data.tar.gz -C $SLURM_TMPDIR\n"
              "python run.py --case $SLURM_ARRAY_TASK_ID\ncp -r $SLURM_TMPDIR/out /scratch/me/out\n")
    spec = import_script(script).spec
    assert spec["array"] == {"parameters": {"task_id": ["1", "3", "5"]}, "throttle": 2, "indices": "1-5:2"}   # SLURM's own ids
    assert spec["launch"]["command"] == "python run.py --case $SLURM_ARRAY_TASK_ID"   # the same ids, so kept
    assert spec["stage"] == {"inputs": ["data.tar.gz"], "outputs": [{"from": "out", "to": "/scratch/me/out"}]}


def _resources(spec):
    res = spec["resources"]
    return {k: (parse_duration(v) if k == "time" else parse_size(v) if k in ("mem", "mem_per_cpu") else v) for k, v in res.items()}


@pytest.mark.parametrize("script", [
    ALLIANCE_DDP,
    "#!/bin/bash\n#SBATCH -A def-x -N 2 --ntasks-per-node=4 -c 2 --mem-per-cpu=1000M -t 2-00:00\nmodule load openmpi\nsrun ./app\n",
    "#!/bin/bash\n#SBATCH --gpus-per-node=h100:1 --cpus-per-task=8 --mem=32G --time=12:00:00\npython train.py\n",
    "ALLIANCE_TF_MULTIWORKER", "SHARCNET_COURSE", "ALLIANCE_ML_TUTORIAL",   # the doc and course scripts of test_retarget
])
def test_import_render_import_keeps_the_meaning_of_the_directives(script):
    profile = "nibi"
    if not script.startswith("#!"):   # written for the clusters of their day
        from . import test_retarget

        script, profile = getattr(test_retarget, script), "graham"
    first = import_script(script, name="rt", profile=profile).spec
    first.setdefault("account", "def-x")
    job = Job(**first)
    rendered = job.render()
    second = import_script(rendered, name="rt", profile=profile).spec
    assert _resources(second) == {**_filled_in(job), **_resources(first)}


def _filled_in(job) -> dict:
    """What the resolver decides where a script said nothing: one node and one task; one CPU per
    task and SLURM's memory per core, except that a GPU job gets its GPUs' bundle of cores and
    memory (sizing.py), which the directives it rendered show."""
    directives = dict(job.resolve().plan.directives)
    filled = {"nodes": 1, "tasks_per_node": 1, "cpus_per_task": 1}
    if job.spec.resources.gpus:
        filled["cpus_per_task"] = int(directives["--cpus-per-task"])
        if "--mem" in directives:
            filled["mem"] = parse_size(directives["--mem"])
    return filled


# ------------------------------------------------------------- patterns of scripts written by hand


def test_mail_type_without_a_user_imports_and_mails_the_registered_address():
    imported = import_script("#!/bin/bash\n#SBATCH -A def-x -t 1:00:00 --mail-type=FAIL,END\npython a.py\n", profile="nibi")
    assert imported.spec["mail"] == {"events": ["FAIL", "END"]}
    script = Job(**imported.spec).render()
    assert "#SBATCH --mail-type=FAIL,END\n" in script and "--mail-user" not in script


@pytest.mark.parametrize("order", ["type first", "user first", "same line"])
def test_mail_type_says_no_mail_user_only_when_no_line_gives_one(order):
    """Every #SBATCH line is read before import concludes that there is no --mail-user."""
    lines = {"type first": "#SBATCH --mail-type=END\n#SBATCH --mail-user=me@example.org\n",
             "user first": "#SBATCH --mail-user=me@example.org\n#SBATCH --mail-type=END\n",
             "same line": "#SBATCH --mail-type=END --mail-user=me@example.org\n"}[order]
    imported = import_script("#!/bin/bash\n#SBATCH -A def-x -t 1:00:00\n" + lines + "python a.py\n", profile="nibi")
    assert imported.spec["mail"] == {"events": ["END"], "user": "me@example.org"}
    assert not [n for n in imported.notes if "no --mail-user" in (n.reason or "")]
    alone = import_script("#!/bin/bash\n#SBATCH -A def-x -t 1:00:00 --mail-type=END\npython a.py\n", profile="nibi")
    assert [n for n in alone.notes if "no --mail-user" in (n.reason or "")]


@pytest.mark.parametrize("line, path", [
    ("source ~/envs/x/bin/activate", "$HOME/envs/x"), ("source $HOME/envs/x/bin/activate", "$HOME/envs/x"),
    (". /project/def-x/venv/bin/activate", "/project/def-x/venv"),
])
def test_an_existing_virtualenv_is_used_by_its_path_not_replaced_by_an_empty_one(line, path):
    imported = import_script(f"#!/bin/bash\n#SBATCH -A def-x -t 1:00:00\n{line}\npython a.py\n", profile="nibi")
    assert imported.spec["environment"]["venv"] == {"path": path}
    script = Job(**imported.spec).render()
    assert "if [ ! -x " in script and "~" not in script.split("set -euo pipefail")[1]


@pytest.mark.parametrize("line, shell", [
    ("python train.py > log.txt", "python train.py > log.txt"),
    ("srun python train.py 2>&1 | tee train.log", "python train.py 2>&1 | tee train.log"),
    ("python a.py --n $(nproc)", "python a.py --n $(nproc)"),
    ("python a.py data/*.csv", "python a.py data/*.csv"),
    ('python a.py "$1" $2', 'python a.py "$1" $2'),   # the script's arguments: bash expands them, a command would not
    ('srun ./app "$@"', './app "$@"'),
])
def test_a_launch_line_with_shell_in_it_becomes_a_shell_line_never_literal_arguments(line, shell):
    imported = import_script(f"#!/bin/bash\n#SBATCH -t 1:00:00\n{line}\n")
    assert imported.spec["launch"]["shell"] == shell and "command" not in imported.spec["launch"]
    spec_from_mapping(imported.spec)


def test_the_hand_made_ddp_pattern_becomes_kind_ddp_with_slurmkits_rendezvous():
    script = ("#!/bin/bash\n#SBATCH -N 2 --gres=gpu:v100:2 --ntasks-per-node=2 -t 1:00:00\nexport MASTER_ADDR=$(hostname)\n"
              "srun python train.py --init_method tcp://$MASTER_ADDR:3456 --world_size $((SLURM_NTASKS_PER_NODE * SLURM_JOB_NUM_NODES))\n")
    imported = import_script(script, profile="graham")
    spec = imported.spec
    assert spec["kind"] == "ddp" and "tasks_per_node" not in spec["resources"] and "environment" not in spec
    assert spec["launch"]["shell"] == "python train.py --init_method tcp://$MASTER_ADDR:$MASTER_PORT --world_size $WORLD_SIZE"
    assert [n.outcome for n in imported.notes if n.line == 3] == ["dropped"]
    assert Job(**dict(spec, account="def-x")).resolve().errors == ()


@pytest.mark.parametrize("line", ["mpirun -np 4 python train_horovod.py", "horovodrun -np 4 -H localhost:4 python train.py",
                                  "srun python hvd_train.py"])
def test_horovod_scripts_become_kind_horovod(line):
    imported = import_script(f"#!/bin/bash\n#SBATCH --gres=gpu:4 --ntasks-per-node=4 -t 1:00:00\n{line}\n")
    assert imported.spec["kind"] == "horovod"


def test_a_trap_copy_back_becomes_a_stage_output_with_the_signals_lead():
    script = ("#!/bin/bash\n#SBATCH -t 2:00:00 --signal=B:USR1@300\n"
              "trap 'cp -r $SLURM_TMPDIR/out $HOME/res' USR1\npython a.py\n")
    stage = import_script(script).spec["stage"]
    assert stage == {"outputs": [{"from": "out", "to": "$HOME/res"}], "lead": "300s"}


def test_array_setup_lines_read_the_tasks_original_number():
    script = "#!/bin/bash\n#SBATCH --array=1-3 -t 10\nF=$(sed -n \"${SLURM_ARRAY_TASK_ID}p\" list.txt)\npython p.py \"$F\"\n"
    spec = import_script(script).spec
    assert spec["environment"]["setup"] == ['F=$(sed -n "${SLURM_ARRAY_TASK_ID}p" list.txt)']   # --array is the same
    assert spec["array"]["parameters"]["task_id"] == ["1", "2", "3"]


def test_conda_is_a_to_do_that_check_reports(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from slurmkit.cli.main import main

    script = tmp_path / "old.sh"
    script.write_text("#!/bin/bash\n#SBATCH -A def-x -t 1:00:00\nmodule load anaconda3\nconda activate myenv\npython a.py\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["import", str(script), "--profile", "nibi", "-o", "job.yaml"])
    assert result.exit_code == 0, result.output
    assert "to do: " in result.stderr and "does not support conda" in result.stderr
    check = CliRunner().invoke(main, ["check", "job.yaml"])
    assert "no problems" not in check.output and "import: to do: line 4: conda activate myenv" in check.output
    done = "".join(line for line in (tmp_path / "job.yaml").read_text().splitlines(True) if not line.startswith("# to do"))
    (tmp_path / "job.yaml").write_text(done)
    assert "no problems found" in CliRunner().invoke(main, ["check", "job.yaml"]).output


def test_a_redirection_of_a_multi_task_launch_is_a_to_do_and_of_one_task_is_not():
    """Where the batch shell can run the launcher's line itself (one core a task), it does, as
    the script did; where slurmkit's mpirun must bind each rank's cores, each task redirects."""
    once = import_script("#!/bin/bash\n#SBATCH -n 4 -t 10\nsrun ./app > app.log\n")
    assert once.spec["launch"] == {"launcher": "direct", "shell": "srun ./app > app.log"} and once.unmapped == ()
    bound = import_script("#!/bin/bash\n#SBATCH -n 4 -c 2 -t 10\nmpirun ./app > app.log\n")   # Open MPI: told the binding
    binding = '--bind-to core --map-by slot:PE="$SLURM_CPUS_PER_TASK"'
    assert bound.spec["launch"] == {"launcher": "direct", "shell": f"mpirun {binding} ./app > app.log"}
    assert bound.unmapped == ()
    many = import_script("#!/bin/bash\n#SBATCH -n 4 -c 2 -t 10\nmodule load intelmpi\nmpirun ./app > app.log\n")
    assert many.spec["launch"] == {"launcher": "mpirun", "shell": "./app > app.log"}
    assert [n.text for n in many.unmapped] == [">"] and "$SLURM_PROCID" in many.unmapped[0].reason
    assert import_script("#!/bin/bash\n#SBATCH -n 1 -t 10\nsrun ./app > app.log\n").unmapped == ()
    assert import_script("#!/bin/bash\n#SBATCH -n 4 -t 10\nsrun ./app && echo ok\n").unmapped == ()


def test_gpus_per_task_becomes_gpus_per_node_and_an_unreadable_count_is_a_to_do_not_a_second_directive():
    spec = import_script("#!/bin/bash\n#SBATCH -N 2 --ntasks-per-node=4 --gpus-per-task=v100:1 -t 1:00:00\nsrun ./a\n").spec
    assert spec["resources"]["gpus"] == "v100:4"
    imported = import_script("#!/bin/bash\n#SBATCH --nodes=1-2 -t 10\nsrun ./a\n")
    assert "extra_directives" not in imported.spec and "--nodes itself" in imported.unmapped[0].reason


def test_a_function_with_its_brace_on_the_next_line_a_here_string_and_a_shift_are_not_blocks_that_swallow_the_script():
    script = ("#!/bin/bash\n#SBATCH -t 1:00:00 --signal=B:USR1@120\nsave()\n{\n    cp -r $SLURM_TMPDIR/out /home/me/out\n}\n"
              "trap save USR1\nx=$((1<<2))\ngrep a <<< \"$x\"\npython run.py\n")
    spec = import_script(script).spec
    assert spec["launch"] == {"command": "python run.py"}
    assert spec["environment"]["setup"] == ["x=$((1<<2))", 'grep a <<< "$x"']
    assert spec["stage"] == {"outputs": [{"from": "out", "to": "/home/me/out"}], "lead": "120s"}


@pytest.mark.parametrize("inside", [
    "    # if this fails, the next seed still runs",    # a comment that opens a block, were it code
    "    echo for each seed; echo until done",          # reserved words as arguments, not commands
    "    echo \"don't stop\" # while it runs",
    "    x=1 # case closed: done",
])
def test_words_of_a_block_that_are_not_commands_do_not_open_or_close_it(inside):
    """Tried on a real old script: the comment "# if this fails" in a loop opened a block that
    never closed, and the rest of the script, its payload too, became one setup line."""
    script = ("#!/bin/bash\n#SBATCH -t 1:00:00\nfor seed in 1 2 3; do\n"
              f"{inside}\n    python train.py --seed $seed\ndone\npython summarize.py\n")
    spec = import_script(script).spec   # the loop runs the program's command too: the launch runs from it to the end
    assert spec["launch"] == {"shell": f"for seed in 1 2 3; do\n{inside}\n    python train.py --seed $seed\ndone\npython summarize.py"}
    assert not spec.get("environment", {}).get("setup")


@pytest.mark.parametrize("block", [
    "if [ -f a ]; then echo a; fi",
    "while read x; do echo $x; done < list",
    "f() { echo a; }",
    "{ echo a; echo b; } > log",
    "case $x in a) echo a;; esac",
    "if true\nthen\n  for i in 1 2; do if [ $i = 1 ]; then echo $i; fi; done\nfi",
    "until false; do break; done",
])
def test_blocks_close_where_bash_closes_them(block):
    script = f"#!/bin/bash\n#SBATCH -t 1:00:00\n{block}\npython run.py\n"
    spec = import_script(script).spec
    assert spec["launch"] == {"command": "python run.py"}
    assert spec["environment"]["setup"] == [block]


def test_python_m_pip_fills_the_venv_export_of_several_names_is_kept_and_a_heredoc_file_is_not_a_venv_recipe():
    script = ("#!/bin/bash\n#SBATCH -t 1:00:00\nexport A=1 B=2\nexport C=$(date +%s)\n"
              "python -m pip install --no-index numpy==1.26 -r req.txt\ncat > cfg.ini <<EOF\n[a]\npip install nope\nEOF\npython run.py\n")
    env = import_script(script).spec["environment"]
    assert env["venv"] == {"requirements": "req.txt", "packages": ["numpy==1.26"]}
    assert env["setup"] == ["export A=1 B=2", "export C=$(date +%s)", "cat > cfg.ini <<EOF\n[a]\npip install nope\nEOF"]


@pytest.mark.parametrize("venv_line", ["pip install --no-index lightning", "pip install --no-index pytorch-lightning"])
def test_an_srun_python_script_using_lightning_becomes_kind_lightning(venv_line):
    script = ("#!/bin/bash\n#SBATCH --nodes=2 --gres=gpu:v100:2 --ntasks-per-node=2 -t 3:00:00\n#SBATCH --signal=SIGUSR1@90\n"
              f"{venv_line}\nsrun python train_lightning.py --epochs 5\n")
    imported = import_script(script, profile="graham")
    assert imported.spec["kind"] == "lightning", imported.spec
    assert imported.spec["launch"]["launcher"] == "srun"
    assert [(n.line, n.outcome) for n in imported.notes if "asks for the signal" in n.reason] == [(3, "dropped")]
    assert Job(**dict(imported.spec, account="def-x")).resolve().errors == ()


LIGHTNING_RECIPE = ("#!/bin/bash\n#SBATCH --account=def-x\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:4\n#SBATCH --ntasks-per-node=4\n"
                    "#SBATCH --time=0-12:00\n#SBATCH --signal=SIGUSR1@90\n#SBATCH --requeue\n#SBATCH --open-mode=append\n"
                    "srun python {program}\n")


def test_lightnings_own_requeue_lines_are_dropped_once_each_and_the_spec_passes_check():
    """An outside tester: the import kept --requeue beside kind lightning's own, which check then
    refused, and noted the --signal line twice (mapped to stage.lead, and dropped)."""
    imported = import_script(LIGHTNING_RECIPE.format(program="train.py --trainer.devices 4 --trainer.num_nodes 2"), profile="narval")
    assert imported.spec["kind"] == "lightning" and "extra_directives" not in imported.spec   # LightningCLI's --trainer.*
    assert [(n.line, n.outcome) for n in imported.notes if n.line in (7, 8, 9)] == [(7, "dropped"), (8, "dropped"), (9, "dropped")]
    assert Job(**imported.spec).resolve().errors == ()


def test_a_usr1_signal_without_a_copy_back_is_kept_for_the_program_not_dropped():
    """The program may save a checkpoint on USR1 itself: dropping the signal lost that silently."""
    imported = import_script(LIGHTNING_RECIPE.format(program="train.py"), profile="narval")
    assert imported.spec["extra_directives"] == ["--signal=SIGUSR1@90", "--requeue", "--open-mode=append"]
    (signal,) = [n for n in imported.notes if n.line == 7]
    assert signal.outcome == "mapped" and "may catch USR1 itself" in signal.reason
    assert signal.reason.endswith("if the program is Lightning, use kind lightning")
    job = Job(**imported.spec)
    assert job.resolve().errors == () and "#SBATCH --signal=SIGUSR1@90\n" in job.render(warn=False)


def test_lightning_asked_not_to_requeue_is_a_to_do():
    script = LIGHTNING_RECIPE.format(program="train_lightning.py").replace("--requeue", "--no-requeue")
    (todo,) = [n for n in import_script(script, profile="narval").unmapped if n.line == 8]
    assert "asked never to be requeued" in todo.reason


def test_one_lightning_process_that_starts_its_gpus_workers_becomes_one_task_per_gpu_sharing_the_cores():
    """An outside tester: `python train_lightning.py --devices 4` (no srun) kept 48 cores per task
    beside kind lightning's 4 tasks, 192 cores that check refused; its 120 s lead became 90."""
    script = ("#!/bin/bash\n#SBATCH --account=def-x\n#SBATCH --gpus-per-node=a100:4\n#SBATCH --cpus-per-task=48\n"
              "#SBATCH --mem=498G\n#SBATCH --time=1-00:00\n#SBATCH --signal=SIGUSR1@120\npython train_lightning.py --devices 4\n")
    imported = import_script(script, profile="narval")
    assert imported.spec["kind"] == "lightning" and imported.spec["resources"]["cpus_per_task"] == 12
    assert imported.spec["stage"] == {"lead": "120s"}
    job = Job(**imported.spec)
    assert job.resolve().errors == () and "#SBATCH --signal=B:USR1@120\n" in job.render(warn=False)


def test_one_lightning_process_that_asked_no_requeue_stays_a_plain_gpu_job():
    """Kind lightning saves and requeues at the limit: a one-process job that asked for neither
    ran to its limit and ended, and must not start running again after it."""
    script = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00 --gres=gpu:1 -c 4\npython train_lightning.py --max_epochs 9\n"
    assert import_script(script, profile="narval").spec["kind"] == "gpu"


def test_lightning_tasks_that_asked_no_requeue_are_told_the_kind_requeues():
    script = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00 --gres=gpu:2 --ntasks-per-node=2\nsrun python train_lightning.py\n"
    imported = import_script(script, profile="narval")
    (kind,) = [n for n in imported.notes if n.text == "kind: lightning"]
    assert imported.spec["kind"] == "lightning" and "requeues the job" in kind.reason
    recipe = import_script(LIGHTNING_RECIPE.format(program="train_lightning.py"), profile="narval")
    assert not any("requeues the job" in n.reason for n in recipe.notes if n.text == "kind: lightning")


# ------------------------------------------------------- what the script's variables hold (bashtree)

HEAD = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\n"


def test_a_staged_archive_named_through_a_variable_the_script_sets_once_is_staged_by_its_value():
    imported = import_script(HEAD + "NAME=run1\ntar -xf $HOME/data/$NAME.tar -C $SLURM_TMPDIR\n./sim $SLURM_TMPDIR/$NAME\n")
    assert imported.spec["stage"]["inputs"] == ["$HOME/data/run1.tar"]


def test_a_staged_archive_named_through_a_value_import_cannot_tell_runs_where_the_script_ran_it():
    """Staged in before environment.setup sets $NAME, it would be unbound: it stays in order."""
    imported = import_script(HEAD + "NAME=$(date +%F)\ntar -xf $HOME/data/$NAME.tar -C $SLURM_TMPDIR\n./sim\n")
    assert "stage" not in imported.spec
    assert imported.spec["environment"]["setup"] == ["NAME=$(date +%F)", "tar -xf $HOME/data/$NAME.tar -C $SLURM_TMPDIR"]


@pytest.mark.parametrize("line", ["tar -xf $HOME/d.tar --strip-components=1 -C $SLURM_TMPDIR",
                                  "tar -xf $HOME/d.tar -C $SLURM_TMPDIR data/a.npy",
                                  "tar -xf $HOME/d.tar --exclude='*.log' -C $SLURM_TMPDIR",
                                  "tar --wildcards -xf $HOME/d.tar -C $SLURM_TMPDIR '*.npy'",
                                  "tar -I lz4 -xf $HOME/d.tar.lz4 -C $SLURM_TMPDIR",       # a suffix stage.inputs would copy
                                  "tar -I ./mytool -xf $HOME/d.tar.gz -C $SLURM_TMPDIR"])   # a program of the user's
def test_an_extraction_of_part_of_an_archive_stays_the_scripts_line(line):
    """stage.inputs extracts a whole archive as it is: what changes which files land where keeps the line."""
    imported = import_script(HEAD + f"{line}\n./sim\n")
    assert "stage" not in imported.spec
    assert imported.spec["environment"]["setup"] == [line]


@pytest.mark.parametrize("line", ["zstd -dc $HOME/d.tar.zst | tar -xf - -C $SLURM_TMPDIR",
                                  "pigz -dc -p 8 $HOME/d.tar.gz | tar -x -C $SLURM_TMPDIR",
                                  "zcat $HOME/d.tar.gz | tar xf - -C $SLURM_TMPDIR",
                                  "tar -I zstd -xvf $HOME/d.tar.zst -C $SLURM_TMPDIR",
                                  "tar --use-compress-program=unzstd -xf $HOME/d.tar.zst -C $SLURM_TMPDIR"])
def test_an_archive_decompressed_by_a_program_is_staged_and_verifies_equal(line):
    from slurmkit.port import verify

    script = HEAD + f"{line}\n./sim $SLURM_TMPDIR/d\n"
    imported = import_script(script, profile="narval")
    assert imported.spec["stage"]["inputs"] == [next(w for w in line.split() if w.startswith("$HOME/"))]
    verification = verify.verify_import(script, imported, "narval")
    assert not verification.not_run and verification.findings == ()


def test_the_trace_extracts_a_zstd_archive_it_stands_in_for_and_names_a_piped_one():
    from slurmkit.port import verify

    script = HEAD + ("tar --zstd -xf $HOME/a.tar.zst -C $SLURM_TMPDIR\nzstd -dc $HOME/b.tar.zst | tar -x -C $SLURM_TMPDIR\n"
                     "./sim\n")
    trace = verify.trace(script, verify.shape_of(script))
    assert trace.status == 0, trace.output
    assert trace.inputs == ("$HOME/a.tar.zst", "$HOME/b.tar.zst")
    (sim,) = [s for s in trace.starts if s.program == "sim"]
    assert {"from-a.tar.zst", "from-b.tar.zst"} <= set(sim.tmpdir)


@pytest.mark.parametrize("line, modules", [("ml load python/3.10 scipy-stack", ["python/3.10", "scipy-stack"]),
                                           ("ml python/3.10 -gcc", ["python/3.10"]), ("ml add gcc/9.3.0", ["gcc/9.3.0"]),
                                           ("module load gcc/9.3.0", ["gcc/9.3.0"])])
def test_ml_with_a_sub_command_loads_what_module_would(line, modules):
    """``ml load X`` is ``module load X``: no module named load."""
    imported = import_script(HEAD + f"{line}\n./sim\n", profile="narval")
    assert imported.spec["environment"]["modules"] == modules


@pytest.mark.parametrize("line", ["ml spider gcc", "ml show python", "ml swap gcc intel", "ml avail", "ml reset"])
def test_ml_with_a_sub_command_that_loads_nothing_is_no_module_list(line):
    imported = import_script(HEAD + f"{line}\n./sim\n", profile="narval")
    assert "modules" not in (imported.spec.get("environment") or {})


@pytest.mark.parametrize("word, spec_word", [('"run_"$N"_x.npy"', "run_${N}_x.npy"), ("out_$N.txt", "out_$N.txt"),
                                             ('"$N"_v1', "${N}_v1"), ("'$N'_v1", "'$N_v1'")])
def test_a_variable_that_ended_at_a_quote_keeps_its_end_in_the_launch_command(word, spec_word):
    from slurmkit.port import verify

    script = HEAD + f"N=5\npython main.py --out {word}\n"
    imported = import_script(script, profile="narval")
    assert imported.spec["launch"]["command"] == f"python main.py --out {spec_word}"
    assert verify.verify_import(script, imported, "narval").findings == ()


def test_tasks_bound_one_to_a_gpu_keep_their_own_gpu():
    """--ntasks-per-gpu implies --gpu-bind=single:N: each rank saw only its GPU (device 0)."""
    ddp = ("#SBATCH --nodes=1 --gpus-per-node=v100:4 --ntasks-per-gpu=1 --cpus-per-task=10\nmodule load python/3.8\n"
           "export MASTER_ADDR=$(hostname)\nexport MASTER_PORT=34567\nsrun python train_ddp.py --world-size $SLURM_NTASKS\n")
    imported = import_script(HEAD + ddp, profile="beluga")
    assert imported.spec["kind"] == "ddp" and imported.spec["launch"]["gpu_view"] == "own"
    assert not any("gpu_view: node" in n.reason for n in imported.notes)
    mpi = "#SBATCH --nodes=1 --gpus-per-node=2 --ntasks-per-gpu=1\nsrun ./solver\n"
    imported = import_script(HEAD + mpi, profile="narval")
    assert "--gpu-bind=single:1" in imported.spec["extra_directives"]


def test_a_copy_back_trap_on_one_line_with_its_function_is_read_and_its_variables_worked_out():
    imported = import_script(HEAD + "OUT=$HOME/results\nsave() { src=$SLURM_TMPDIR/out; cp -r $src $OUT/; }; trap save EXIT\n"
                                    "python train.py\n")
    assert imported.spec["stage"]["outputs"] == [{"from": "out", "to": "$HOME/results/out"}]   # cp puts out inside results/
    assert [(n.text, n.outcome) for n in imported.notes if n.line == 4] == [
        ("save() { src=$SLURM_TMPDIR/out; cp -r $src $OUT/; }", "mapped"), ("trap save EXIT", "dropped")]


@pytest.mark.parametrize("line", ["grep -h energy $WORK/*.log > energies.txt", "cat ${SLURM_TMPDIR}/run/summary",
                                  "sort results.txt > $SLURM_TMPDIR/sorted.txt"])
def test_a_line_after_the_program_that_uses_slurm_tmpdir_is_never_sent_to_a_dependent_job(line):
    """$SLURM_TMPDIR is on the node and removed at the job's end: a later job cannot see it."""
    imported = import_script(f"#!/bin/bash\n#SBATCH -n 4 -c 2 -t 10\nmodule load intelmpi\nWORK=$SLURM_TMPDIR/run\n"
                             f"mpirun ./app --out $WORK\n{line}\n")
    [todo] = [n for n in imported.unmapped if n.line == 6]
    assert "$SLURM_TMPDIR" in todo.reason and "removed" in todo.reason and "stage.outputs" in todo.reason
    assert "wrapper script" in todo.reason and "cannot see" in todo.reason


def test_a_line_after_the_program_that_uses_only_shared_files_may_go_to_a_dependent_job():
    imported = import_script("#!/bin/bash\n#SBATCH -n 4 -c 2 -t 10\nmodule load intelmpi\nmpirun ./app\nsort results.txt > sorted.txt\n")
    [todo] = [n for n in imported.unmapped if n.line == 5]
    assert "a job that depends on this one" in todo.reason and "SLURM_TMPDIR" not in todo.reason


@pytest.mark.parametrize("line, output", [
    ("cp -r $SLURM_TMPDIR/out $HOME/results/", {"from": "out", "to": "$HOME/results/out"}),       # into the folder, as cp puts it
    ("cp $SLURM_TMPDIR/log.txt ~/logs/", {"from": "log.txt", "to": "$HOME/logs/log.txt"}),
    ("cp -r $SLURM_TMPDIR/out/ $HOME/results/", {"from": "out", "to": "$HOME/results/out"}),
    ("rsync -a $SLURM_TMPDIR/out $HOME/results/", {"from": "out", "to": "$HOME/results/out"}),
    ("rsync -a $SLURM_TMPDIR/out/ $HOME/results/", {"from": "out", "to": "$HOME/results"}),      # the folder's contents
    ("cp -r $SLURM_TMPDIR/out $HOME/results", {"from": "out", "to": "$HOME/results"}),     # results made, or inside it
    ("cp -r $SLURM_TMPDIR/out $SLURM_SUBMIT_DIR", {"from": "out", "to": "$SLURM_SUBMIT_DIR/out"}),   # always there: inside
    ("cp -r $SLURM_TMPDIR/out .", {"from": "out", "to": "out"}),
    ("rsync -a $SLURM_TMPDIR/out ${HOME}/backup", {"from": "out", "to": "${HOME}/backup/out"}),    # rsync puts a folder inside
    ("rsync -a $SLURM_TMPDIR/a.csv $HOME/results", {"from": "a.csv", "to": "$HOME/results"}),
])
def test_a_copy_back_into_a_folder_named_with_a_slash_saves_where_cp_put_it(line, output):
    imported = import_script(f"#!/bin/bash\n#SBATCH -t 10\npython train.py --out $SLURM_TMPDIR/out\n{line}\n")
    assert imported.spec["stage"]["outputs"] == [output]


@pytest.mark.parametrize("cd, in_tmpdir", [("cd $SLURM_TMPDIR", True), ("W=$SLURM_TMPDIR/w\ncd $W", True),
                                           ("cd $SLURM_TMPDIR\ncd $SLURM_SUBMIT_DIR", False)])
def test_a_line_after_the_program_run_in_slurm_tmpdir_is_never_sent_to_a_dependent_job(cd, in_tmpdir):
    """After ``cd $SLURM_TMPDIR``, a relative path (``out``) is on the node too."""
    imported = import_script(f"#!/bin/bash\n#SBATCH -n 4 -c 2 -t 10\nmodule load intelmpi\n{cd}\nmpirun ./app\ntar -czf res.tgz out\n")
    [todo] = [n for n in imported.unmapped if n.text == "tar -czf res.tgz out"]
    assert ("cannot see" in todo.reason) == in_tmpdir


def test_a_script_that_reads_its_arguments_says_to_give_them_at_submit():
    imported = import_script('#!/bin/bash\n#SBATCH -t 1:00:00\nIN=$1\npython a.py "$IN" "${@:2}"\n')
    todos = list(_left(imported))   # one for the script, naming its lines
    assert [n.text for n in todos] == ["lines 3, 4"] and "give their values with `slurmkit submit SPEC -- ARGS`" in todos[0].reason
    assert imported.spec["launch"] == {"shell": 'python a.py "$IN" "${@:2}"'}


@pytest.mark.parametrize("body, name", [
    ("python run.py --seed $SLURM_ARRAY_TASK_ID\n", "task_id"),
    ("let task_id=$SLURM_ARRAY_TASK_ID\npython run.py --seed $task_id\n", "array_task_id"),
    ("task_id=1; array_task_id=2\n(( slurm_task_id = task_id ))\npython run.py $array_task_id\n", "array_task_id2"),
])
def test_the_array_parameter_takes_a_name_the_script_does_not_use(body, name):
    """The job sets the parameter before the script's lines run: a name the script sets or reads
    would change them. The script's own $SLURM_ARRAY_TASK_ID stays: --array is the script's."""
    imported = import_script("#!/bin/bash\n#SBATCH --array=1-3\n" + body)
    assert list(imported.spec["array"]["parameters"]) == [name]
    assert body.splitlines()[-1] in imported.spec["launch"].get("command", imported.spec["launch"].get("shell", ""))


@pytest.mark.parametrize("logs", ["#SBATCH -o out-%A_%a.log\n", ""])
def test_a_script_that_reads_the_task_id_without_an_array_directive_gets_a_to_do(logs, tmp_path, monkeypatch):
    """It was submitted with ``sbatch --array``: an array of one task stands in for the range, so
    the spec passes check but for the one to-do, and port carries that to-do instead of refusing."""
    from click.testing import CliRunner

    from slurmkit.cli.main import main
    from slurmkit.port.porting import imported_text

    script = f"#!/bin/bash\n#SBATCH -t 10 -A def-x\n{logs}python run.py --seed ${{SLURM_ARRAY_TASK_ID}}\n"
    imported = import_script(script, name="job", profile="narval")
    note = _left(imported)[0]
    assert note.line == script.count("\n") and "sbatch --array" in note.reason and ("%a" in note.reason) == bool(logs)
    assert imported.spec["kind"] == "array" and imported.spec["array"] == {"parameters": {"task_id": ["0"]}}
    assert not Job(**imported.spec).resolve().errors
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.yaml").write_text(imported_text(imported, "job.sh"))
    ported = CliRunner().invoke(main, ["port", "job.yaml", "--to", "rorqual", "-o", "new.yaml", "--no-verify"])
    assert ported.exit_code == 0, ported.output
    todos = [line for line in (tmp_path / "new.yaml").read_text().splitlines()
             if line.startswith("# to do:") and "environment.venv" not in line]
    assert todos[0].startswith("# to do: files: ") and "narval's /home, /project and /scratch are narval's own" in todos[0]
    assert todos[1:] == [f"# to do: line {note.line}: {note.text}: {note.reason}"]   # carried, not refused


def test_verification_gives_the_old_script_the_array_its_sbatch_line_gave():
    """The old script ran as an array task (sbatch --array): traced without one, its unset id
    would differ from the new script's, a second to-do for the same missing range."""
    from slurmkit.port.verify import verify_import

    script = "#!/bin/bash\n#SBATCH -t 10 -A def-x\npython run.py --seed $SLURM_ARRAY_TASK_ID\n"
    imported = import_script(script, name="job", profile="narval")
    assert verify_import(script, imported, "narval").todos() == ()


def test_a_comment_naming_the_task_id_asks_for_nothing():
    imported = import_script("#!/bin/bash\n# run with $SLURM_ARRAY_TASK_ID\npython run.py\n")
    assert not [n for n in imported.notes if "sbatch --array" in n.reason]


@pytest.mark.parametrize("line", ["rsync -a $SLURM_TMPDIR/out ${OUTDIR}", "cp -r $SLURM_TMPDIR/$SLURM_JOB_NAME $HOME/logs/",
                                  "cp $SLURM_TMPDIR/*.log $HOME/logs/"])
def test_a_copy_back_through_a_variable_or_a_glob_is_not_a_stage_output(line):
    """A stage path is one quoted path: a glob or a variable other than $HOME and the like would
    be taken literally, and the outputs lost; the line stays the shell's (or a to-do)."""
    imported = import_script(f"#!/bin/bash\n#SBATCH -t 10\npython train.py --out $SLURM_TMPDIR/out\n{line}\n")
    assert "outputs" not in imported.spec.get("stage", {})


@pytest.mark.parametrize("header, body, said", [
    ("#SBATCH --account=def-x\n", "python run.py\n", ["resources.time: 1h"]),
    ("#SBATCH -t 10\n", "python run.py --config configs/$SLURM_JOB_NAME.json\n", ["name: job"]),
    ("#SBATCH -t 10\n#SBATCH -J sweep\n", "python run.py --config configs/$SLURM_JOB_NAME.json\n", []),
    ("#SBATCH -t 10\n", "# $SLURM_JOB_NAME in a comment\npython run.py\n", []),
])
def test_what_the_script_left_to_the_sbatch_line_is_a_to_do(header, body, said):
    """No --time: the job ran with what sbatch was given, and 1h is a guess. No --job-name while
    the script reads $SLURM_JOB_NAME: it was given with -J, and the spec's name replaces it."""
    imported = import_script(f"#!/bin/bash\n{header}{body}", name="job")
    assert [n.text for n in imported.unmapped if n.text.startswith(("resources.time", "name:"))] == said


@pytest.mark.parametrize("body", ['echo "dir is $PWD"\n', 'echo "Time Signature: ${dt}"\n', 'python run.py\necho "exit $?"\n',
                                  'dt=$(date +%s)\necho "$dt" > stamp\n'])
def test_the_name_is_the_one_given_whatever_the_script_prints(body):
    """A variable an ``echo`` line prints is no job name: the name is the one import was given
    (the file's stem), unless the script sets --job-name."""
    assert import_script(f"#!/bin/bash\n#SBATCH -t 10\n{body}python run.py\n", name="myjob").spec["name"] == "myjob"
    assert import_script(f"#!/bin/bash\n#SBATCH -t 10 -J given\n{body}python run.py\n", name="myjob").spec["name"] == "given"


def test_no_loop_of_the_import_code_rebinds_a_parameter_of_its_function():
    """A ``for name in ...`` inside a function whose parameter is ``name`` replaces what the
    caller passed with the loop's last value, far from where it is read (the job's name became a
    variable an echo line printed)."""
    import ast
    from pathlib import Path

    import slurmkit.port

    rebound = []
    for path in sorted(Path(slurmkit.port.__file__).parent.glob("*.py")):
        for function in ast.walk(ast.parse(path.read_text())):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                arguments = function.args
                names = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
                rebound += [f"{path.name}:{loop.lineno}: {function.name}({target.id})" for loop in ast.walk(function)
                            if isinstance(loop, (ast.For, ast.AsyncFor)) for target in ast.walk(loop.target)
                            if isinstance(target, ast.Name) and target.id in names]
    assert rebound == []


@pytest.mark.parametrize("body, line, says", [
    ("rmats.py --gtf a.gtf \\ #testing\n  --nthread 4 --od out\n", 3, "bash runs line 4, `--nthread 4 --od out`, as a command"),
    ("prog --in a \\\n  # --verbose\n  --out b\npython post.py\n", 3, "bash runs line 5, `--out b`, as a command"),
    ("python train.py\n--epochs 5\n", 4, "bash runs `--epochs`, an option, as a command"),
    ("python train.py \\ \n  data/\n", 3, "if line 4 continues this command, join the lines, else remove the backslash"),
])
def test_a_command_cut_in_two_is_one_to_do_that_says_to_join_the_lines(body, line, says):
    """Import reads the script as bash does (the option line is a command of its own, and may be
    taken for the program), and says so, once for each command cut in two."""
    imported = import_script(f"#!/bin/bash\n#SBATCH -t 10\n{body}", name="job")
    todos = [n for n in imported.unmapped if n.line == line]
    assert len(todos) == 1 and says in todos[0].reason and "join the lines" in todos[0].reason
    assert len(_left(imported)) == 1


def test_an_option_line_that_is_not_the_program_is_read_as_bash_reads_it():
    """Only the program is checked for an option's name: a help text that the grammar reads as
    commands (a here-document it cannot end) would otherwise give a to-do a line."""
    imported = import_script("#!/bin/bash\n#SBATCH -t 10\nfoo --a 1\n-v  be verbose\npython run.py\n", name="job")
    assert not [n for n in imported.unmapped if "join the lines" in n.reason]


@pytest.mark.parametrize("activate", ["conda activate myenv", "source activate myenv"])
def test_a_conda_activation_stays_in_the_job_with_its_to_do(activate):
    """Without the activation the program runs without its environment (``command not
    found``): kept in order after conda's own set-up, with the to-do that says to move off conda."""
    imported = import_script(f"#!/bin/bash\n#SBATCH -t 10\nsource ~/miniconda3/etc/profile.d/conda.sh\n{activate}\npython run.py\n")
    assert imported.spec["environment"]["setup"] == ["source ~/miniconda3/etc/profile.d/conda.sh", activate]
    assert [n.text for n in imported.unmapped] == [activate] and "conda" in imported.unmapped[0].reason


def test_a_pip_upgrade_of_pip_alone_is_said_dropped():
    imported = import_script("#!/bin/bash\n#SBATCH -t 10\nsource ~/env/bin/activate\npip install --no-index --upgrade pip\npython run.py\n")
    assert [(n.line, n.outcome) for n in imported.notes if "pip is upgraded" in n.reason] == [(4, "dropped")]


def test_a_note_whose_reason_spans_lines_stays_one_comment_and_the_spec_reads_back():
    """A verify note quoting eval's text of two lines: each note is one comment line, or the
    second would be YAML, and import would write a spec that does not load."""
    import yaml

    from slurmkit.port.porting import imported_text

    imported = import_script("#!/bin/bash\n#SBATCH -t 10\nCMD=\"echo a\necho b\"\neval \"$CMD\"\npython run.py\n")
    noted = imported._replace(notes=imported.notes + (Note(0, "", "note", "verify: not traced: eval echo a\necho b"),))
    assert yaml.safe_load(imported_text(noted, "s.sh"))["name"]


def test_conda_in_a_string_the_script_evals_is_a_to_do():
    imported = import_script('#!/bin/bash\n#SBATCH -t 10\nLOAD="module load anaconda3; source activate pytorch"\n'
                             'eval "$LOAD; python train.py"\n')
    assert any(n.reason.startswith("the Alliance does not support conda") for n in imported.unmapped)


def test_a_copy_back_function_called_again_after_the_program_is_dropped_with_it():
    """``save`` became stage.outputs; its call after the program stayed in the launch, where bash
    found no such command (127: the job failed after a good run)."""
    script = ("#!/bin/bash\n#SBATCH -t 1:00:00\nsave() { cp -r $SLURM_TMPDIR/ckpt $HOME/run7/; }\ntrap save TERM\n"
              "./simulate --ckpt-dir $SLURM_TMPDIR/ckpt &\nwait\nsave\n")
    imported = import_script(script)
    assert imported.spec["stage"]["outputs"] == [{"from": "ckpt", "to": "$HOME/run7/ckpt"}]
    assert "save" not in imported.spec["launch"]["shell"]
    assert [(n.line, n.outcome) for n in imported.notes if n.text == "save"] == [(7, "dropped")]


def test_a_module_line_that_exits_where_the_load_fails_gives_its_modules_and_nothing_else():
    """``|| { echo ...; exit 1; }`` only stops the job where module load fails, as slurmkit's script
    does itself: its words are no modules. A line that goes on to other commands stays as written."""
    head = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00 --ntasks=4\n"
    for handler in ('|| { echo "module load failed" >&2; exit 1; }', "|| exit 1", "|| exit"):
        imported = import_script(head + f"module load StdEnv/2020 gcc/9.3.0 openmpi/4.0.3 {handler}\nsrun ./app\n", profile="cedar")
        assert imported.spec["environment"]["modules"] == ["StdEnv/2020", "gcc/9.3.0", "openmpi/4.0.3"], handler
        assert not [n for n in _left(imported) if "module" in n.text + n.reason], handler
    imported = import_script(head + "module load StdEnv/2020 gcc/9.3.0 && echo loaded\nsrun ./app\n", profile="cedar")
    assert imported.spec["environment"]["setup"] == ["module load StdEnv/2020 gcc/9.3.0 && echo loaded"]
    assert "modules" not in imported.spec["environment"]


def test_kill_of_a_background_job_the_batch_shell_started_is_dropped_after_the_program():
    """``kill %1`` after the program would run in the launch's own shell, which has no job 1: the
    job would end FAILED after a good run. A background job the launch starts itself keeps its kill."""
    head = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\nmodule load python/3.11\n"
    imported = import_script(head + "nvidia-smi -l 60 > gpu.csv &\npython train.py\nkill %1\n", profile="cedar")
    assert "kill" not in (imported.spec["launch"].get("shell") or "") and imported.spec["launch"]["command"] == "python train.py"
    assert any(n.text == "kill %1" and n.outcome == "dropped" for n in imported.notes)
    together = import_script(head + "python train.py &\npython watch.py\nkill %1\n", profile="cedar")
    assert "kill %1" in together.spec["launch"]["shell"]
