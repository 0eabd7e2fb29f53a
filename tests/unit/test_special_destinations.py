"""Every writer of a destination the user names refuses one that is not a regular file (a folder,
for a folder destination): a named pipe, a socket, a device, a symbolic link, a folder where a
file is expected. One line naming the path, what it is and what to do; exit 2; nothing
written; the special file left as it was (as root, a device keeps its numbers: ``pack -o
/dev/full`` once replaced the machine's device with a regular file). The one check is
files.check_destination; the last test holds every writer to it."""

import ast
import os
import socket
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

import slurmkit
from slurmkit.cli.main import main
from slurmkit.slurm import registry

from .test_gpu_use import SPEC, job41  # noqa: F401 (fixture)
from .test_hostile_input import cli, folders, measured, refused  # noqa: F401 (fixture)
from .test_hostile_output import PORTABLE_SPEC

FULL = os.makedev(1, 7)   # /dev/full's numbers
NOT_REGULAR = "slurmkit replaces only regular files; remove it or name another file"
WHAT = {"fifo": "a named pipe", "socket": "a socket", "device": "a character device"}


def make(path: Path, kind: str):
    """Put a ``kind`` at ``path``; return a check that it is still there, unchanged."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(path))
    elif kind == "device":
        if os.geteuid() != 0:
            pytest.skip("only root makes a device node")
        os.mknod(path, 0o600 | stat.S_IFCHR, FULL)
    elif kind == "symlink":
        (path.parent / "elsewhere").write_text("kept\n")
        path.symlink_to("elsewhere")
    elif kind == "folder":
        path.mkdir()
    status = os.lstat(path)

    def unchanged() -> None:
        now = os.lstat(path)
        assert (stat.S_IFMT(now.st_mode), now.st_rdev, now.st_ino) == (stat.S_IFMT(status.st_mode), status.st_rdev, status.st_ino)
        if kind == "symlink":
            assert os.readlink(path) == "elsewhere" and (path.parent / "elsewhere").read_text() == "kept\n"
    return unchanged


def file_refusal(name: str, kind: str) -> str:
    if kind == "symlink":
        return f"{name}: a symbolic link: slurmkit does not write through links; remove it or name another file"
    if kind == "folder":
        return f"{name}: a folder: name a file"
    return f"{name}: not a regular file ({WHAT[kind]}): {NOT_REGULAR}"


def folder_refusal(name: str, kind: str) -> str:
    if kind == "symlink":
        return f"{name}: a symbolic link: slurmkit does not write through links; remove it or name another folder"
    return f"{name}: not a folder ({WHAT[kind]}): name a folder"


# --------------------------------------------------------------------------------------- pack -o

@pytest.mark.parametrize("output, occupied, kind", [
    *[("out.tar", "out.tar", kind) for kind in ("fifo", "socket", "device", "symlink", "folder")],
    *[("out.tar", "out.tar.manifest.json", kind) for kind in ("fifo", "device", "symlink")],   # refused before packing
    *[("out.pack", "out.pack", kind) for kind in ("fifo", "device", "symlink")],                # a folder of shards
])
def test_pack_o_refuses_a_destination_that_is_not_what_it_writes(folders, output, occupied, kind):
    work, home = folders
    (work / "data").mkdir()
    (work / "data" / "a.bin").write_bytes(bytes(range(256)) * 8)
    unchanged = make(work / occupied, kind)
    expected = folder_refusal(occupied, kind) if output.endswith(".pack") else file_refusal(occupied, kind)
    refused(work, home, cli("pack", "data", "-o", output, "--compression", "none"), expected)
    unchanged()


# ------------------------------------------------------------------------------ port -o, import -o

def _port_or_import(work: Path, command: str):
    (work / "job.yaml").write_text(PORTABLE_SPEC)
    (work / "old.sh").write_text("#!/bin/bash\n#SBATCH --time=1:00:00\npython run.py\n")
    return ["port", "job.yaml", "--to", "fir"] if command == "port" else ["import", "old.sh"]


@pytest.mark.parametrize("command", ["port", "import"])
@pytest.mark.parametrize("kind", ["fifo", "socket", "device"])
def test_port_and_import_o_refuse_a_special_file_with_or_without_force(folders, command, kind):
    work, home = folders
    args = _port_or_import(work, command)
    unchanged = make(work / "out", kind)
    for force in ([], ["--force"]):
        refused(work, home, cli(*args, "-o", "out", *force), file_refusal("out", kind))
        unchanged()


@pytest.mark.parametrize("command", ["port", "import"])
def test_port_and_import_o_leave_a_link_alone_without_force(folders, command):
    work, home = folders
    args = _port_or_import(work, command)
    unchanged = make(work / "out", "symlink")
    refused(work, home, cli(*args, "-o", "out"), "out already exists; use --force to overwrite")
    unchanged()


# ------------------------------------------------------------------------------------------- new

NEW = ("new", "myjob", "--yes", "--profile", "nibi", "--account", "def-x", "--time", "1h", "--command", "python a.py")


@pytest.mark.parametrize("kind", ["fifo", "socket", "device"])
@pytest.mark.parametrize("name", ["job.yaml", "job.sbatch"])
def test_new_refuses_a_special_file_in_the_way_with_or_without_force_and_writes_nothing(folders, kind, name):
    work, home = folders
    (work / "myjob").mkdir()
    unchanged = make(work / "myjob" / name, kind)
    for force in ([], ["--force"]):
        refused(work, home, cli(*NEW, *force), file_refusal(f"myjob/{name}", kind))
        unchanged()


@pytest.mark.parametrize("kind", ["fifo", "device", "symlink"])
def test_new_refuses_a_job_folder_that_is_not_a_folder(folders, kind):
    work, home = folders
    unchanged = make(work / "myjob", kind)
    refused(work, home, cli(*NEW, "--force"), folder_refusal("myjob", kind))
    unchanged()


# ------------------------------------------------------------------------------------------ fetch

@pytest.mark.parametrize("kind", ["fifo", "socket", "device", "symlink"])
def test_fetch_refuses_a_destination_that_is_not_a_folder_before_it_connects(folders, kind, monkeypatch):
    work, home = folders
    path = home / "jobs.jsonl"
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(path))
    registry.record(registry.Submission(job_id="77", name="far", folder="/scratch/me/far/logs", profile="fir",
                                        submitted="2026-11-26T20:00:00+00:00", remote="me@fir.example"))
    if kind == "symlink":   # a link to a folder: rsync would write through it
        (work / "elsewhere").mkdir()
        (work / "results").symlink_to("elsewhere")
    else:
        unchanged = make(work / "results", kind)
    refused(work, home, cli("fetch", "77", "--to", "results"), folder_refusal("results", kind))
    if kind == "symlink":
        assert os.readlink(work / "results") == "elsewhere" and os.listdir(work / "elsewhere") == []
    else:
        unchanged()


# ------------------------------------------------------------------------------- report --apply

def test_report_apply_refuses_a_spec_that_is_a_link_before_it_asks(job41):
    real = job41.with_name("real.yaml")
    job41.rename(real)
    job41.symlink_to(real.name)
    result = CliRunner().invoke(main, ["report", "41", "--apply", "--yes"])
    assert result.exit_code == 2 and "---" not in result.output   # no diff shown: nothing it could write
    assert result.output.splitlines()[-1] == (f"error: {job41}: a symbolic link: slurmkit does not write through links; "
                                              "remove it or name another file")
    assert os.readlink(job41) == real.name and real.read_text() == SPEC


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_report_apply_refuses_a_spec_that_is_a_special_file(job41, kind):
    target = job41.with_name("special.yaml")
    unchanged = make(target, kind)
    result = CliRunner().invoke(main, ["report", "41", "--apply", str(target), "--yes"])
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == f"error: {target}: cannot read it: not a regular file ({WHAT[kind]})"
    unchanged()


# ---------------------------------------------------------------------- no writer goes around it

#: the functions that write a file of a path slurmkit names itself, not the user (its registry,
#: a job's logs folder, temporary names beside a destination already checked), each with why.
#: Any other function that writes a file calls files.check_destination (or writes with
#: files.write_atomic, which does): a new writer is caught here until it does.
OWN_PATHS = {
    ("slurmkit.core.files", "write_atomic"): "the shared writer: it calls check_destination",
    ("slurmkit.core.lockfolder", "_prepare"): "the registry's lock folder, made under a hidden name beside it ...",
    ("slurmkit.core.lockfolder", "_renamed_in"): "... renamed into place ...",
    ("slurmkit.core.lockfolder", "_break"): "... moved away when stale ...",
    ("slurmkit.core.lockfolder", "release"): "... and when given back",
    ("slurmkit.slurm.registry", "_open_for_append"): "the registry: checked to be a regular file once open",
    ("slurmkit.slurm.submit", "_keep_script"): "the job's own script, renamed in its logs folder",
    ("slurmkit.resolve.staging", "_tar"): "the file list of a shard, beside the temporary pack",
    ("slurmkit.spec.schemas", "write"): "the shipped JSON schemas, into the package (docs/gen.py)",
    ("slurmkit.slurm.remote", "copy_gpu_samples"): "GPU samples, into slurmkit's own cache folder",
    ("slurmkit.build.envbuild", "_build_at"): "a build's own lock and marker files, inside the environment it makes",
    ("slurmkit.build.sources", "_fetch"): "a build's fetched source: its lock, and its .partial folder renamed into the build cache",
    ("slurmkit.build.sources", "_change_archive"): "... the archive changed inside that .partial folder",
    ("slurmkit.port.verify", "trace"): "the traced script, in the temporary folder the trace makes for itself",
    ("slurmkit.slurm.raised", "carrying"): "what a function job raised, on its node, beside submitit's result in the job's folder",
    ("slurmkit.slurm.raised", "call"): "... (the wrapper carrying() returns, which writes it)",
    ("slurmkit.slurm.rerun", "copy_calls"): "a rerun's pickled calls, under the new job's id in the function array's folder",
    ("slurmkit.port.verify", "_lay_out"): "the trace's stand-ins and the user's files it stands in for, in that folder",
    ("slurmkit.port.tracerecord", "log"): "the trace's log, in that folder",
    ("slurmkit.port.tracerecord", "write_outputs"): "what the program stands for writing, in that folder",
    ("slurmkit.port.tracerecord", "make"): "a user's file the trace stands in for, in that folder",
    ("slurmkit.port.tracerecord", "mktemp"): "mktemp's file, in that folder",
}


def _writes(function: ast.AST) -> bool:
    """Does this function write a file by a direct call (os.replace, Path.write_text, open(..., "w"), O_CREAT)?"""
    for node in ast.walk(function):
        if isinstance(node, ast.Attribute) and node.attr in ("write_text", "write_bytes", "O_CREAT", "copyfile", "copy2"):
            return True
        if isinstance(node, ast.Attribute) and node.attr in ("replace", "rename") and isinstance(node.value, ast.Name) \
                and node.value.id == "os":
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open" and any(
                isinstance(arg, ast.Constant) and isinstance(arg.value, str) and set(arg.value) & set("wax+")
                for arg in node.args[1:2]):
            return True
    return False


def test_every_writer_of_a_users_path_checks_it_with_the_shared_function():
    root = Path(slurmkit.__file__).parent
    unchecked = []
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _writes(node) \
                    and "check_destination(" not in ast.unparse(node) and (module, node.name) not in OWN_PATHS:
                unchecked.append(f"{module}.{node.name}")
    assert unchecked == [], ("these write a file without files.check_destination (or files.write_atomic): call it, or "
                             f"add them to OWN_PATHS with why the path is slurmkit's own: {unchecked}")
