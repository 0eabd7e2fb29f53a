"""An array that keeps SLURM's own task ids (array.indices), on the real local cluster: each task
sees the id the old script's task saw, takes its point of the grid, and is watched by that id."""

import subprocess

from tests.integration.slurm import CLI, local_job


def test_an_array_with_indices_runs_and_is_watched_by_slurms_own_task_ids(cluster, registry, tmp_path):
    sweep = local_job(tmp_path, "ids", kind="array", array={"parameters": {"x": ["a", "b", "c"]}, "indices": "1-5:2"},
                      launch={"shell": 'echo "$SLURM_ARRAY_TASK_ID $x" > "out-$SLURM_ARRAY_TASK_ID.txt"'}).submit()
    assert [t.job_id for t in sweep.tasks] == [f"{sweep.job_id}_{i}" for i in (1, 3, 5)]
    assert [t.wait(1.0).state for t in sweep.tasks] == ["COMPLETED"] * 3
    assert {p.name: p.read_text() for p in tmp_path.glob("out-*.txt")} == \
        {"out-1.txt": "1 a\n", "out-3.txt": "3 b\n", "out-5.txt": "5 c\n"}
    status = subprocess.run([*CLI, "status", sweep.job_id], capture_output=True, text=True, timeout=120)
    assert status.returncode == 0, status.stderr
    for task in (1, 3, 5):
        assert f"{sweep.job_id}_{task}" in status.stdout
    assert f"{sweep.job_id}_0" not in status.stdout
