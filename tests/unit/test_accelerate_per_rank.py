"""The accelerate kind starts one srun task per process, as the ddp kind does, and gives each
rank Accelerate's launch settings as the variables `accelerate launch` would set
(accelerate src/accelerate/utils/launch.py, prepare_multi_gpu_env). Red until the launcher
change lands: these tests are its specification."""

from slurmkit.render.render import render

from .test_resolve import job


def _text():
    r = job("narval", {"gpus": "a100:4", "nodes": 2}, kind="accelerate", launch={"command": "python t.py", "mixed_precision": "bf16"})
    return r, render(r.plan)


def test_accelerate_launch_line_runs_the_users_command_in_one_bound_task_per_rank():
    _, text = _text()
    line = next(ln for ln in text.splitlines() if ln.startswith("slurmkit_run "))
    assert "bash -c" not in line and "accelerate launch" not in line
    assert line.endswith(" python t.py")
    assert '--cpus-per-task="${SLURM_CPUS_PER_TASK:-1}"' in line and "--cpu-bind=cores" in line
    assert '--task-prolog="$SLURMKIT_TASK_ENV"' in line and "\nslurmkit_task_env ranks\n" in text


def test_accelerate_settings_are_the_variables_accelerate_launch_sets():
    _, text = _text()
    for name, value in (("ACCELERATE_MIXED_PRECISION", "bf16"), ("ACCELERATE_DYNAMO_BACKEND", "NO")):
        assert f"export {name}={value}\n" in text
