"""The submission registry under concurrency, and the retry rules for SLURM's commands."""

import multiprocessing
import stat

import pytest

from slurmkit.slurm.registry import Submission, find, record, submissions
from slurmkit.slurm.slurmcli import SchedulerError, run_slurm
from slurmkit.slurm.submit import parse_job_id, sbatch_command


def _record_many(path, start, count):
    for i in range(start, start + count):
        record(Submission(job_id=str(i), name="x" * 200, folder="/f", profile="local", submitted="t"), path)


def test_concurrent_writers_lose_and_mangle_no_record(tmp_path):
    path = tmp_path / "jobs.jsonl"
    workers = [multiprocessing.Process(target=_record_many, args=(path, 1000 * w, 200)) for w in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    ids = [s.job_id for s in submissions(path)]
    assert sorted(ids, key=int) == sorted((str(1000 * w + i) for w in range(4) for i in range(200)), key=int)
    assert len(path.read_text().splitlines()) == 800


def test_a_torn_last_line_is_skipped_and_array_tasks_find_their_array(tmp_path):
    path = tmp_path / "jobs.jsonl"
    record(Submission(job_id="7", name="sweep", folder="/f", profile="local", submitted="t", array_size=3), path)
    with open(path, "a") as handle:
        handle.write('{"job_id": "8", "na')
    assert [s.job_id for s in submissions(path)] == ["7"]
    assert find(["7_2"], path)["7"].array_size == 3


def _fake_command(tmp_path, name, script):
    path = tmp_path / name
    path.write_text("#!/bin/bash\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_transient_controller_errors_are_retried_until_they_pass(tmp_path):
    counter = tmp_path / "count"
    command = _fake_command(tmp_path, "sbatch", f'n=$(cat {counter} 2>/dev/null || echo 0); echo $((n+1)) > {counter}\n'
                            'if [ "$n" -lt 2 ]; then echo "sbatch: error: Batch job submission failed: '
                            'Socket timed out on send/recv operation" >&2; exit 1; fi\n'
                            'echo 123\n')
    slept = []
    result = run_slurm([command], sleep=slept.append)
    assert result.stdout == "123\n" and slept == [0.5, 1.0]


def test_a_refusal_is_not_retried_and_says_the_schedulers_reason(tmp_path):
    command = _fake_command(tmp_path, "sbatch", 'echo "sbatch: error: Batch job submission failed: '
                                                'Invalid account or account/partition combination specified" >&2; exit 1\n')
    slept = []
    with pytest.raises(SchedulerError) as caught:
        run_slurm([command], sleep=slept.append, failed="sbatch refused the job")
    assert str(caught.value) == ("sbatch refused the job: Batch job submission failed: "
                                 "Invalid account or account/partition combination specified")
    assert slept == [] and caught.value.exit_code == 1


def test_a_controller_that_stays_away_is_reported_after_the_retry_window(tmp_path):
    command = _fake_command(tmp_path, "squeue", 'echo "squeue: error: Unable to contact slurm controller (connect failure)" >&2; exit 1\n')
    with pytest.raises(SchedulerError, match="Unable to contact slurm controller"):
        run_slurm([command], retry_for=0.2, sleep=lambda s: None)


def test_sbatch_command_puts_logs_where_submitit_looks_and_spells_dependencies(tmp_path):
    argv = sbatch_command(tmp_path / "j.sbatch", tmp_path, array=True, after=["5", "6"], after_type="any")
    assert argv[:4] == ["sbatch", "--parsable", f"--output={tmp_path}/%A_%a_0_log.out", f"--error={tmp_path}/%A_%a_0_log.err"]
    assert "--dependency=afterany:5:6" in argv
    assert parse_job_id("123;lab\n") == "123"
