"""The distributed kinds: process shape, launchers, rendezvous, thread and NCCL settings,
builds, and the findings about jobs that cannot use their GPUs."""

import pytest

from slurmkit.core.errors import SpecError
from slurmkit.render.render import render
from slurmkit.spec.spec import spec_from_mapping

from .test_resolve import directives, job, only_error, warnings_of


def env(resolution) -> dict:
    assert resolution.plan is not None, resolution.errors
    return dict(resolution.plan.environment)


def test_multigpu_runs_one_srun_task_per_gpu_with_its_rank_from_the_task_prolog():
    r = job("nibi", {"gpus": "h100:2"}, kind="multigpu")
    assert directives(r)["--ntasks-per-node"] == "2"
    assert directives(r)["--cpus-per-task"] == "14"           # nibi's cores per H100
    assert tuple(map(str, r.plan.launcher)) == ("srun", "--cpus-per-task=\"${SLURM_CPUS_PER_TASK:-1}\"")
    assert r.plan.distributed.ranks_from_slurm and r.plan.distributed.rendezvous and not r.plan.distributed.bind_ranks
    text = render(r.plan)
    assert "\nslurmkit_rendezvous $((20000 + SLURM_JOB_ID % 20000))\n" in text and "\nslurmkit_task_env ranks\n" in text
    assert text.endswith('\nslurmkit_run srun --cpus-per-task="${SLURM_CPUS_PER_TASK:-1}" --cpu-bind=cores '
                         '--task-prolog="$SLURMKIT_TASK_ENV" python main.py\n')
    assert "_sk_task" not in text and "bash -c" not in text
    assert env(r)["TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "1"


def test_multigpu_under_torchrun_runs_one_rank_per_gpu_each_on_its_share_of_the_site_cores():
    r = job("nibi", {"gpus": "h100:2"}, kind="multigpu", launch={"command": "python train.py", "launcher": "torchrun"})
    assert directives(r)["--ntasks-per-node"] == "2"
    assert directives(r)["--cpus-per-task"] == "14"           # nibi's cores per H100
    assert tuple(map(str, r.plan.launcher)) == ("torchrun", "--standalone", "--nproc-per-node=\"${SLURM_NTASKS_PER_NODE:-1}\"",
                                                "--no-python")
    assert r.plan.distributed.bind_ranks and not r.plan.distributed.rendezvous
    assert str(env(r)["OMP_NUM_THREADS"]) == "\"${SLURM_CPUS_PER_TASK:-1}\""   # the header's 14
    assert env(r)["TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "1"


def test_multigpu_tensorflow_is_one_process_with_every_core_and_its_thread_pools():
    r = job("nibi", {"gpus": "h100:2"}, kind="multigpu", launch={"command": "python train.py", "framework": "tensorflow"})
    assert directives(r)["--ntasks-per-node"] == "1"
    assert directives(r)["--cpus-per-task"] == "28"
    assert r.plan.launcher == () and r.plan.distributed is None
    assert str(env(r)["TF_NUM_INTRAOP_THREADS"]) == "\"${SLURM_CPUS_PER_TASK:-1}\""   # the header's 28
    assert not any(name.startswith(("NCCL_", "TORCH_")) for name in env(r))     # TensorFlow reads none of them


def test_multigpu_needs_gpus_and_one_node():
    assert "needs GPUs" in only_error(job("nibi", kind="multigpu")).message
    error = only_error(job("nibi", {"gpus": "h100:2", "nodes": 2}, kind="multigpu"))
    assert error.field == "resources.nodes"
    assert error.message == ("kind 'multigpu' runs on one node; for several, use kind 'ddp', 'horovod', 'lightning' "
                             "or 'accelerate' (PyTorch)")


def test_multigpu_tensorflow_on_several_nodes_is_offered_the_tensorflow_kinds():
    error = only_error(job("nibi", {"gpus": "h100:2", "nodes": 2}, kind="multigpu",
                           launch={"command": "python train.py", "framework": "tensorflow"}))
    assert error.message == "kind 'multigpu' runs on one node; for several, use kind 'tf-multiworker' or 'horovod' (TensorFlow)"


def test_ddp_starts_one_srun_task_per_gpu_with_ranks_from_slurm_and_a_rendezvous():
    r = job("narval", {"gpus": "a100:4", "nodes": 2, "cpus_per_task": 8}, kind="ddp")
    assert directives(r)["--ntasks-per-node"] == "4"
    assert tuple(map(str, r.plan.launcher)) == ("srun", "--cpus-per-task=\"${SLURM_CPUS_PER_TASK:-1}\"")
    d = r.plan.distributed
    assert d.rendezvous and d.ranks_from_slurm and d.tasks_per_node == 4
    assert str(env(r)["OMP_NUM_THREADS"]) == "\"${SLURM_CPUS_PER_TASK:-1}\""


def test_ddp_tasks_per_node_other_than_the_gpu_count_is_refused():
    error = only_error(job("narval", {"gpus": "a100:4", "nodes": 2, "tasks_per_node": 2}, kind="ddp"))
    assert error.field == "resources.tasks_per_node" and "one process per GPU" in error.message


def test_ddp_on_cpus_keeps_the_asked_shape_for_gloo():
    r = job("local", {"nodes": 2, "tasks_per_node": 2}, kind="ddp", account="def-test")
    assert directives(r)["--ntasks-per-node"] == "2"
    assert "TORCH_NCCL_ASYNC_ERROR_HANDLING" not in env(r)


def test_ddp_refuses_tensorflow_and_tf_multiworker_refuses_pytorch():
    assert "kind 'tf-multiworker'" in only_error(job("nibi", {"gpus": "h100:2", "nodes": 2}, kind="ddp",
                                                     launch={"command": "python t.py", "framework": "tensorflow"})).message
    assert "kind 'ddp'" in only_error(job("nibi", {"gpus": "h100:2", "nodes": 2}, kind="tf-multiworker",
                                          launch={"command": "python t.py", "framework": "pytorch"})).message


def test_tf_multiworker_builds_tf_config_and_sets_intra_and_inter_op_threads():
    r = job("rorqual", {"gpus": "h100:4", "nodes": 2, "cpus_per_task": 4}, kind="tf-multiworker")
    assert r.plan.distributed.tf_config and r.plan.distributed.tasks_per_node == 4
    assert str(env(r)["TF_NUM_INTRAOP_THREADS"]) == "\"${SLURM_CPUS_PER_TASK:-1}\""
    # per task, as its intra-op threads: rorqual's GPU nodes have two sockets, shared by 4 tasks
    assert env(r)["TF_NUM_INTEROP_THREADS"] == "1"
    one = job("rorqual", {"gpus": "h100:1", "nodes": 2, "cpus_per_task": 16}, kind="tf-multiworker")
    assert env(one)["TF_NUM_INTEROP_THREADS"] == "2"      # one task a node: its slice may span both sockets


def test_tensorflow_on_cpus_gets_intels_kmp_settings():
    r = job("local", {"nodes": 2, "tasks_per_node": 1, "cpus_per_task": 2}, kind="tf-multiworker", account="def-test")
    assert env(r)["KMP_BLOCKTIME"] == "0"
    assert env(r)["KMP_AFFINITY"] == "granularity=fine,compact,1,0"


def test_horovod_with_srun_goes_through_the_sites_mpi_plugin():
    r = job("local", {"nodes": 2, "tasks_per_node": 2}, kind="horovod", account="def-test")
    assert tuple(map(str, r.plan.launcher)) == ("srun", "--mpi=pmix", "--cpus-per-task=\"${SLURM_CPUS_PER_TASK:-1}\"")


def test_ethernet_clusters_leave_ncclib_to_nccl():
    """NCCL_IB_DISABLE=1 had no source and forces TCP sockets where the Ethernet does RoCE."""
    r = job("local", {"gpus": "p100:2"}, kind="multigpu", account="def-test")
    assert "NCCL_IB_DISABLE" not in env(r)


def test_a_distributed_job_on_one_gpu_is_told_to_use_kind_gpu():
    r = job("nibi", {"gpus": "h100:1", "nodes": 1}, kind="ddp")
    assert any("use kind 'gpu'" in m for m in warnings_of(r, "resources.gpus"))


def test_a_batch_too_small_for_its_gpus_is_warned_about():
    r = job("nibi", {"gpus": "h100:4", "nodes": 2}, kind="ddp", launch={"command": "python t.py", "batch_size": 8})
    (message,) = warnings_of(r, "launch.batch_size")
    assert "8 samples per GPU" in message and "8 GPUs" in message
    assert warnings_of(job("nibi", {"gpus": "h100:4", "nodes": 2}, kind="ddp", launch={"command": "python t.py", "batch_size": 64}),
                       "launch.batch_size") == []


def test_kind_gpu_with_several_gpus_and_one_process_points_to_multigpu():
    r = job("nibi", {"gpus": "h100:2"}, kind="gpu")
    assert any("kind 'multigpu'" in m for m in warnings_of(r, "resources.gpus"))


def test_builds_need_a_venv():
    error = only_error(job("local", {"nodes": 2}, kind="horovod", account="def-test", environment={"builds": ["horovod"]}))
    assert error.field == "environment.builds" and "virtualenv" in error.message


def test_a_horovod_build_loads_mpi_cuda_and_nccl_and_passes_the_nccl_home():
    r = job("local", {"gpus": "p100:2"}, kind="horovod", account="def-test",
            environment={"venv": {"packages": ["torch"]}, "builds": ["horovod==0.28.1"]})
    assert {"openmpi/4.1.5", "cuda/12.2", "nccl/2.18.3"} <= set(r.plan.modules)
    (build,) = r.plan.builds
    assert build.requirement == "horovod==0.28.1" and not build.from_wheelhouse
    variables = dict(build.variables)
    assert variables["HOROVOD_GPU_OPERATIONS"] == "NCCL" and variables["HOROVOD_NCCL_HOME"] == "$EBROOTNCCL"
    assert variables["HOROVOD_WITH_PYTORCH"] == "1" and variables["HOROVOD_WITH_MPI"] == "1"
    assert build.cache == "$HOME/.cache/slurmkit/builds"


def test_on_a_wheelhouse_site_horovod_comes_from_the_wheelhouse_first_and_the_cache_is_on_scratch():
    r = job("nibi", {"gpus": "h100:2"}, kind="horovod", environment={"venv": {"packages": ["torch"]}, "builds": ["horovod"],
                                                                      "modules": ["cuda/12.2", "nccl/2.18"]})
    (build,) = r.plan.builds
    assert build.from_wheelhouse and build.pip_options == ("--no-index",)
    assert build.cache == "/scratch/$USER/slurmkit-builds"


def test_an_unknown_build_is_refused_with_a_suggestion():
    with pytest.raises(SpecError) as caught:
        spec_from_mapping({"name": "x", "resources": {"time": "1h"}, "launch": "true", "environment": {"builds": ["horovd"]}}, "job.yaml")
    assert "did you mean 'horovod'?" in str(caught.value)


def test_multi_node_job_local_venv_is_made_on_every_node():
    r = job("local", {"nodes": 2, "tasks_per_node": 2}, kind="ddp", account="def-test", environment={"venv": {"packages": ["torch"]}})
    assert r.plan.venv.per_node and r.plan.venv.nodes == 2
    lasting = job("local", {"nodes": 2}, kind="ddp", account="def-test", environment={"venv": {"path": "/project/env"}})
    assert not lasting.plan.venv.per_node


def test_default_cores_per_gpu_never_exceed_a_nodes_fair_share():
    # Graham caps cores per GPU at 16, but its T4 nodes have 44 cores for 4 GPUs: 11 each.
    from slurmkit.resolve.resolve import resolve
    from slurmkit.sites.profiles import load_profile
    from slurmkit.spec.spec import spec_from_mapping

    spec = spec_from_mapping({"name": "d", "kind": "ddp", "resources": {"nodes": 2, "gpus": "t4:4", "mem": "64G", "time": "1h"},
                              "launch": "python x.py"})
    resolution = resolve(spec, load_profile("graham"))
    assert resolution.errors == ()
    assert ("--cpus-per-task", "11") in resolution.plan.directives
