"""Imported scripts, rendered for the local cluster, are accepted by its controller; and the
corpus scripts written for it (tests/corpus/local_*.sh) run to COMPLETED doing what the
original did: the program sees its arguments and environment, staged files arrive, outputs
come back, the log redirection works. Proven on Slurm 22.05 (the local cluster)."""

import json
import re
import shutil
import tarfile
from pathlib import Path

import pytest

from slurmkit import Job
from slurmkit.port.porting import import_script, imported_text

CORPUS = Path(__file__).parent.parent / "corpus"

SCRIPTS = [
    "#!/bin/bash\n#SBATCH -A def-test\n#SBATCH --nodes 2 --ntasks-per-node=2 --mem 1G -t 0-00:10\n"
    "module load StdEnv/2023 openmpi/4.1.5\nsrun ./app\n",
    "#!/bin/bash\n#SBATCH --account=def-test --gres=gpu:p100:2 -c 1 --mem=2000M --time=30\n#SBATCH --output=%N-%j.out\npython train.py\n",
    "#!/bin/bash\n#SBATCH -A def-test -c 2 --mem-per-cpu=500M -t 10 --array=0-9%3\nexport MODE=fast\npython run.py $SLURM_ARRAY_TASK_ID\n",
]

#: The program of the local corpus scripts: it records what it was given, one file per rank.
SHOW = '''import json, os, sys
args = sys.argv[1:]
rank = os.environ.get("OMPI_COMM_WORLD_RANK") or os.environ.get("SLURM_PROCID", "0")
names = ("SHOW_FLAG", "MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "FILE", "SLURM_ARRAY_TASK_ID")
info = {"argv": args, "rank": rank, "cwd": os.getcwd(), "env": {n: os.environ.get(n) for n in names},
        "data": sorted(os.listdir(args[args.index("--data") + 1])) if "--data" in args else None}
print(json.dumps(info))
with open(args[args.index("--out") + 1] + "." + rank + ".json", "w") as out:
    json.dump(info, out)
'''


def _left_to_do(imported):
    """What import left to do, but the question where the program's python comes from (these
    scripts run ``python`` with none loaded): the local cluster's python runs them."""
    return [n for n in imported.unmapped if n.text != "environment.venv"]


@pytest.mark.parametrize("script", SCRIPTS)
def test_an_imported_script_renders_and_the_controller_accepts_it(cluster, tmp_path, script):
    imported = import_script(script, name="imported", profile="local")
    assert _left_to_do(imported) == []
    job = Job(**imported.spec)
    answer = job.test_only(folder=tmp_path / "logs")
    assert re.match(r"Job \d+ to start at \S+ using \d+ processors on nodes node", answer), answer


@pytest.fixture
def registry(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "registry.jsonl"))


def _import_and_submit(name: str, folder: Path):
    """As a user would: the script beside its files, imported into job.yaml there, then submitted."""
    script = CORPUS / f"{name}.sh"
    shutil.copy(script, folder / script.name)
    (folder / "show.py").write_text(SHOW)
    imported = import_script(script.read_text(), name=name.replace("_", "-"), profile="local")
    assert _left_to_do(imported) == []
    # The python question answered, as its to-do asks: show.py needs only the standard library,
    # which the local cluster's python has; the line goes, and submit takes the spec.
    text = imported_text(imported, script.name)
    (folder / "job.yaml").write_text("".join(line for line in text.splitlines(True)
                                             if not line.startswith("# to do: script: environment.venv:")))
    return Job.from_yaml(folder / "job.yaml").submit()


def _seen(path: Path) -> dict:
    return json.loads(path.read_text())


def test_a_redirected_launch_line_writes_its_log_and_the_setup_lines_run(cluster, registry, tmp_path):
    handle = _import_and_submit("local_redirect", tmp_path)
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    log = (tmp_path / "log.txt").read_text()
    assert _seen(tmp_path / "log.0.json")["argv"] == ["--out", "log", "--epochs", "3", "two words"]
    assert json.loads(log.splitlines()[-1])["argv"] == ["--out", "log", "--epochs", "3", "two words"]
    assert re.search(r"^started on node\d at ", handle.stdout(), re.M)


