"""Submitting while the controller is slow, or while the submitting slurmkit dies: one job per
submit, recorded once, on the real local cluster.

What these prove, they prove on Debian's Slurm 22.05: sbatch ``--comment``, squeue's ``%k``
and sacct's ``SubmitLine`` are spelled and behave the same on Slurm 23.x and 24.x, which the
Alliance runs, but that is not tested here.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml

from slurmkit.slurm.registry import intent, record, submissions
from tests.integration.slurm import CLI, GUARD_S, ctrl_c_as_at_a_terminal, read_until, wait_until

from .conftest import paused


def write_spec(tmp_path: Path, name: str, command=("true",)) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "profile": "local", "account": "def-test", "resources": {"time": "5m"},
                                    "launch": {"command": list(command)}}))
    return path


def run_cli(*args, env=None, timeout=GUARD_S, merged=False) -> subprocess.CompletedProcess:
    """A slurmkit command in a process of its own; with ``merged``, stderr comes in stdout, in order."""
    result = subprocess.run([*CLI, *map(str, args)], capture_output=not merged, text=True, timeout=timeout, env=env,
                            **({"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT} if merged else {}))
    assert "Traceback" not in (result.stdout or "") + (result.stderr or "")
    return result


def start_cli(*args, env=None, merged=False) -> subprocess.Popen:
    return subprocess.Popen([*CLI, *map(str, args)], stdout=subprocess.PIPE, text=True, env=env,
                            stderr=subprocess.STDOUT if merged else subprocess.PIPE,
                            preexec_fn=ctrl_c_as_at_a_terminal)


def jobs_with_token(token: str):
    """Every job the controller or accounting knows with this token (read here with the plain
    commands, not with slurmkit's lookup)."""
    squeue = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i|%k"], capture_output=True, text=True, check=True).stdout
    found = {line.split("|")[0] for line in squeue.splitlines() if line.split("|", 1)[1:] == [f"slurmkit:{token}"]}
    sacct = subprocess.run(["sacct", "-X", "-n", "-P", "-o", "JobID,SubmitLine", "-S", "now-1hours"],
                           capture_output=True, text=True).stdout
    found |= {line.split("|")[0] for line in sacct.splitlines() if f"slurmkit:{token}" in line}
    return sorted(found)


def registry_lines(path: Path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def recorded(path: Path, token: str):
    """The job ids recorded for ``token`` (each record of a job, so a double record shows twice)."""
    return [line["job_id"] for line in registry_lines(path) if line.get("token") == token and line["job_id"]]


class HeldSbatch:
    """A real sbatch whose answer is held back until ``release()``: the job exists while the
    slurmkit that submitted it waits between sbatch and the id record (where a crash, a full
    disk or a held lock hurt).

    Only an accepted job is held, and its id appears in ``submitted`` whole (written aside, then
    renamed): a refusal (a controller too busy to answer in time) goes back to slurmkit at once,
    to be looked up and retried as it would be, and the test waits on the job that sbatch made,
    not on whichever sbatch answered first, nor on a file that exists but is not written yet.
    The hold itself ends after ``GUARD_S`` should nothing release it.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir()
        real = shutil.which("sbatch")
        shim = folder / "sbatch"
        shim.write_text(f'#!/bin/bash\nout=$({real} "$@"); rc=$?\n'
                        f'if [ $rc = 0 ]; then\n'
                        f'    echo "$out" > {folder}/submitted.part && mv {folder}/submitted.part {folder}/submitted\n'
                        f'    for _ in $(seq {int(GUARD_S * 10)}); do [ -e {folder}/go ] && break; sleep 0.1; done\n'
                        f'fi\necho "$out"; exit $rc\n')
        shim.chmod(0o755)
        self.env = {**os.environ, "PATH": f"{folder}:{os.environ['PATH']}"}

    def submitted(self) -> str:
        """Wait until the real sbatch accepted the job; the job id it gave."""
        wait_until((self.folder / "submitted").exists, "sbatch's acceptance")
        return (self.folder / "submitted").read_text().strip().split(";")[0]

    def release(self) -> None:
        (self.folder / "go").write_text("")


@pytest.fixture
def held_sbatch(tmp_path):
    held = HeldSbatch(tmp_path / "held-sbatch")
    yield held
    held.release()


def test_a_submit_while_the_controller_is_paused_makes_one_job_recorded_once(cluster, registry, tmp_path):
    """sbatch times out on a SIGSTOPped slurmctld, but its request waits in the
    socket and is handled on SIGCONT; a blind retry made a second job. The controller goes on
    once sbatch has failed (as -v reports it), whatever time that took."""
    spec = write_spec(tmp_path, "paused")
    said = bytearray()
    with paused(cluster, "slurmctld"):
        submit = start_cli("-v", "submit", spec)
        assert read_until({submit.stderr.fileno(): said}, lambda: re.search(rb"^slurmkit: ran sbatch .*, exit [1-9]", said, re.M)), said
    out, err = submit.communicate(timeout=GUARD_S)
    err = said.decode() + err
    assert submit.returncode == 0, err
    assert "Traceback" not in out + err
    job_id = re.search(r"submitted job (\d+)", out).group(1)
    token = registry_lines(registry)[0]["token"]
    assert jobs_with_token(token) == [job_id]
    assert recorded(registry, token) == [job_id]


def test_a_controller_silent_past_the_retry_window_gives_the_token_and_status_adopts_the_job(cluster, registry, tmp_path):
    spec = write_spec(tmp_path, "silent")
    with paused(cluster, "slurmctld"):
        submit = run_cli("submit", spec, env={**os.environ, "SLURMKIT_SUBMIT_RETRY_S": "5"}, timeout=120)
    assert submit.returncode == 1 and submit.stdout == ""
    [line] = submit.stderr.splitlines()
    assert re.match(r"error: the controller did not answer for 5s \(.*Socket timed out.*\): the job may have been "
                    r"submitted \(token \w+\); `slurmkit status` adopts it once the controller answers$", line), line
    token = re.search(r"token (\w+)", line).group(1)
    assert registry_lines(registry)[0]["token"] == token and recorded(registry, token) == []
    [job_id] = wait_until(lambda: jobs_with_token(token), "the queued submission")   # handled on SIGCONT
    status = run_cli("status")
    assert status.returncode == 0
    assert f"adopted job {job_id} (submitted by an interrupted slurmkit)" in status.stderr
    assert re.search(rf"^{job_id}\tsilent\t", status.stdout, re.M)
    assert "adopted" not in run_cli("status").stderr
    assert recorded(registry, token) == [job_id] and jobs_with_token(token) == [job_id]


def test_status_adopts_a_job_whose_submit_died_between_sbatch_and_the_id_record(cluster, registry, tmp_path):
    token = uuid.uuid4().hex
    dead = subprocess.Popen(["true"])
    dead.wait()
    record(intent("crashed", str(tmp_path), "local", token)._replace(pid=dead.pid), registry)
    job_id = subprocess.run(["sbatch", "--parsable", f"--comment=slurmkit:{token}", "--account=def-test", "-t", "5",
                             "-o", "/dev/null", "--wrap", "true"], capture_output=True, text=True, check=True).stdout.strip()
    status = run_cli("status")
    assert status.stderr == f"adopted job {job_id} (submitted by an interrupted slurmkit)\n"
    assert re.search(rf"^{job_id}\tcrashed\t", status.stdout, re.M)
    assert [s.job_id for s in submissions(registry)] == [job_id]


def test_a_submit_killed_after_sbatch_leaves_its_job_for_status_to_adopt(cluster, registry, tmp_path, held_sbatch):
    submit = start_cli("submit", write_spec(tmp_path, "killed"), env=held_sbatch.env)
    job_id = held_sbatch.submitted()
    submit.send_signal(signal.SIGKILL)
    submit.wait(timeout=GUARD_S)
    token = registry_lines(registry)[0]["token"]
    assert recorded(registry, token) == []
    status = run_cli("status")
    assert f"adopted job {job_id} (submitted by an interrupted slurmkit)" in status.stderr
    assert recorded(registry, token) == [job_id] and jobs_with_token(token) == [job_id]


def test_submit_function_is_recorded_and_leaves_an_exit_file(cluster, registry, tmp_path):
    from slurmkit.api.functions import submit_function

    spec = {"name": "fn", "profile": "local", "account": "def-test", "resources": {"time": "5m", "mem": "500M"},
            "launch": "unused"}
    folder = tmp_path / "fn"
    job = submit_function(int, "7", spec=spec, folder=folder)
    failing = submit_function(int, "seven", spec=spec, folder=folder)
    assert job.result() == 7
    with pytest.raises(Exception, match="invalid literal for int"):
        failing.result()
    entries = submissions(registry)
    assert [(e.job_id, e.name, e.folder, e.profile) for e in entries] == [(j.job_id, "fn", str(folder), "local") for j in (job, failing)]
    assert [jobs_with_token(e.token) for e in entries] == [[job.job_id], [failing.job_id]]
    for handle, code in ((job, "0"), (failing, "1")):
        exit_file = folder / f"{handle.job_id}.exit"
        wait_until(exit_file.exists, "the exit file")
        assert exit_file.read_text() == f"{code}\n"


def test_a_submit_interrupted_with_ctrl_c_after_sbatch_says_so_in_one_line_and_status_adopts(cluster, registry, tmp_path,
                                                                                            held_sbatch):
    """Ctrl-C while slurmkit waits for sbatch's answer, after the controller made the job (the
    shim holds the answer back, so the signal cannot come too early or too late)."""
    submit = start_cli("submit", write_spec(tmp_path, "ctrlc"), env=held_sbatch.env)
    job_id = held_sbatch.submitted()
    submit.send_signal(signal.SIGINT)
    out, err = submit.communicate(timeout=GUARD_S)
    assert (submit.returncode, out) == (130, "")
    assert err == "error: interrupted: if sbatch had already accepted the job, `slurmkit status` adopts it\n"
    assert f"adopted job {job_id} (submitted by an interrupted slurmkit)" in run_cli("status").stderr
