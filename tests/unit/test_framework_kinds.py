"""Kinds lightning and accelerate: their shape, launch and directives, and the lightning script's
requeue handling run in bash with a stand-in srun (the real one: tests/integration/test_framework_kinds_slow.py)."""

import signal
import subprocess
import time
from pathlib import Path

import pytest

from slurmkit.render.render import render
from slurmkit.render.runtime import write_runtime
from slurmkit.spec.spec import load_spec

from .test_resolve import directives, job, only_error

STAND_IN_SRUN = """#!/bin/bash
# srun as far as the batch shell sees it: relays USR1 and TERM to its task, like the real one.
while [[ $1 == --* ]]; do shift; done
"$@" &
child=$!
trap 'kill -USR1 $child' USR1
trap 'kill -TERM $child; wait $child; exit 143' TERM
while true; do
    wait $child && exit 0
    rc=$?
    kill -0 $child 2> /dev/null || exit $rc
done
"""
#: The payload: says when it has the signal (as Lightning would save and requeue) and runs on.
PAYLOAD = "import signal, time, sys\nsignal.signal(signal.SIGUSR1, lambda *a: print('got USR1', flush=True))\ntime.sleep(30)\n"


def env(resolution) -> dict:
    assert resolution.plan is not None, resolution.errors
    return dict(resolution.plan.environment)


def words(resolution):
    return [str(w) for w in resolution.plan.launcher]