def test_mpirun_options_become_variables_and_the_ranks_run(cluster, registry, tmp_path):
    handle = _import_and_submit("local_mpirun_env", tmp_path)
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    ranks = [_seen(tmp_path / f"rank.{r}.json") for r in (0, 1)]
    assert [r["env"]["SHOW_FLAG"] for r in ranks] == ["on", "on"]
    assert all(r["argv"] == ["--out", "rank"] for r in ranks)


def test_a_tar_into_a_subfolder_is_staged_and_the_trap_copy_back_becomes_an_output(cluster, registry, tmp_path):
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text(name)
    with tarfile.open(tmp_path / "inputs.tar", "w") as archive:
        for name in ("a.txt", "b.txt"):
            archive.add(tmp_path / name, arcname=name)
    handle = _import_and_submit("local_stage_trap", tmp_path)
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    assert _seen(tmp_path / "results_back" / "seen.0.json")["data"] == ["a.txt", "b.txt"]


def test_an_array_reads_its_line_of_the_list_with_the_original_task_numbers(cluster, registry, tmp_path):
    (tmp_path / "list.txt").write_text("alpha\nbeta\ngamma\n")
    handle = _import_and_submit("local_array_sed", tmp_path)
    assert [s.state for s in handle.wait(0.5).values()] == ["COMPLETED"] * 3
    for task, word in ((1, "alpha"), (2, "beta"), (3, "gamma")):
        seen = _seen(tmp_path / f"task-{task}.0.json")
        # the script never exported FILE: its program never saw it, nor does the job's (allexport: false)
        assert seen["argv"] == ["--out", f"task-{task}", "--file", word] and seen["env"]["FILE"] is None


def test_a_hand_made_ddp_script_runs_as_kind_ddp_with_slurmkits_rendezvous(cluster, registry, tmp_path):
    handle = _import_and_submit("local_ddp", tmp_path)
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    ranks = [_seen(tmp_path / f"ddp.{r}.json") for r in (0, 1)]
    assert [r["env"]["RANK"] for r in ranks] == ["0", "1"]
    for seen in ranks:
        env = seen["env"]
        assert seen["argv"] == ["--out", "ddp", "--init_method", f"tcp://{env['MASTER_ADDR']}:{env['MASTER_PORT']}",
                                "--world_size", "2"]
        assert env["WORLD_SIZE"] == "2" and env["MASTER_ADDR"] == "node1"


def test_a_chained_and_piped_launch_line_runs_both_commands_and_tees(cluster, registry, tmp_path):
    handle = _import_and_submit("local_chain", tmp_path)
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    assert (tmp_path / "first.0.json").exists()
    second = _seen(tmp_path / "second.0.json")
    assert second["argv"] == ["--out", "second", "--cores", "2"]
    assert json.loads((tmp_path / "chain.log").read_text().splitlines()[-1]) == second


def test_a_loop_of_runs_is_the_payload_and_runs_each(cluster, registry, tmp_path):
    handle = _import_and_submit("local_loop", tmp_path)
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    assert [_seen(tmp_path / f"loop-{n}.0.json")["argv"] for n in ("one", "two")] == [["--out", "loop-one"], ["--out", "loop-two"]]


def test_a_python_heredoc_is_the_payload_with_its_input(cluster, registry, tmp_path):
    handle = _import_and_submit("local_heredoc", tmp_path)
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    assert (tmp_path / "heredoc.txt").read_text() == f"job {handle.job_id}\n"


def test_an_inline_copy_back_trap_becomes_an_output_that_arrives(cluster, registry, tmp_path):
    handle = _import_and_submit("local_trap_inline", tmp_path)
    status = handle.wait(0.5)
    assert status.state == "COMPLETED", handle.stderr()
    assert _seen(tmp_path / "ckpt_back" / "state.0.json")["argv"][0] == "--out"
    assert status.unsaved == () and len(status.saved) == 1


