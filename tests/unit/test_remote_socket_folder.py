"""The folder of ssh's control sockets (remote.control_folder): made by slurmkit with mkdir,
checked with lstat, never followed through a link nor chmodded through one.

``/tmp`` is shared by every user of a login node, so another user may have put a link (or a
folder of theirs) at ``/tmp/slurmkit-<uid>`` before slurmkit ran: what is there is refused in
one line, and nothing is changed through it. The shared folder is this test's own
(``remote.SHARED_TMP``), so that no real ``/tmp/slurmkit-<uid>`` is touched.
"""

import os
import stat
import tempfile
from pathlib import Path

import pytest

from slurmkit.slurm import remote as remote_mod
from slurmkit.slurm.remote import Connection, Remote, RemoteError, control_folder

REMOTE = Remote(name="fir", host="fir.example", user="me", root="/r")


@pytest.fixture
def shared_tmp(monkeypatch):
    """A stand-in for /tmp (short: a socket name must fit 108 bytes); XDG_RUNTIME_DIR unset."""
    folder = Path(tempfile.mkdtemp(prefix="skt-", dir="/tmp"))
    monkeypatch.setattr(remote_mod, "SHARED_TMP", str(folder))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    yield folder
    for path in sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()
    folder.rmdir()


def sockets_of(shared_tmp: Path) -> Path:
    return shared_tmp / f"slurmkit-{os.getuid()}"


def refused(match: str) -> str:
    with pytest.raises(RemoteError, match=match) as raised:
        Connection(REMOTE)
    assert "\n" not in raised.value.message
    return raised.value.message


def test_a_fresh_folder_is_made_private_and_a_correct_one_reused(shared_tmp):
    folder = control_folder()
    assert folder == sockets_of(shared_tmp)
    info = os.lstat(folder)
    assert stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.getuid()
    (folder / "a-socket-of-before").touch()
    assert control_folder() == folder and os.lstat(folder).st_ino == info.st_ino   # reused, not made again
    assert (folder / "a-socket-of-before").exists()


def test_a_symlink_to_a_folder_of_ours_is_refused_and_the_folder_left_untouched(shared_tmp):
    ours = shared_tmp / "elsewhere"
    ours.mkdir(mode=0o755)
    ours.chmod(0o755)
    sockets_of(shared_tmp).symlink_to(ours)
    message = refused("is a symbolic link")
    assert message.startswith(f"{sockets_of(shared_tmp)} (the folder of ssh's control sockets) is a symbolic link")
    assert "XDG_RUNTIME_DIR" in message
    assert stat.S_IMODE(ours.stat().st_mode) == 0o755 and list(ours.iterdir()) == []   # no chmod, no sockets through it


def test_a_dangling_symlink_is_one_line_not_a_traceback(shared_tmp):
    sockets_of(shared_tmp).symlink_to(shared_tmp / "nothing-here")
    refused("is a symbolic link")
    assert not (shared_tmp / "nothing-here").exists()


def test_a_dangling_symlink_through_the_cli_is_one_line_exit_1(shared_tmp, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from slurmkit.cli.main import main

    sockets_of(shared_tmp).symlink_to(shared_tmp / "nothing-here")
    config = tmp_path / "config" / "slurmkit"
    config.mkdir(parents=True)
    (config / "remote.yaml").write_text("clusters: {local: {host: far.example}}\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "jobs.jsonl"))
    result = CliRunner().invoke(main, ["status", "--remote", "local"])
    assert result.exit_code == 1, result.output
    assert result.output.count("\n") == 1 and result.output.startswith(f"error: {sockets_of(shared_tmp)} (the folder")
    assert "Traceback" not in result.output


@pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user needs root")
def test_a_folder_owned_by_another_user_is_refused_and_left_as_it_is(shared_tmp):
    theirs = sockets_of(shared_tmp)
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 65534, 65534)
    message = refused("belongs to another user")
    assert "uid 65534" in message and "XDG_RUNTIME_DIR" in message
    info = os.lstat(theirs)
    assert info.st_uid == 65534 and stat.S_IMODE(info.st_mode) == 0o700 and list(theirs.iterdir()) == []


def test_a_file_in_the_way_is_refused(shared_tmp):
    sockets_of(shared_tmp).write_text("not a folder")
    refused("is not a folder")
    assert sockets_of(shared_tmp).read_text() == "not a folder"


def test_a_folder_of_ours_open_to_others_is_made_private_again(shared_tmp):
    folder = sockets_of(shared_tmp)
    folder.mkdir()
    folder.chmod(0o777)
    assert control_folder() == folder and stat.S_IMODE(os.lstat(folder).st_mode) == 0o700


def test_the_runtime_folders_slurmkit_gets_the_same_checks(shared_tmp, monkeypatch):
    runtime = shared_tmp / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert control_folder() == runtime / "slurmkit"
    (runtime / "slurmkit").rmdir()
    ours = shared_tmp / "elsewhere"
    ours.mkdir(mode=0o755)
    ours.chmod(0o755)
    (runtime / "slurmkit").symlink_to(ours)
    refused(f"^{runtime}/slurmkit .* is a symbolic link")
    assert stat.S_IMODE(ours.stat().st_mode) == 0o755 and list(ours.iterdir()) == []
    assert not sockets_of(shared_tmp).exists()      # a refused runtime folder is not swapped for /tmp's silently