def test_lightning_runs_one_srun_task_per_gpu_with_the_requeue_directives():
    r = job("narval", {"gpus": "a100:4", "nodes": 2, "time": "3h"}, kind="lightning")
    d = directives(r)
    assert d["--ntasks-per-node"] == "4" and d["--signal"] == "B:USR1@90" and "--requeue" in d and d["--open-mode"] == "append"
    assert words(r) == ["srun", '--cpus-per-task="${SLURM_CPUS_PER_TASK:-1}"']
    p = r.plan.distributed
    assert p.rendezvous and p.master_env and not p.ranks_from_slurm and p.requeue_lead_s == 90
    assert env(r)["TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "1"
    text = render(r.plan)
    assert "\nslurmkit_rendezvous $((20000 + SLURM_JOB_ID % 20000))  # MASTER_ADDR" in text and "\nslurmkit_lightning_requeue 90\n" in text


def test_lightning_on_a_one_minute_job_is_told_half_way():
    r = job("local", {"time": "1m", "nodes": 2, "tasks_per_node": 2}, kind="lightning")
    assert directives(r)["--signal"] == "B:USR1@30"


def test_lightnings_lead_is_stage_lead_where_the_spec_gives_one():
    """An outside tester: a 32-rank save to /project can need more than 90 s, and stage.lead was
    accepted and ignored (extra --signal is refused, rightly: it would contradict the trap's lead)."""
    r = job("fir", {"gpus": "h100:4", "nodes": 8, "time": "2d"}, kind="lightning", stage={"lead": "10m"})
    assert directives(r)["--signal"] == "B:USR1@600" and r.plan.distributed.requeue_lead_s == 600
    assert "\nslurmkit_lightning_requeue 600\n" in render(r.plan)
    error = only_error(job("fir", {"gpus": "h100:4", "time": "5m"}, kind="lightning", stage={"lead": "6m"}))
    assert error.field == "stage.lead" and "leaves no time to run" in error.message


def test_a_lead_with_nothing_to_copy_back_is_said_to_do_nothing_for_other_kinds():
    r = job("fir", {"gpus": "h100:1"}, kind="gpu", stage={"lead": "10m"})
    assert [w.field for w in r.warnings if "the lead does nothing" in w.message] == ["stage.lead"]


@pytest.mark.parametrize("shell", ["python train.py 2>&1 | tee train.log", "cd run && python train.py",
                                   "python train.py > log 2>&1", "exec python train.py | tee log"])
def test_lightning_refuses_a_shell_line_whose_other_processes_die_of_the_signal(shell):
    """An outside tester, on Slurm 22.05: srun passed USR1 to bash and tee too; they died, and
    Lightning's save with them (the job FAILED with exit 10, no checkpoint, no requeue)."""
    error = only_error(job("fir", {"gpus": "h100:2"}, kind="lightning", launch={"shell": shell}))
    assert error.field == "launch.shell" and "(exec python train.py > train-$SLURM_PROCID.log 2>&1)" in error.message


@pytest.mark.parametrize("shell", ["exec python train.py > train-$SLURM_PROCID.log 2>&1", "exec python train.py &> log"])
def test_lightning_takes_a_shell_line_that_execs_the_program(shell):
    assert job("fir", {"gpus": "h100:2"}, kind="lightning", launch={"shell": shell}).plan is not None


def test_lightning_with_resubmit_is_told_it_requeues_itself():
    """An outside tester: resubmit asked for stage.checkpoint, which kind lightning refuses: a dead end."""
    error = only_error(job("fir", {"gpus": "h100:4", "time": "7d"}, kind="lightning", resubmit={"max_links": 3}))
    assert error.field == "resubmit" and error.message.endswith("as often as it takes: remove resubmit")


def test_lightning_refuses_a_copy_back_that_needs_the_same_signal():
    r = job("narval", {"gpus": "a100:1"}, kind="lightning", stage={"outputs": [{"from": "runs", "to": "results"}]})
    assert "SIGUSR1" in only_error(r).message


@pytest.mark.parametrize("extra, verb, own", [
    ("--signal=B:USR1@60", "contradicts", "--signal=B:USR1@90"),
    ("--sig=USR1@300", "contradicts", "--signal=B:USR1@90"),     # sbatch takes any unique prefix
    ("--open-mode=truncate", "contradicts", "--open-mode=append"),
    ("--no-requeue", "contradicts", "--requeue"),
    ("--requeue", "repeats", "--requeue"),
])
def test_lightning_refuses_an_extra_directive_that_changes_its_requeue(extra, verb, own):
    """The later of two directives wins: the save would come at another time, the job would not
    be requeued, or the next run would overwrite the first's log."""
    error = only_error(job("narval", {"gpus": "a100:2"}, kind="lightning", extra_directives=[extra]))
    assert error.field == "extra_directives.0"
    assert error.message.startswith(f"{extra!r} {verb} the {own} slurmkit writes for kind 'lightning'")


def test_other_kinds_may_ask_for_a_requeue_or_a_signal():
    r = job("narval", {"gpus": "a100:2"}, kind="ddp", extra_directives=["--requeue", "--signal=USR1@60", "--open-mode=append"])
    assert r.plan is not None and directives(r)["--signal"] == "USR1@60"


def test_lightning_and_accelerate_run_pytorch_only():
    for kind in ("lightning", "accelerate"):
        r = job("narval", {"gpus": "a100:2"}, kind=kind, launch={"command": "python t.py", "framework": "tensorflow"})
        assert only_error(r).field == "launch.framework"


def test_accelerate_runs_one_srun_task_per_process_with_accelerates_settings_in_the_environment():
    r = job("narval", {"gpus": "a100:4", "nodes": 2}, kind="accelerate", launch={"command": "python t.py", "mixed_precision": "bf16"})
    assert directives(r)["--ntasks-per-node"] == "4"     # processes per node, as the header says
    assert words(r)[0] == "srun" and "--ntasks-per-node=1" not in words(r)
    assert env(r)["ACCELERATE_MIXED_PRECISION"] == "bf16" and env(r)["ACCELERATE_DYNAMO_BACKEND"] == "NO"
    assert "ACCELERATE_USE_CPU" not in env(r)
    text = render(r.plan)
    assert "bash -c" not in text and "\n# No `accelerate launch` (not required: " in text


def test_accelerate_mixed_precision_defaults_to_accelerates_own_and_reads_a_bare_no(tmp_path):
    r = job("narval", {"gpus": "a100:1"}, kind="accelerate")
    assert env(r)["ACCELERATE_MIXED_PRECISION"] == "no"
    yaml = tmp_path / "job.yaml"
    yaml.write_text("name: t\nkind: accelerate\nprofile: narval\naccount: def-x\nresources: {gpus: 'a100:1', time: 1h}\n"
                    "launch: {command: python t.py, mixed_precision: no}\n")     # YAML reads a bare no as false
    assert load_spec(yaml).launch.mixed_precision == "no"


def test_accelerate_alone_on_one_gpu_runs_one_process_with_no_ranks():
    """As `accelerate launch` without --multi_gpu: no LOCAL_RANK, so Accelerate makes no process group."""
    text = render(job("narval", {"gpus": "a100:1"}, kind="accelerate", launch={"command": "python t.py"}).plan)
    assert "slurmkit_task_env" not in text and "slurmkit_rendezvous" not in text
    launch = next(line for line in text.splitlines() if line.startswith("slurmkit_run "))
    assert launch == 'slurmkit_run srun --cpus-per-task="${SLURM_CPUS_PER_TASK:-1}" python t.py'


def test_accelerate_on_cpu_nodes_tells_accelerate_so():
    r = job("local", {"nodes": 2, "tasks_per_node": 2}, kind="accelerate")
    assert env(r)["ACCELERATE_USE_CPU"] == "true"


def test_mixed_precision_is_for_kind_accelerate_only():
    r = job("narval", {"gpus": "a100:2"}, kind="ddp", launch={"command": "python t.py", "mixed_precision": "fp16"})
    assert only_error(r).field == "launch.mixed_precision"


# ---------------------------------------------------------------- the requeue, in bash


def _lightning_script(tmp_path: Path) -> Path:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "srun").write_text(STAND_IN_SRUN)
    (tmp_path / "bin" / "scontrol").write_text("#!/bin/bash\necho node1\n")
    (tmp_path / "bin" / "module").write_text("#!/bin/bash\n")      # the local profile's Lmod: nothing to load here
    for name in ("srun", "scontrol", "module"):
        (tmp_path / "bin" / name).chmod(0o755)
    (tmp_path / "payload.py").write_text(PAYLOAD)
    r = job("local", {"time": "10m", "nodes": 1, "tasks_per_node": 1}, kind="lightning",
            launch={"command": f"python3 {tmp_path}/payload.py"})
    script = tmp_path / "job.sh"
    script.write_text(render(r.plan))
    write_runtime(tmp_path)   # as slurmkit submit writes it (the script looks in $SLURM_SUBMIT_DIR, then here: cwd)
    return script


