"""The registry under faults, through the CLI on the real local cluster (Slurm 22.05 here; the
registry is slurmkit's own file, so nothing here depends on the Slurm version): a full disk, a
torn or foreign line, a read-only file, a folder, a bad XDG_STATE_HOME, a held lock. Never a
traceback; when sbatch accepted the job its id is printed first; nothing is lost."""

import errno
import fcntl
import re
import signal
import subprocess
import time
import uuid

from slurmkit.slurm.registry import all_records

from .conftest import immutable, small_filesystem
from .test_submission import held_sbatch, jobs_with_token, recorded, registry_lines, run_cli, start_cli, write_spec  # noqa: F401

PAGE = 4096


def unique(name: str) -> str:
    return f"{name}{uuid.uuid4().hex[:6]}"


def fill(folder):
    """Fill the filesystem of ``folder`` to the last byte."""
    with open(folder / "filler", "wb", buffering=0) as handle:
        for size in (PAGE * 16, PAGE, 1):
            try:
                while True:
                    handle.write(b"x" * size)
            except OSError as error:
                assert error.errno == errno.ENOSPC


def jobs_named(name: str):
    return subprocess.run(["squeue", "-h", "-t", "all", "-n", name, "-o", "%i"], capture_output=True, text=True,
                          check=True).stdout.split()


def finish(submit: subprocess.Popen):
    out, _ = submit.communicate(timeout=120)
    assert "Traceback" not in out
    return submit.returncode, out.splitlines()


def test_a_full_disk_before_submit_submits_nothing_and_says_so(cluster, tmp_path, monkeypatch):
    name = unique("fullbefore")
    with small_filesystem(cluster, "64k") as full:
        path = full / "jobs.jsonl"
        monkeypatch.setenv("SLURMKIT_REGISTRY", str(path))
        fill(full)
        submit = run_cli("submit", write_spec(tmp_path, name))
        assert (submit.returncode, submit.stdout) == (1, "")
        assert submit.stderr == (f"error: nothing was submitted: cannot write the job registry {path}: No space left on "
                                 "device; free space there or set SLURMKIT_REGISTRY to a file elsewhere\n")
        assert path.read_bytes() == b""
    assert jobs_named(name) == []


def test_a_registry_write_that_comes_up_short_is_undone_and_the_job_id_still_printed_first(cluster, tmp_path, monkeypatch,
                                                                                           held_sbatch):
    """The disk fills between the intent and the id record; the id record is
    cut short after 10 bytes (tmpfs fills the file's last page, then has no page to give)."""
    with small_filesystem(cluster, "64k") as full:
        path = full / "jobs.jsonl"
        monkeypatch.setenv("SLURMKIT_REGISTRY", str(path))
        submit = start_cli("submit", write_spec(tmp_path, "short"), env={**held_sbatch.env, "SLURMKIT_REGISTRY": str(path)},
                           merged=True)
        job_id = held_sbatch.submitted()
        with open(path, "ab") as handle:   # blank lines (skipped by readers) up to 10 bytes before a page's end
            handle.write(b"\n" * (PAGE - 10 - path.stat().st_size % PAGE))
        before = path.read_bytes()
        fill(full)
        held_sbatch.release()
        code, lines = finish(submit)
        assert code == 1
        assert lines[0] == f"submitted job {job_id}; logs in {tmp_path}/logs"
        assert re.fullmatch(rf"error: job {job_id} was submitted but not recorded in {path}: short write \(10 of \d+ bytes\): "
                            r"No space left on device; free space there or set SLURMKIT_REGISTRY to a file elsewhere; once "
                            r"that is fixed, `slurmkit status` adopts it from its intent record", lines[1]), lines[1]
        assert path.read_bytes() == before   # the 10 bytes are gone again
        (full / "filler").unlink()
        status = run_cli("status")
        assert f"adopted job {job_id} (submitted by an interrupted slurmkit)" in status.stderr
        token = registry_lines(path)[0]["token"]
        assert recorded(path, token) == [job_id] and jobs_with_token(token) == [job_id]


def test_a_torn_last_line_hides_neither_the_job_before_it_nor_the_next(cluster, registry, tmp_path):
    first = re.search(r"submitted job (\d+)", run_cli("submit", write_spec(tmp_path, "before")).stdout).group(1)
    with open(registry, "a") as handle:
        handle.write('{"job_id": "99", "na')   # a crash mid-append: no newline
    second = re.search(r"submitted job (\d+)", run_cli("submit", write_spec(tmp_path, "after")).stdout).group(1)
    status = run_cli("status")
    assert status.returncode == 0
    assert [line.split("\t")[:2] for line in status.stdout.splitlines()] == [["job", "name"], [first, "before"], [second, "after"]]
    assert status.stderr == f"warning: {registry}: line 3 is not a slurmkit record and was skipped\n"
    assert registry.read_text().splitlines()[2] == '{"job_id": "99", "na'   # the next append began a line of its own
    assert [(entry.name, entry.job_id) for entry in all_records(registry)] == [("before", ""), ("before", first),
                                                                               ("after", ""), ("after", second)]


