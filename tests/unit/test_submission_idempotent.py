"""sbatch is never retried blindly: after a failure that may have reached the controller the job
is looked up by its token first (fake sbatch commands; the real controller is in tests/faults)."""

import os
import stat
import subprocess

import pytest

from slurmkit.api.functions import exit_file_lines
from slurmkit.slurm.registry import RegistryError
from slurmkit.slurm.slurmcli import SchedulerError
from slurmkit.slurm.submit import never_connected, sbatch_command, sbatch_once, submit_script

TIMED_OUT = "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation"


def _counting_sbatch(tmp_path, script):
    """A fake sbatch that counts its runs in ``runs`` and then runs ``script`` (with $n, the run number)."""
    path = tmp_path / "sbatch"
    path.write_text(f'#!/bin/bash\nn=$(( $(cat {tmp_path}/runs 2>/dev/null || echo 0) + 1 )); echo $n > {tmp_path}/runs\n' + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def _runs(tmp_path):
    return int((tmp_path / "runs").read_text())


def test_a_timed_out_sbatch_whose_job_exists_is_not_run_again(tmp_path):
    sbatch = _counting_sbatch(tmp_path, f'echo "{TIMED_OUT}" >&2; exit 1\n')
    lookups = []
    job_id = sbatch_once([str(sbatch)], "tok", retry_for=30, sleep=lambda s: None,
                         lookup=lambda: lookups.append(1) or {"tok": "77"})
    assert job_id == "77" and _runs(tmp_path) == 1 and len(lookups) == 1


def test_sbatch_runs_again_only_after_the_controller_twice_said_no_job_has_the_token(tmp_path):
    sbatch = _counting_sbatch(tmp_path, f'if [ $n -eq 1 ]; then echo "{TIMED_OUT}" >&2; exit 1; fi\necho 78\n')
    answers = iter([SchedulerError("squeue failed: Socket timed out"), {}, {"other": "5"}])

    def lookup():
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    slept = []
    assert sbatch_once([str(sbatch)], "tok", retry_for=30, sleep=slept.append, lookup=lookup) == "78"
    assert _runs(tmp_path) == 2 and slept == [0.5, 2.0]   # the pause between the two answers


def test_a_controller_that_never_answers_says_the_job_may_exist_and_gives_the_token(tmp_path):
    sbatch = _counting_sbatch(tmp_path, f'echo "{TIMED_OUT}" >&2; exit 1\n')

    def lookup():
        raise SchedulerError("squeue failed: Socket timed out")

    with pytest.raises(SchedulerError) as caught:
        sbatch_once([str(sbatch)], "tok9", retry_for=0.0, sleep=lambda s: None, lookup=lookup)
    assert "the job may have been submitted (token tok9); `slurmkit status` adopts it" in caught.value.message
    assert caught.value.transient and _runs(tmp_path) == 1


CONNECT_FAILED = "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)"


def test_a_controller_sbatch_never_connected_to_made_no_job_and_the_error_says_so(tmp_path):
    """With the controller down, sbatch could not connect at all: no request left this host, so
    no job can exist. It used to say "the job may have been submitted", and its intent stayed
    open for a day of warnings. A timed-out attempt keeps the doubt (the test above)."""
    sbatch = _counting_sbatch(tmp_path, f'echo "{CONNECT_FAILED}" >&2; exit 1\n')

    def lookup():
        raise SchedulerError("squeue failed: Unable to contact slurm controller (connect failure)")

    with pytest.raises(SchedulerError) as caught:
        sbatch_once([str(sbatch)], "tok9", retry_for=0.0, sleep=lambda s: None, lookup=lookup)
    assert "no job was submitted, as sbatch could not connect to it" in caught.value.message
    assert not caught.value.transient and "may have been" not in caught.value.message
    assert never_connected(CONNECT_FAILED) and never_connected("Connection refused")
    assert not never_connected(TIMED_OUT) and not never_connected("Unable to contact slurm controller (Socket timed out)")


def test_an_sbatch_that_succeeds_without_printing_an_id_is_looked_up_not_rerun(tmp_path):
    sbatch = _counting_sbatch(tmp_path, 'echo "Submitted to a site plugin"\n')
    job_id = sbatch_once([str(sbatch)], "tok", retry_for=30, sleep=lambda s: None, lookup=lambda: {"tok": "79"})
    assert job_id == "79" and _runs(tmp_path) == 1


def test_a_refusal_is_neither_retried_nor_looked_up(tmp_path):
    sbatch = _counting_sbatch(tmp_path, 'echo "sbatch: error: Invalid account" >&2; exit 1\n')
    with pytest.raises(SchedulerError, match="sbatch refused the job: Invalid account") as caught:
        sbatch_once([str(sbatch)], "tok", retry_for=30, sleep=lambda s: None, lookup=lambda: pytest.fail("looked up"))
    assert not caught.value.transient and _runs(tmp_path) == 1


def test_sbatch_carries_the_token_in_its_comment(tmp_path):
    argv = sbatch_command(tmp_path / "j.sbatch", tmp_path, array=False, token="abc123")
    assert "--comment=slurmkit:abc123" in argv and argv[-1] == str(tmp_path / "j.sbatch")


def test_nothing_is_submitted_when_the_intent_cannot_be_recorded(tmp_path, monkeypatch):
    _counting_sbatch(tmp_path, "echo 1\n")
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    (tmp_path / "jobs.jsonl").mkdir()
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "jobs.jsonl"))
    with pytest.raises(RegistryError, match="^nothing was submitted: cannot write the job registry"):
        submit_script("#!/bin/bash\ntrue\n", tmp_path / "logs", "t", "local")
    assert not (tmp_path / "runs").exists()