def _start(tmp_path: Path, script: Path):
    env = {"PATH": f"{tmp_path}/bin:/usr/bin:/bin", "SLURMKIT_JOB_DIR": str(tmp_path), "SLURM_JOB_ID": "42",
           "SLURM_JOB_NODELIST": "node1", "SLURM_NNODES": "1", "HOME": str(tmp_path)}
    out = open(tmp_path / "log", "w")
    process = subprocess.Popen(["bash", str(script)], env=env, stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path)
    time.sleep(1.5)
    return process


def test_usr1_reaches_the_ranks_and_the_requeues_term_writes_no_exit_file(tmp_path):
    script = _lightning_script(tmp_path)
    process = _start(tmp_path, script)
    process.send_signal(signal.SIGUSR1)
    time.sleep(1)
    process.send_signal(signal.SIGTERM)      # what `scontrol requeue` does to a running job
    assert process.wait(20) == 143
    log = (tmp_path / "log").read_text()
    assert "got USR1" in log and "requeued by Lightning" in log
    assert not (tmp_path / "42.exit").exists()   # `slurmkit status` asks SLURM: the job is pending again


def test_a_term_without_the_signal_first_is_an_ending_and_is_recorded(tmp_path):
    script = _lightning_script(tmp_path)
    process = _start(tmp_path, script)
    process.send_signal(signal.SIGTERM)      # scancel
    assert process.wait(20) == 143
    assert (tmp_path / "42.exit").read_text().split() == ["143"]


def test_a_payload_that_ends_after_the_signal_waits_for_the_requeue_rather_than_race_it(tmp_path):
    script = _lightning_script(tmp_path)
    (tmp_path / "payload.py").write_text("import signal, time\nsignal.signal(signal.SIGUSR1, lambda *a: None)\n"
                                         "time.sleep(2)\n")
    process = _start(tmp_path, script)
    process.send_signal(signal.SIGUSR1)
    time.sleep(2)                            # the payload has ended; the batch shell still waits
    assert process.poll() is None
    process.send_signal(signal.SIGTERM)
    assert process.wait(20) == 143 and not (tmp_path / "42.exit").exists()


@pytest.mark.parametrize("kind", ["lightning", "accelerate"])
def test_gpu_view_own_is_refused_where_the_framework_picks_the_gpu(kind):
    from slurmkit.resolve.resolve import resolve
    from slurmkit.sites.profiles import load_profile
    from slurmkit.spec.spec import spec_from_mapping

    spec = spec_from_mapping({"name": "r", "account": "def-x", "kind": kind, "resources": {"time": "1h", "gpus": "h100:2"},
                              "launch": {"command": "python train.py", "gpu_view": "own"}}, source="job.yaml")
    errors = resolve(spec, load_profile("fir")).errors
    assert [(e.field, e.message.split(":")[0]) for e in errors] == [
        ("launch.gpu_view", f"kind {kind!r} picks each process's GPU itself, by its local rank among the node's GPUs")]


