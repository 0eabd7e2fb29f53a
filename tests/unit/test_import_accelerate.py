"""slurmkit import of Hugging Face Accelerate scripts: an `accelerate launch` line (under srun or
not, in every spelling accelerate 1.15's parser accepts) becomes kind accelerate, each of its
options mapped, dropped (slurmkit passes it itself) or left to the user, never lost."""

import shlex
import subprocess

import pytest

from slurmkit import Job
from slurmkit.core.kinds import first_kind
from slurmkit.core.launch_options import parse
from slurmkit.port.porting import import_script
from slurmkit.spec.spec import spec_from_mapping

ACCELERATE = first_kind(launches_per_node=True).name
HEADER_1x4 = "#!/bin/bash\n#SBATCH -A def-x --gres=gpu:4 --cpus-per-task=32 --mem=64G -t 3:00:00\n"
HEADER_2x4 = ("#!/bin/bash\n#SBATCH -A def-x --nodes=2 --ntasks-per-node=1 --gres=gpu:4 --cpus-per-task=32 --mem=64G "
              "-t 3:00:00\n")



def _left(imported):
    """What import left to do but the question where the program's python comes from (these
    scripts run a python they never load: a to-do of its own, tested in test_import_launch)."""
    return tuple(n for n in imported.unmapped if n.text != "environment.venv")


def _notes(imported):
    return {n.text: (n.outcome, n.reason) for n in imported.notes}


@pytest.mark.parametrize("launch", [
    "accelerate launch --num_processes 4 --mixed_precision bf16 train.py --lr 1",
    "accelerate launch --num-processes=4 --mixed-precision=bf16 train.py --lr 1",
    "accelerate launch --num_processes=4 --mixed-precision bf16 -- train.py --lr 1",
    "accelerate-launch --num_processes 4 --mixed_precision=bf16 train.py --lr 1",
    "python -m accelerate.commands.launch --num_processes 4 --mixed_precision bf16 train.py --lr 1",
    "/home/me/env/bin/accelerate launch --multi_gpu --num_processes 4 --mixed_precision bf16 train.py --lr 1",
    "srun accelerate launch --multi-gpu --num_processes=4 --mixed_precision=bf16 train.py --lr 1",
])
def test_every_spelling_of_accelerate_launch_becomes_kind_accelerate(launch):
    imported = import_script(HEADER_1x4 + launch + "\n", profile="narval")
    spec = imported.spec
    assert spec["kind"] == ACCELERATE, imported.notes
    assert spec["launch"] == {"command": "python train.py --lr 1", "mixed_precision": "bf16"}
    # 32 cores for the node's one `accelerate launch` become 8 for each of its 4 processes.
    assert spec["resources"]["cpus_per_task"] == 8 and "tasks_per_node" not in spec["resources"]
    assert _left(imported) == (), _left(imported)
    spec_from_mapping(spec)


@pytest.mark.parametrize("program, command", [
    ("-m pkg.train --lr 1", "python -m pkg.train --lr 1"),
    ("--module pkg.train", "python -m pkg.train"),
    ("--no_python ./run.sh --x 1", "./run.sh --x 1"),
    ("--no-python python3 t.py", "python3 t.py"),
])
def test_the_command_runs_what_accelerate_ran_python_implied(program, command):
    imported = import_script(HEADER_1x4 + f"accelerate launch --num_processes 4 {program}\n")
    assert imported.spec["launch"]["command"] == command
    assert _left(imported) == ()


MULTINODE = (HEADER_2x4 + "module load python/3.11\nsource ~/envs/hf/bin/activate\n"
             "export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)\nexport MASTER_PORT=29500\n"
             "srun --ntasks-per-node=1 -n $SLURM_NNODES accelerate launch --multi_gpu --num_processes $((SLURM_NNODES * 4)) "
             "--num_machines $SLURM_NNODES --machine_rank $SLURM_NODEID --main_process_ip $MASTER_ADDR "
             "--main_process_port $MASTER_PORT --mixed_precision fp16 train.py --epochs 3\n")