def test_a_folder_where_the_script_cannot_be_written_submits_and_records_nothing(tmp_path, monkeypatch):
    from slurmkit.slurm.submit import SubmitError

    _counting_sbatch(tmp_path, "echo 1\n")
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "jobs.jsonl"))
    (tmp_path / "a-file").write_text("")
    with pytest.raises(SubmitError, match=f"^nothing was submitted: cannot write the job script in {tmp_path}/a-file/logs: "):
        submit_script("#!/bin/bash\ntrue\n", tmp_path / "a-file" / "logs", "t", "local")
    assert not (tmp_path / "runs").exists() and not (tmp_path / "jobs.jsonl").exists()


def test_a_submit_that_fails_before_sbatch_accepted_leaves_no_script_in_the_logs_folder(tmp_path, monkeypatch):
    """Whatever the failure (here one no handler expects, as a lock failure was): nothing stays
    in logs/; once sbatch gave the job id, its script stays as <id>_submission.sh."""
    _counting_sbatch(tmp_path, "echo 41\n")
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "jobs.jsonl"))

    def unexpected(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr("slurmkit.slurm.submit.record_intent", unexpected)
        with pytest.raises(KeyboardInterrupt):
            submit_script("#!/bin/bash\ntrue\n", tmp_path / "logs", "t", "local")
    assert os.listdir(tmp_path / "logs") == []
    with monkeypatch.context() as patched:
        patched.setattr("slurmkit.slurm.submit.sbatch_once", unexpected)
        with pytest.raises(KeyboardInterrupt):
            submit_script("#!/bin/bash\ntrue\n", tmp_path / "logs", "t", "local")
    assert os.listdir(tmp_path / "logs") == []
    submit_script("#!/bin/bash\ntrue\n", tmp_path / "logs", "t", "local")
    assert os.listdir(tmp_path / "logs") == ["41_submission.sh"]


def test_a_chain_that_breaks_after_its_first_link_names_the_jobs_already_submitted(tmp_path, monkeypatch):
    from slurmkit.slurm.registry import submissions
    from slurmkit.slurm.submit import ChainIncomplete, submit_chain

    _counting_sbatch(tmp_path, 'if [ $n -eq 1 ]; then echo 101; exit 0; fi\n'
                               'echo "sbatch: error: QOSMaxSubmitJobPerUserLimit" >&2; exit 1\n')
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "jobs.jsonl"))
    with pytest.raises(ChainIncomplete) as caught:
        submit_chain("#!/bin/bash\ntrue\n", 3, tmp_path / "logs", "long", "local")
    assert caught.value.message == ("sbatch refused the job: QOSMaxSubmitJobPerUserLimit (the chain stopped at link 2 of 3; "
                                    "links 1-1 are jobs 101: `slurmkit cancel 101` drops them)")
    assert [(s.job_id, s.chain, s.link, s.links) for s in submissions(tmp_path / "jobs.jsonl")] == [("101", "101", 1, 3)]


def test_the_exit_file_lines_of_a_function_job_pass_bash_n_and_shellcheck(tmp_path):
    script = tmp_path / "setup.sh"
    script.write_text("#!/bin/bash\n" + "\n".join(exit_file_lines(tmp_path / "it's here")) + "\n")
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    checked = subprocess.run(["shellcheck", str(script)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout


def test_the_exit_file_of_a_function_job_holds_its_exit_code_and_appears_whole(tmp_path):
    script = "\n".join(exit_file_lines(tmp_path)) + "\nexit 3\n"
    subprocess.run(["bash", "-c", script], env={**os.environ, "SLURM_JOB_ID": "55"})
    assert (tmp_path / "55.exit").read_text() == "3\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["55.exit"]
