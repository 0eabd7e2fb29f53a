"""The registry's lock on a filesystem without flock: the lock folder beside the file
(core/lockfolder.py), its stale-lock rule, and the registry using it when flock fails with
ENOLCK. The fault itself (a preload library under the real CLI) is in tests/faults/test_no_flock.py."""

import errno
import json
import multiprocessing
import os
import socket
import subprocess
import sys
import time

import pytest

from slurmkit.core import lockfolder
from slurmkit.core.lockfolder import STALE_S, Busy, Owner, acquire, lock_folder, read_owner, release, stale
from slurmkit.slurm import registry
from slurmkit.slurm.registry import RegistryError, Submission, all_records, record, record_all

HERE = socket.gethostname()
NOW = 1_700_000_000.0


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def _owner(host=HERE, pid=None, age_s=1.0, nonce="n1") -> Owner:
    return Owner(host, os.getpid() if pid is None else pid, time.time() - age_s, nonce)


def _plant(lock, owner: Owner) -> None:
    """A lock as another slurmkit leaves it."""
    lock.mkdir()
    (lock / "owner").write_text(json.dumps(owner._asdict()) + "\n")


def _beside(folder):
    return sorted(os.listdir(folder))


@pytest.mark.parametrize("owner, alive, expected", [
    (None, True, False),                                                  # not slurmkit's folder: never broken
    (Owner(HERE, 123, NOW - 1, "n"), False, True),                        # its process is gone, here
    (Owner(HERE, 123, NOW - 1, "n"), True, False),                        # its process runs, here
    (Owner(HERE, 123, NOW - STALE_S - 1, "n"), True, True),               # held past the bound, even by a live one
    (Owner("elsewhere", 123, NOW - 1, "n"), False, False),                # another host's pid cannot be asked
    (Owner("elsewhere", 123, NOW - STALE_S + 5, "n"), False, False),      # ... so only its age counts
    (Owner("elsewhere", 123, NOW - STALE_S - 1, "n"), True, True),
    (Owner("elsewhere", 123, NOW + 600, "n"), True, False),               # a clock ahead of ours: not old
])
def test_the_stale_lock_rule(owner, alive, expected):
    assert stale(owner, NOW, HERE, lambda pid: alive) is expected


def test_a_lock_is_taken_and_given_back_leaving_nothing_beside_the_file(tmp_path):
    lock = lock_folder(tmp_path / "jobs.jsonl")
    mine = acquire(lock, 1.0)
    assert read_owner(lock) == mine and (mine.host, mine.pid) == (HERE, os.getpid())
    release(lock, mine)
    assert _beside(tmp_path) == []


def test_a_lock_held_by_a_live_process_is_waited_for_then_busy(tmp_path):
    lock = lock_folder(tmp_path / "jobs.jsonl")
    _plant(lock, _owner())
    started = time.monotonic()
    with pytest.raises(Busy) as busy:
        acquire(lock, 0.3)
    assert time.monotonic() - started >= 0.3 and busy.value.owner == _owner()._replace(since=busy.value.owner.since)
    assert _beside(tmp_path) == ["jobs.jsonl.lock"] and read_owner(lock).nonce == "n1"


def test_a_lock_of_a_process_that_is_gone_is_broken_and_taken(tmp_path):
    lock = lock_folder(tmp_path / "jobs.jsonl")
    _plant(lock, _owner(pid=_dead_pid()))
    mine = acquire(lock, 0.0)
    assert read_owner(lock) == mine
    release(lock, mine)
    assert _beside(tmp_path) == []


def test_a_lock_of_another_host_is_broken_only_past_the_bound(tmp_path):
    lock = lock_folder(tmp_path / "jobs.jsonl")
    _plant(lock, _owner(host="login2", pid=_dead_pid(), age_s=STALE_S - 30))
    with pytest.raises(Busy):
        acquire(lock, 0.1)
    (lock / "owner").write_text(json.dumps(_owner(host="login2", age_s=STALE_S + 1)._asdict()))
    mine = acquire(lock, 0.0)
    assert read_owner(lock) == mine


def test_a_folder_that_is_not_a_lock_is_never_broken(tmp_path):
    lock = lock_folder(tmp_path / "jobs.jsonl")
    lock.mkdir()
    (lock / "notes.txt").write_text("mine")
    os.utime(lock, (time.time() - 2 * STALE_S,) * 2)
    with pytest.raises(Busy) as busy:
        acquire(lock, 0.1)
    assert busy.value.owner is None and (lock / "notes.txt").read_text() == "mine"