def test_the_multi_node_recipe_drops_what_slurmkit_passes_itself_each_with_a_note():
    imported = import_script(MULTINODE, profile="narval")
    spec, notes = imported.spec, _notes(imported)
    assert spec["kind"] == ACCELERATE and _left(imported) == (), _left(imported)
    assert spec["resources"] == {"nodes": 2, "gpus": "4", "cpus_per_task": 8, "mem": "64G", "time": "3:00:00"}
    assert spec["launch"] == {"command": "python train.py --epochs 3", "mixed_precision": "fp16"}
    assert "environment" in spec and "variables" not in spec["environment"] and "setup" not in spec["environment"]
    dropped = {text: reason for text, (outcome, reason) in notes.items() if outcome == "dropped"}
    for option in ("--machine_rank $SLURM_NODEID", "--main_process_ip $MASTER_ADDR", "--main_process_port $MASTER_PORT",
                   "--multi_gpu"):
        assert [reason for text, reason in dropped.items() if option in text and "itself" in reason], option
    for option in ("--num_processes $((SLURM_NNODES * 4))", "--num_machines $SLURM_NNODES"):
        assert notes[option][0] == "mapped", option
    assert notes["--mixed_precision fp16"] == ("mapped", "launch.mixed_precision: fp16")
    assert notes["--ntasks-per-node 1 -n $SLURM_NNODES"][0] == "dropped"
    # The hand-made rendezvous lines: the kind sets MASTER_ADDR and MASTER_PORT itself.
    assert [n.outcome for n in imported.notes if n.line in (5, 6)] == ["dropped", "dropped"]


def test_every_option_of_the_launch_line_is_named_by_a_note():
    imported = import_script(MULTINODE, profile="narval")
    noted = " ".join(n.text for n in imported.notes if n.line == 7)
    launch = MULTINODE.splitlines()[6]
    options = [w for w in shlex.split(launch) if w.startswith("-")]
    assert [o for o in options if o not in noted] == []


@pytest.mark.parametrize("option, outcome", [
    ("--config_file cfg.yaml", "to do"), ("--config-file=cfg.yaml", "to do"),
    ("--use_deepspeed --deepspeed_config_file ds.json", "to do"), ("--deepspeed-config-file ds.json", "to do"),
    ("--use_fsdp --fsdp_sharding_strategy FULL_SHARD", "to do"), ("--fsdp-sharding-strategy=1", "to do"),
    ("--dynamo_backend inductor", "to do"), ("--dynamo-backend=no", "dropped"),
    ("--max_restarts 3", "to do"), ("--frobnicate", "to do"),
    ("--quiet", "dropped"), ("--gpu_ids all", "dropped"), ("--num_cpu_threads_per_process 8", "dropped"),
])
def test_options_slurmkit_cannot_carry_are_left_to_the_user_never_dropped_silently(option, outcome):
    imported = import_script(HEADER_1x4 + f"accelerate launch --num_processes 4 {option} train.py\n")
    assert imported.spec["launch"]["command"] == "python train.py"
    noted = [n for n in imported.notes if n.line == 3 and n.text in option.replace("=", " ") and n.text.startswith("-")]
    assert noted and {n.outcome for n in noted} == {outcome}, imported.notes
    if outcome == "to do":
        assert all(n.text.split("=")[0].split()[0] in n.reason or "not one slurmkit knows" in n.reason for n in noted)


def test_a_process_count_that_disagrees_with_the_header_is_a_to_do():
    imported = import_script(HEADER_1x4 + "accelerate launch --num_processes 8 --num_machines 2 train.py\n")
    todos = {n.text: n.reason for n in _left(imported)}
    assert set(todos) == {"--num_processes 8", "--num_machines 2"}
    assert "4 GPUs per node x 1 node" in todos["--num_processes 8"] and "starts 4" in todos["--num_processes 8"]
    assert "1 node" in todos["--num_machines 2"]


def test_a_count_the_shell_computes_from_unknown_names_is_noted_with_slurmkits_count():
    imported = import_script(HEADER_2x4 + "NP=$((SLURM_NNODES * 4))\nsrun accelerate launch --num_processes $NP train.py\n")
    note = _notes(imported)["--num_processes $NP"]
    assert note[0] == "dropped" and "8" in note[1] and "check" in note[1]


def test_an_unsupported_mixed_precision_is_a_to_do_and_not_set():
    imported = import_script(HEADER_1x4 + "accelerate launch --mixed_precision fp8 train.py\n")
    assert "mixed_precision" not in imported.spec["launch"]
    assert [n.text for n in _left(imported)] == ["--mixed_precision fp8"]
    assert "no, fp16 or bf16" in _left(imported)[0].reason