def test_tasks_without_a_launcher_become_cores_of_one_process(cluster, registry, tmp_path):
    handle = _import_and_submit("local_xargs", tmp_path)
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    assert sorted(_seen(tmp_path / f"x-{n}.0.json")["argv"][1] for n in "abc") == ["x-a", "x-b", "x-c"]


def test_a_command_after_the_program_runs_after_it(cluster, registry, tmp_path):
    handle = _import_and_submit("local_after", tmp_path)
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    assert _seen(tmp_path / f"renamed-{handle.job_id}.json")["argv"] == ["--out", "main"]
    assert not (tmp_path / "main.0.json").exists()


def test_a_serial_step_after_the_srun_program_runs_once_and_the_jobs_own_trap_joins_slurmkits(cluster, registry, tmp_path):
    """``srun prog > log && touch DONE``, then ``ls``: the batch shell runs them as the script
    did (launcher direct): one log of both ranks, one flag, one listing after both ranks ended;
    the script's own EXIT trap runs, and slurmkit's exit file is still written."""
    handle = _import_and_submit("local_srun_then_serial", tmp_path)
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    assert len((tmp_path / "ranks.log").read_text().splitlines()) == 2
    assert (tmp_path / "DONE.flag").exists()
    assert (tmp_path / "parts.txt").read_text().split() == ["part.0.json", "part.1.json"]
    assert (tmp_path / "trap.txt").read_text() == "trapped 0\n"
    assert (Path(handle.paths.folder) / f"{handle.job_id}.exit").read_text().split()[0] == "0"


def test_job_steps_the_script_starts_itself_run_on_the_tasks_it_kept(cluster, registry, tmp_path):
    """Two ``srun -n1 --exclusive ... &`` steps and a wait: the job keeps its 2 tasks (launcher
    direct), so both steps start at once, each on a task of its own, as in the script."""
    handle = _import_and_submit("local_srun_steps", tmp_path)
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    assert _seen(tmp_path / "a.0.json")["argv"] == ["--out", "a"] and _seen(tmp_path / "b.0.json")["argv"] == ["--out", "b"]


def test_a_step_of_fewer_tasks_than_the_job_runs_as_the_script_sized_it(cluster, registry, tmp_path):
    """``srun -n 1 -N 1 driver`` beside a worker step, in a job of 2 tasks on 2 nodes: kept as
    written (launcher direct), the driver runs once, not once a task of the job; the wait after
    it joins the launch. Proven on Slurm 22.05 (the local cluster)."""
    handle = _import_and_submit("local_srun_driver_step", tmp_path)
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    assert sorted(p.name for p in tmp_path.glob("*.json")) == ["driver.0.json", "worker.0.json"]


def test_a_serial_step_after_an_srun_of_several_cores_a_task_keeps_the_cores(cluster, registry, tmp_path):
    """``srun prog > log`` with -c 2, then a serial line: run once in the batch shell, srun told
    the cores again (since 22.05 it does not read the job's): each task sees its 2 CPUs, and the
    serial line runs once after both. Proven on Slurm 22.05 (the local cluster)."""
    handle = _import_and_submit("local_hybrid_then_serial", tmp_path)
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    assert (tmp_path / "cores.log").read_text().split() == ["2", "2"]
    assert (tmp_path / "cores.txt").read_text() == "2\n"


def test_gpus_per_task_still_gives_each_task_its_own_gpu(cluster, registry, tmp_path):
    """``--gpus-per-task=1`` becomes gpus per node and ``#SBATCH --gpu-bind=per_task:1``: each of
    the job's srun tasks sees one GPU of its own, as before, not both. Proven on Slurm 22.05."""
    handle = _import_and_submit("local_gpus_per_task", tmp_path)
    assert handle.wait(0.5).state == "COMPLETED", handle.stderr()
    assert sorted((tmp_path / "gpus.log").read_text().splitlines()) == ["0 0", "1 1"]
