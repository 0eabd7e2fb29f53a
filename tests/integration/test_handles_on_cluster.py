"""One handle protocol on the local cluster (Slurm 22.05): JobHandle (script and function),
SweepHandle and ChainHandle all answer state, done(), wait(timeout=...), result(), cancel(),
stdout(), stderr(); as_completed() and tracked() work across them."""

import os

import pytest

import slurmkit
from slurmkit.slurm.handles import JobFailed, WaitTimeout

from .slurm import local_job as job


@pytest.fixture
def registry(tmp_path, monkeypatch):
    path = tmp_path / "registry.jsonl"
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(path))
    return path


def test_a_script_jobs_result_is_its_exit_status(cluster, registry, tmp_path):
    handle = job(tmp_path, command=["bash", "-c", "echo fine"]).submit()
    assert handle.result() == 0
    assert (handle.state, handle.done(), handle.stdout()) == ("COMPLETED", True, "fine\n")


def test_a_failed_script_job_raises_with_the_end_of_its_log(cluster, registry, tmp_path):
    handle = job(tmp_path, command=["bash", "-c", "printf 'line-%s\\n' {1..40} >&2; exit 3"]).submit()
    with pytest.raises(JobFailed) as caught:
        handle.result()
    assert caught.value.exit_status == 3 and caught.value.status.state == "FAILED"
    text = str(caught.value)
    assert f"job {handle.job_id}: FAILED exit 3" in text
    assert "line-40" in text and "line-21" in text and "line-20\n" not in text   # the last 20 lines


def test_wait_with_a_timeout_raises_and_the_job_runs_on(cluster, registry, tmp_path):
    handle = job(tmp_path, command=["sleep", "60"]).submit()
    with pytest.raises(WaitTimeout) as caught:
        handle.wait(0.5, timeout=2)
    assert isinstance(caught.value, TimeoutError) and handle.job_id in str(caught.value)
    assert not handle.done()
    handle.cancel()
    assert handle.wait(0.5, timeout=60).state == "CANCELLED"


def test_a_sweep_is_a_handle_and_its_result_names_the_failed_task(cluster, registry, tmp_path):
    sweep = job(tmp_path, name="sweep", kind="array", command=["bash", "-c", "echo task-$n; test $n != 2"],
                array={"parameters": {"n": ["1", "2", "3"]}}).submit()
    statuses = sweep.wait(0.5, timeout=120)
    assert [s.state for s in statuses.values()] == ["COMPLETED", "FAILED", "COMPLETED"]
    assert sweep.state == "FAILED" and sweep.done()
    with pytest.raises(JobFailed) as caught:
        sweep.result()
    assert caught.value.failed == (f"{sweep.job_id}_1",)
    out = sweep.stdout()
    assert f"==> {sweep.job_id}_0 <==\ntask-1\n" in out and f"==> {sweep.job_id}_2 <==\ntask-3\n" in out


def test_a_function_job_returns_its_value_and_needs_no_launch_key(cluster, registry, tmp_path):
    spec = {"name": "fn", "profile": "local", "account": "def-test", "resources": {"time": "5m", "mem": "500M"},
            "environment": {"variables": {"SK_VALUE": "forty-two"}}}
    future = slurmkit.submit_function(os.getenv, "SK_VALUE", spec=spec, folder=tmp_path / "fn")
    assert future.result() == "forty-two"
    assert future.is_function and future.state == "COMPLETED"


def test_as_completed_yields_each_handle_as_it_ends_and_tracked_folds_chains(cluster, registry, tmp_path):
    slow = job(tmp_path, name="slow", command=["sleep", "8"]).submit()
    quick = job(tmp_path, name="quick", command=["true"]).submit()
    chain = job(tmp_path, name="chain", command=["true"], resubmit={"max_links": 2},
                stage={"checkpoint": {"from": "ckpt", "to": "ckpts", "every": "1m"}}).submit()
    sweep = job(tmp_path, name="sw", kind="array", command=["true"], array={"parameters": {"n": ["1", "2"]}}).submit()
    order = [h.job_id for h in slurmkit.as_completed([slow, quick, chain, sweep], timeout=180, poll_s=0.5)]
    assert sorted(order) == sorted([slow.job_id, quick.job_id, chain.job_id, sweep.job_id])
    assert order.index(quick.job_id) < order.index(slow.job_id)
    assert chain.done() and chain.state == chain.links[-1].state

    handles = slurmkit.tracked()
    assert [type(h).__name__ for h in handles] == ["JobHandle", "JobHandle", "ChainHandle", "SweepHandle"]
    assert [h.job_id for h in handles] == [slow.job_id, quick.job_id, chain.job_id, sweep.job_id]
    assert [link.job_id for link in handles[2].links] == [link.job_id for link in chain.links]
    assert handles[3].size == 2 and handles[0].result() == 0