@pytest.mark.parametrize("kind", ["lightning", "accelerate"])
def test_lightning_and_accelerate_on_one_gpu_are_not_sent_to_kind_gpu(kind):
    """On one GPU the framework runs one process with no process group: nothing to pay for, and
    kind gpu would lose Lightning's requeue (an outside tester)."""
    r = job("fir", {"gpus": "h100:1"}, kind=kind)
    assert r.plan is not None and not [w for w in r.warnings if "pays for communication" in w.message]


def test_ddp_on_one_gpu_is_still_sent_to_kind_gpu():
    r = job("fir", {"gpus": "h100:1"}, kind="ddp")
    assert [w.field for w in r.warnings if "pays for communication" in w.message] == ["resources.gpus"]


@pytest.mark.parametrize("kind, directive", [("accelerate", "--signal=B:USR1@90"), ("gpu", "--signal=B:SIGUSR2@60"),
                                             ("serial", "--sig=RB:10@120"), ("ddp", "--signal=B:HUP")])
def test_a_signal_to_the_batch_shell_that_it_has_no_trap_for_is_refused(kind, directive):
    """An outside tester copied Lightning's --signal=B:USR1@90 to kind accelerate: its script has
    no USR1 trap, so the batch shell would die 90 s early and no exit file would record it."""
    resources = {"gpus": "h100:2"} if kind in ("accelerate", "ddp") else {"gpus": "h100:1"} if kind == "gpu" else {}
    error = only_error(job("fir", resources, kind=kind, extra_directives=[directive]))
    assert error.field == "extra_directives.0" and "the batch script has no handler for" in error.message


@pytest.mark.parametrize("directive", ["--signal=USR1@90", "--signal=B:TERM@60", "--signal=R:USR2@30"])
def test_a_signal_to_the_steps_or_one_the_batch_shell_traps_is_taken(directive):
    assert job("fir", {"gpus": "h100:2"}, kind="ddp", extra_directives=[directive]).plan is not None


def test_a_choice_in_the_wrong_case_is_offered_in_the_right_one():
    """An outside tester: `mixed_precision: BF16` got no did-you-mean (difflib compares case)."""
    from slurmkit.core.errors import SpecError
    from slurmkit.spec.spec import spec_from_mapping

    with pytest.raises(SpecError) as raised:
        spec_from_mapping({"name": "a", "kind": "accelerate", "resources": {"time": "1h"},
                           "launch": {"command": "python t.py", "mixed_precision": "BF16"}}, source="job.yaml")
    assert "did you mean 'bf16'?" in raised.value.detail


@pytest.mark.parametrize("kind, packages, warned", [
    ("accelerate", ["torch"], True), ("accelerate", ["torch", "accelerate==1.15.0"], False),
    ("lightning", ["torch"], True), ("lightning", ["pytorch_lightning>=2"], False), ("lightning", ["lightning[extra]"], False),
])
def test_a_venv_without_the_kinds_framework_is_an_error(kind, packages, warned):
    """An outside tester: kind accelerate with a venv of torch alone passed check, and the job
    failed in 3 s with 'exec: accelerate: not found' (exit 127). It will fail: an error, so
    that submit refuses it."""
    r = job("fir", {"gpus": "h100:2"}, kind=kind, environment={"venv": {"packages": packages}})
    assert bool([w for w in r.errors if w.field == "environment.venv.packages" and "would stop at once" in w.message]) == warned


def test_a_requirements_file_may_hold_the_framework():
    r = job("fir", {"gpus": "h100:2"}, kind="accelerate", environment={"venv": {"packages": ["torch"], "requirements": "req.txt"}})
    assert not [w for w in r.findings if "would stop at once" in w.message]


@pytest.mark.parametrize("name", ["bash", "interactive"])
def test_lightning_refuses_a_job_name_it_takes_for_an_interactive_session(name):
    error = only_error(job("fir", {"gpus": "h100:4"}, kind="lightning", name=name))
    assert error.field == "name" and "ignores SLURM" in error.message


@pytest.mark.parametrize("kind", ["lightning", "accelerate"])
def test_a_gpu_binding_is_refused_where_the_framework_picks_the_gpu(kind):
    error = only_error(job("fir", {"gpus": "h100:4"}, kind=kind, extra_directives=["--gpu-bind=single:1"]))
    assert error.field == "extra_directives.0" and "picks each process's GPU itself" in error.message