def test_accelerate_on_cpus_runs_its_processes_as_tasks_with_accelerates_cpu_switch():
    script = ("#!/bin/bash\n#SBATCH -A def-x --nodes=2 --ntasks-per-node=1 --cpus-per-task=16 --mem=32G -t 1:00:00\n"
              "srun accelerate launch --cpu --num_processes 8 --num_machines 2 --machine_rank $SLURM_NODEID t.py\n")
    imported = import_script(script, profile="narval")
    spec = imported.spec
    assert spec["kind"] == ACCELERATE and _left(imported) == (), _left(imported)
    assert spec["resources"]["tasks_per_node"] == 4 and spec["resources"]["cpus_per_task"] == 4
    assert _notes(imported)["--cpu"][0] == "dropped" and "ACCELERATE_USE_CPU" in _notes(imported)["--cpu"][1]
    rendered = Job(**spec).render()
    assert "ACCELERATE_USE_CPU=true" in rendered or "ACCELERATE_USE_CPU='true'" in rendered


def test_accelerate_on_cpus_without_a_count_runs_accelerates_default_one_process_per_machine():
    script = ("#!/bin/bash\n#SBATCH -A def-x --cpus-per-task=8 -t 1:00:00\naccelerate launch --cpu t.py\n")
    imported = import_script(script, profile="narval")
    assert imported.spec["kind"] == ACCELERATE and _left(imported) == ()
    assert imported.spec["resources"]["cpus_per_task"] == 8 and "tasks_per_node" not in imported.spec["resources"]


def test_cpu_with_gpus_in_the_header_is_a_to_do():
    imported = import_script(HEADER_1x4 + "accelerate launch --cpu train.py\n")
    assert [n.text for n in _left(imported)] == ["--cpu"]


@pytest.mark.parametrize("profile", ["narval", "fir"])
def test_an_imported_accelerate_script_renders_on_a_gpu_site_and_passes_bash_n(profile, tmp_path):
    imported = import_script(MULTINODE, profile=profile)
    job = Job(**imported.spec)
    assert job.resolve().errors == ()
    rendered = job.render()
    assert "accelerate launch" not in rendered.split("# ---- end of slurmkit's runtime")[1].replace("No `accelerate launch`", "")
    assert "export ACCELERATE_MIXED_PRECISION=fp16\n" in rendered
    assert '--task-prolog="$SLURMKIT_TASK_ENV" python train.py --epochs 3\n' in rendered
    (tmp_path / "job.sh").write_text(rendered)
    assert subprocess.run(["bash", "-n", str(tmp_path / "job.sh")]).returncode == 0


@pytest.mark.parametrize("line, program", [
    ("accelerate launch --num_processes 4 -m pkg.t --lr 1", ("pkg.t", "--lr", "1")),
    ("accelerate launch --num-machines=2 --machine-rank 0 t.py -q", ("t.py", "-q")),
    ("accelerate-launch --quiet --tee 3 t.py", ("t.py",)),
    ("python3 -m accelerate.commands.launch --config_file c.yaml t.py", ("t.py",)),
])
def test_accelerate_launch_options_are_read_with_their_arity(line, program):
    parsed = parse(shlex.split(line))
    assert (parsed.launcher, parsed.program) == ("accelerate", program)
    assert "unknown" not in [action for _, _, action in parsed.options]


def test_slurmkit_import_on_the_command_line_writes_a_spec_that_checks(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from slurmkit.cli.main import main

    (tmp_path / "hf.sh").write_text(MULTINODE.replace("--mixed_precision fp16", "--mixed_precision fp16 --config_file c.yaml"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["import", "hf.sh", "--profile", "narval", "-o", "job.yaml"])
    assert result.exit_code == 0, result.output
    assert f"kind: {ACCELERATE}" in (tmp_path / "job.yaml").read_text()
    assert "to do: hf.sh:7: --config_file c.yaml" in result.stderr
    check = CliRunner().invoke(main, ["check", "job.yaml"])
    assert "import: to do: line 7: --config_file c.yaml" in check.output


def test_a_redirection_of_accelerates_processes_is_a_to_do_each_process_now_runs_it():
    imported = import_script(HEADER_1x4 + "accelerate launch --num_processes 4 train.py > train.log 2>&1\n")
    assert imported.spec["launch"] == {"shell": "python train.py > train.log 2>&1"}
    assert [n.text for n in _left(imported)] == ["> 2>&1"] and "$SLURM_PROCID" in _left(imported)[0].reason