def test_breaking_puts_back_a_lock_that_is_not_the_one_judged_stale(tmp_path):
    """Two processes judged one lock stale; the other broke it and took its own first."""
    lock = lock_folder(tmp_path / "jobs.jsonl")
    _plant(lock, _owner(nonce="theirs"))
    lockfolder._break(lock, _owner(pid=_dead_pid(), nonce="judged"))
    assert read_owner(lock).nonce == "theirs" and _beside(tmp_path) == ["jobs.jsonl.lock"]


def test_a_lock_broken_as_stale_is_not_given_back_by_its_old_owner(tmp_path):
    lock = lock_folder(tmp_path / "jobs.jsonl")
    mine = acquire(lock, 0.0)
    (lock / "owner").write_text(json.dumps(_owner(nonce="theirs")._asdict()))
    release(lock, mine)
    assert read_owner(lock).nonce == "theirs"


def test_folders_left_by_killed_processes_are_swept_by_the_next_taker(tmp_path):
    lock = lock_folder(tmp_path / "jobs.jsonl")
    _plant(tmp_path / ".jobs.jsonl.lock.dead", _owner(pid=_dead_pid()))
    _plant(tmp_path / ".jobs.jsonl.lock.live", _owner())            # a live process waiting with its lock prepared
    (tmp_path / ".jobs.jsonl.lock.ownerless").mkdir()                # killed between mkdir and its owner file
    os.utime(tmp_path / ".jobs.jsonl.lock.ownerless", (time.time() - 2 * STALE_S,) * 2)
    release(lock, acquire(lock, 0.0))
    assert _beside(tmp_path) == [".jobs.jsonl.lock.live"]


# --- the registry on a filesystem without flock -------------------------------------------------

def _no_flock(*args, code=errno.ENOLCK):
    raise OSError(code, os.strerror(code))


@pytest.fixture
def without_flock(monkeypatch):
    monkeypatch.setattr(registry.fcntl, "flock", _no_flock)
    monkeypatch.setattr(registry, "_without_flock", set())


def _job(job_id: str) -> Submission:
    return Submission(job_id=job_id, name="n", folder="/f", profile="local", submitted="2024-01-01T00:00:00+00:00")


@pytest.mark.parametrize("code", ["ENOLCK", "ENOSYS", "EOPNOTSUPP", "EINVAL"])
def test_the_registry_without_flock_takes_the_lock_folder_and_says_so_once(tmp_path, without_flock, capsys, monkeypatch, code):
    monkeypatch.setattr(registry.fcntl, "flock", lambda *args: _no_flock(code=getattr(errno, code)))
    path = tmp_path / "jobs.jsonl"
    record(_job("1"), path)
    record(_job("2"), path)
    assert [entry.job_id for entry in all_records(path)] == ["1", "2"]
    named = errno.errorcode[getattr(errno, code)]   # EOPNOTSUPP is ENOTSUP on Linux, named so
    assert capsys.readouterr().err == (f"slurmkit: the registry's filesystem has no flock ({named}); using a lock folder "
                                       f"beside it: {path}.lock\n")
    assert _beside(tmp_path) == ["jobs.jsonl"]


def test_the_registry_without_flock_keeps_its_bounded_wait(tmp_path, without_flock):
    path = tmp_path / "jobs.jsonl"
    path.write_text("")
    _plant(lock_folder(path), _owner())
    with pytest.raises(RegistryError, match=rf"^the job registry {path} stayed locked by another process for 0s \(its lock "
                                            rf"folder {path}.lock is held by pid {os.getpid()} on {HERE} since "):
        record(_job("1"), path, wait_s=0.2)
    assert path.read_text() == ""


def test_another_flock_error_is_one_registry_line(tmp_path, monkeypatch):
    def broken(*args):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(registry.fcntl, "flock", broken)
    with pytest.raises(RegistryError, match=f"^cannot lock the job registry {tmp_path}/jobs.jsonl: Input/output error; "):
        record(_job("1"), tmp_path / "jobs.jsonl")


def _numbered_appends(path: str, count: int) -> None:
    """``count`` appends, each numbered after the records it saw under the lock (slowly, so that
    two processes not excluded by the lock would see the same records and write the same number)."""
    registry.fcntl.flock = _no_flock   # this process's flock fails as the filesystem's would
    registry._without_flock.clear()

    def next_number(records):
        time.sleep(0.01)
        return [_job(str(len(records) + 1))]

    for _ in range(count):
        record_all([], registry.Path(path), unless=next_number)


def test_two_processes_appending_without_flock_each_land_whole_and_in_turn(tmp_path):
    path = tmp_path / "jobs.jsonl"
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_numbered_appends, args=(str(path), 15)) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [worker.exitcode for worker in workers] == [0, 0]
    lines = path.read_text().splitlines()
    assert [json.loads(line)["job_id"] for line in lines] == [str(n) for n in range(1, 31)]
    assert _beside(tmp_path) == ["jobs.jsonl"]
