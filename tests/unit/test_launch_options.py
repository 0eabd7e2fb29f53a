"""Launcher options read with their arity: where the program starts, and what each option is for."""

import shlex

import pytest

from slurmkit.core.launch_options import parse
from slurmkit.port.porting import import_script


@pytest.mark.parametrize("line, launcher, program", [
    ("mpirun -np 4 -x NCCL_DEBUG=INFO -mca pml ob1 -mca btl ^openib python t.py", "mpirun", ("python", "t.py")),
    ("mpiexec -n 8 -genv I_MPI_DEBUG 4 -ppn 4 ./lmp -in in.lj", "mpirun", ("./lmp", "-in", "in.lj")),
    ("srun -n4 -c 2 --cpu-bind=cores -l ./app --x 1", "srun", ("./app", "--x", "1")),
    ("srun --ntasks 2 --mpi pmix -- ./app -n 3", "srun", ("./app", "-n", "3")),
    ("torchrun --nnodes 2 --nproc_per_node=4 --rdzv_endpoint $H:29500 train.py --lr 1", "torchrun", ("train.py", "--lr", "1")),
    ("python -m torch.distributed.launch --nproc_per_node 2 t.py", "torchrun", ("t.py",)),
    ("horovodrun -np 4 -H localhost:4 --gloo python h.py", "horovodrun", ("python", "h.py")),
    ("python t.py -n 3", None, ("python", "t.py", "-n", "3")),
    ("srun -o run_%t.out -e err.txt --open-mode append ./app -o x", "srun", ("./app", "-o", "x")),
])
def test_the_program_starts_after_the_launchers_options_and_their_values(line, launcher, program):
    parsed = parse(shlex.split(line))
    assert (parsed.launcher, parsed.program) == (launcher, program)


@pytest.mark.parametrize("line, launcher, program", [
    ("charmrun ++p $SLURM_NTASKS ++ppn 39 +p8 namd3 +setcpuaffinity in.namd", "charmrun", ("namd3", "+setcpuaffinity", "in.namd")),
    ("parallel -j 4 --joblog log ./process {} ::: a b c", "parallel", ("./process", "{}", ":::", "a", "b", "c")),
    ("parallel --colsep , -j8 python t.py :::: args.txt", "parallel", ("python", "t.py", "::::", "args.txt")),
])
def test_launchers_import_only_reads_past_find_their_program_too(line, launcher, program):
    from slurmkit.core.launch_options import ALL_LAUNCHERS

    parsed = parse(shlex.split(line), ALL_LAUNCHERS)
    assert (parsed.launcher, parsed.program) == (launcher, program)
    assert parse(shlex.split(line)).launcher is None   # not a launcher a spec names


def test_srun_output_files_are_left_to_the_user_and_the_program_kept():
    imported = import_script("#!/bin/bash\n#SBATCH -n 4 -t 1:00:00\nsrun -o run_%t.out ./app --steps 10\n")
    assert imported.spec["launch"] == {"launcher": "srun", "command": "./app --steps 10"}
    assert [(n.text, n.outcome) for n in imported.unmapped] == [("-o run_%t.out", "to do")]


def test_each_option_says_what_it_is_for():
    parsed = parse(shlex.split("mpirun -np 4 --bind-to core -x A=1 -mca btl ^openib -H a,b --frobnicate ./x"))
    assert [(o, v, a) for o, v, a in parsed.options] == [
        ("-np", ("4",), "counts"), ("--bind-to", ("core",), "binding"), ("-x", ("A=1",), "environment"),
        ("-mca", ("btl", "^openib"), "transport"), ("-H", ("a,b",), "hosts"), ("--frobnicate", (), "unknown")]


def test_mpirun_environment_options_become_variables_and_the_rest_are_noted():
    imported = import_script("#!/bin/bash\n#SBATCH -n 4 -t 1:00:00\n"
                             "mpirun -np 4 -x NCCL_DEBUG=INFO -x PATH -genv OMP_PROC_BIND close -mca pml ob1 python t.py\n")
    assert imported.spec["launch"] == {"launcher": "mpirun", "command": "python t.py"}
    assert imported.spec["environment"]["variables"] == {"NCCL_DEBUG": "INFO", "OMP_PROC_BIND": "close"}
    notes = {n.text: (n.outcome, n.reason) for n in imported.notes}
    assert notes["-mca pml ob1"][0] == "dropped" and "transport" in notes["-mca pml ob1"][1]
    assert notes["-np 4"][0] == "dropped" and notes["-x PATH"][0] == "dropped"


def test_an_option_the_tables_do_not_know_is_left_to_the_user():
    imported = import_script("#!/bin/bash\n#SBATCH -n 2 -t 10\nsrun --frobnicate ./app\n")
    assert [(n.text, n.outcome) for n in imported.unmapped] == [("--frobnicate", "to do")]


def test_torchrun_runs_its_script_with_python_and_a_module_with_python_m():
    script = "#!/bin/bash\n#SBATCH --gres=gpu:2 -c 8 -t 1:00:00\ntorchrun --standalone --nproc_per_node=2 {}\n"
    assert import_script(script.format("train.py --lr 1")).spec["launch"] == {"command": "python train.py --lr 1", "launcher": "torchrun"}
    assert import_script(script.format("-m pkg.train")).spec["launch"]["command"] == "python -m pkg.train"
    assert import_script(script.format("train.py")).spec["resources"]["cpus_per_task"] == 4   # 8 cores shared by 2 processes


def test_resolve_asks_launchers_what_they_do_and_never_tests_their_names():
    """Launchers are objects with properties (core/launchers.py): a name test in resolve would
    be a second definition of what a launcher does."""
    import ast
    from pathlib import Path

    from slurmkit.core.launchers import LAUNCHERS
    from slurmkit.resolve import nested_launch, resolve

    for module in (resolve, nested_launch):
        tree = ast.parse(Path(module.__file__).read_text())
        compared = [ast.unparse(node) for node in ast.walk(tree) if isinstance(node, ast.Compare)
                    and any(isinstance(c, ast.Constant) and c.value in LAUNCHERS for c in ast.walk(node))]
        assert compared == [], module.__name__