def test_lines_that_are_not_records_never_break_status_or_watch(cluster, registry, tmp_path):
    job_id = re.search(r"submitted job (\d+)", run_cli("submit", write_spec(tmp_path, "among")).stdout).group(1)
    good = registry.read_text().splitlines()[-1]
    with open(registry, "a") as handle:
        handle.write("[1,2]\n" + good.replace(f'"job_id": "{job_id}"', '"job_id": 12') + "\n\"text\"\n")
    warning = f"warning: {registry}: lines 3, 4, 5 are not slurmkit records and were skipped\n"
    status = run_cli("status")
    assert status.returncode == 0 and status.stderr == warning
    assert status.stdout.splitlines()[1].startswith(f"{job_id}\tamong\t")
    watch = run_cli("watch", job_id, "--interval", "1")
    assert watch.returncode == 0 and watch.stderr.count("warning:") == 1 and warning in watch.stderr
    assert re.search(rf"{job_id} COMPLETED exit 0", watch.stdout)


def test_a_read_only_registry_submits_nothing_and_status_still_reads_it(cluster, registry, tmp_path):
    registry.parent.mkdir(parents=True)
    registry.write_text("")
    name = unique("readonly")
    with immutable(registry):
        submit = run_cli("submit", write_spec(tmp_path, name))
        status = run_cli("status")
    assert (submit.returncode, submit.stdout) == (1, "")
    assert submit.stderr == (f"error: nothing was submitted: cannot write the job registry {registry}: Operation not "
                             "permitted; make it writable or set SLURMKIT_REGISTRY to a file you can write\n")
    assert (status.returncode, status.stdout) == (0, "no jobs submitted with slurmkit yet\n")
    assert jobs_named(name) == []


def test_a_registry_made_read_only_after_sbatch_prints_the_job_id_then_the_error(cluster, registry, tmp_path, held_sbatch):
    submit = start_cli("submit", write_spec(tmp_path, "rolate"), env=held_sbatch.env, merged=True)
    job_id = held_sbatch.submitted()
    with immutable(registry):
        held_sbatch.release()
        code, lines = finish(submit)
    assert code == 1 and lines[0].startswith(f"submitted job {job_id}; ")
    assert lines[1].startswith(f"error: job {job_id} was submitted but not recorded in {registry}: Operation not permitted; ")
    assert f"adopted job {job_id} (submitted by an interrupted slurmkit)" in run_cli("status").stderr


def test_a_registry_that_is_a_folder_is_one_line_for_submit_status_watch_and_logs(cluster, registry, tmp_path):
    registry.mkdir(parents=True)
    submit = run_cli("submit", write_spec(tmp_path, unique("folder")))
    assert (submit.returncode, submit.stdout) == (1, "")
    assert submit.stderr == (f"error: nothing was submitted: cannot write the job registry {registry}: it is a folder, "
                             "not a file; remove it or set SLURMKIT_REGISTRY to a file\n")
    for argv in (("status",), ("watch", "1"), ("logs", "1")):
        result = run_cli(*argv)
        assert (result.returncode, result.stderr) == (1, f"error: cannot read the job registry {registry}: it is a folder, "
                                                         "not a file; remove it or set SLURMKIT_REGISTRY to a file\n"), argv


def test_xdg_state_home_that_is_a_file_is_one_line_naming_the_registry(cluster, tmp_path, monkeypatch):
    monkeypatch.delenv("SLURMKIT_REGISTRY", raising=False)
    state = tmp_path / "state"
    state.write_text("not a folder")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    submit = run_cli("submit", write_spec(tmp_path, unique("xdg")))
    assert (submit.returncode, submit.stdout) == (1, "")
    assert submit.stderr == (f"error: nothing was submitted: cannot write the job registry {state}/slurmkit/jobs.jsonl: a "
                             "folder above it is a file, not a folder; point XDG_STATE_HOME or SLURMKIT_REGISTRY elsewhere\n")
    status = run_cli("status")
    assert status.returncode == 1 and status.stderr.startswith(f"error: cannot read the job registry {state}/slurmkit/jobs.jsonl: ")


def test_a_submit_killed_while_it_waits_for_the_lock_loses_no_job(cluster, registry, tmp_path, held_sbatch):
    """The lock is held when sbatch returns; the waiting slurmkit is killed."""
    submit = start_cli("submit", write_spec(tmp_path, "waiter"), env=held_sbatch.env)
    job_id = held_sbatch.submitted()
    with open(registry, "rb") as holder:
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX)
        held_sbatch.release()
        time.sleep(1.5)
        assert submit.poll() is None   # still waiting for the lock
        submit.send_signal(signal.SIGKILL)
        submit.wait(timeout=30)
    [entry] = all_records(registry)
    assert entry.job_id == ""   # only the intent
    status = run_cli("status")
    assert f"adopted job {job_id} (submitted by an interrupted slurmkit)" in status.stderr
    assert recorded(registry, entry.token) == [job_id] and jobs_with_token(entry.token) == [job_id]
